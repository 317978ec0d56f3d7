package dev.sluice.connector.postgres;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.util.List;
import java.util.function.IntFunction;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Writes rows of Arrow vectors into {@link CopyRows}, in COPY's binary format when every column
 * has a plain binary form that the table's column takes ({@link CopyBinary}, chosen with {@link
 * #useBinary}), else as lines of text: each written column's value in the text form {@link
 * PgTypes#text} gives it, tab-separated. Integers, floats, booleans, UTF-8 strings, dates and
 * timestamps are written straight from the vectors, without a String per value (the sink's hot
 * path); every other type goes through {@link PgTypes#text}.
 */
final class CopyEncoder {

    /** Writes one non-null value of a bound vector. */
    interface ValueWriter {
        void write(int row, CopyRows out);
    }

    /**
     * A value no PostgreSQL column of its type can take, found while encoding (a timestamp or
     * interval past 64 bits of microseconds, a time of day past midnight): the row is refused like
     * one the table refuses, never written as another value.
     */
    static final class UnwritableValue extends IllegalArgumentException {
        final String column;
        final String reason;

        UnwritableValue(Field field, RuntimeException cause) {
            this(field.getName(), "out of range for " + PgTypes.pgType(field) + " (" + cause.getMessage() + ")", cause);
        }

        /** Text for a {@code numeric(p,s)} column with more decimal places than s, which the server would round. */
        static UnwritableValue rounded(Field field, int scale) {
            return new UnwritableValue(
                    field.getName(),
                    "more than " + scale + " decimal places, which the column's numeric(p," + scale
                            + ") would round away; round or CAST it in the query",
                    null);
        }

        private UnwritableValue(String column, String reason, RuntimeException cause) {
            super("column " + column + ": " + reason, cause);
            this.column = column;
            this.reason = reason;
        }
    }

    private final int[] inputIndex;
    private final boolean[] isKey;
    /** Each column's binary form; null: the rows are text. */
    private CopyBinary.Form[] forms;
    /** Per column, the scale of the numeric(p,s) column its text goes into, or -1 (see {@link #limitTextScales}). */
    private int[] textScales;

    private FieldVector[] vectors;
    private ValueWriter[] writers;

    /**
     * @param inputIndex the written columns' indexes in the input
     * @param keyColumns the key's columns, as indexes into the written columns
     */
    CopyEncoder(List<Integer> inputIndex, int[] keyColumns) {
        this.inputIndex = inputIndex.stream().mapToInt(Integer::intValue).toArray();
        this.isKey = new boolean[this.inputIndex.length];
        for (int k : keyColumns) {
            isKey[k] = true;
        }
    }

    /** Writes the binary forms {@code forms} (one per written column), or text when null. */
    void useBinary(CopyBinary.Form[] forms) {
        this.forms = forms == null ? null : forms.clone();
    }

    /**
     * Text values for {@code numeric(p,s)} columns ({@code scales[c] >= 0}) are checked to have at
     * most s decimal places: the server parses them and rounds the rest without a word (1.25 into
     * numeric(6,1) became 1.3). Such a value is refused as {@link UnwritableValue}.
     */
    void limitTextScales(int[] scales) {
        this.textScales = scales.clone();
    }

    boolean binary() {
        return forms != null;
    }

    /** Empty rows in this encoder's format. */
    CopyRows newRows() {
        return new CopyRows(binary());
    }

    /** Takes the vectors of a batch; {@link #append} then writes its rows. */
    void bind(VectorSchemaRoot root) {
        List<FieldVector> all = root.getFieldVectors();
        vectors = new FieldVector[inputIndex.length];
        writers = new ValueWriter[inputIndex.length];
        for (int c = 0; c < inputIndex.length; c++) {
            vectors[c] = all.get(inputIndex[c]);
            int scale = textScales == null ? -1 : textScales[c];
            writers[c] = forms != null
                    ? CopyBinary.writer(vectors[c], forms[c])
                    : scale >= 0 && vectors[c] instanceof VarCharVector text
                            ? numericText(text, scale)
                            : writer(vectors[c]);
        }
    }

    /** Whether a key column of {@code row} is null (such a row cannot be written). */
    boolean keyIsNull(int row) {
        for (int c = 0; c < vectors.length; c++) {
            if (isKey[c] && vectors[c].isNull(row)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Appends {@code row}: one line, or one tuple. Throws {@link UnwritableValue} with nothing of
     * the row appended when one of its values cannot be written.
     */
    void append(int row, byte op, long position, CopyRows out) {
        if (forms != null) {
            appendBinary(row, op, position, out);
            return;
        }
        int rowStart = out.mark();
        long keyHash = 0x9E3779B97F4A7C15L;
        for (int c = 0; c < vectors.length; c++) {
            if (c > 0) {
                out.put((byte) '\t');
            }
            int start = out.mark();
            if (vectors[c].isNull(row)) {
                out.put((byte) '\\');
                out.put((byte) 'N');
            } else {
                write(c, row, out, rowStart);
            }
            if (isKey[c]) {
                keyHash = hash(keyHash, out.bytes(), start, out.mark());
            }
        }
        out.put((byte) '\n');
        out.endRow(op, position, keyHash);
    }

    private void appendBinary(int row, byte op, long position, CopyRows out) {
        int rowStart = out.mark();
        long keyHash = 0x9E3779B97F4A7C15L;
        out.putInt16(vectors.length);
        for (int c = 0; c < vectors.length; c++) {
            int start = out.mark();
            if (vectors[c].isNull(row)) {
                out.putInt32(-1);
            } else {
                out.putInt32(0); // the length, set once the value is written
                write(c, row, out, rowStart);
                out.setInt32(start, out.mark() - start - 4);
            }
            if (isKey[c]) {
                keyHash = hash(keyHash, out.bytes(), start, out.mark());
            }
        }
        out.endRow(op, position, keyHash);
    }

    private void write(int column, int row, CopyRows out, int rowStart) {
        try {
            writers[column].write(row, out);
        } catch (ArithmeticException | DateTimeException e) {
            out.resetTo(rowStart);
            throw new UnwritableValue(vectors[column].getField(), e);
        } catch (UnwritableValue e) {
            out.resetTo(rowStart);
            throw e;
        }
    }

    /** Text into a numeric(p,{@code scale}) column, refused when it has more decimal places. */
    private static ValueWriter numericText(VarCharVector v, int scale) {
        return (row, out) -> {
            int start = v.getStartOffset(row);
            int length = v.getEndOffset(row) - start;
            String text = new String(v.get(row), StandardCharsets.UTF_8);
            BigDecimal value;
            try {
                value = new BigDecimal(text.strip());
            } catch (NumberFormatException e) {
                value = null; // NaN, Infinity or no number: the server takes or refuses it
            }
            if (value != null && value.stripTrailingZeros().scale() > scale) {
                throw UnwritableValue.rounded(v.getField(), scale);
            }
            out.putEscaped(v.getDataBuffer(), start, length);
        };
    }

    /** The values of a row this encoder wrote, as text (null for SQL NULL), for messages. */
    String[] written(CopyRows rows, int row) {
        if (!rows.binary()) {
            return rows.textValues(row);
        }
        byte[] data = rows.bytes();
        int at = rows.rowStart(row) + 2;
        String[] values = new String[forms.length];
        for (int c = 0; c < forms.length; c++) {
            int length = CopyBinary.int32(data, at);
            at += 4;
            if (length >= 0) {
                values[c] = CopyBinary.text(forms[c], data, at, length);
                at += length;
            }
        }
        return values;
    }

    /**
     * Row {@code row}'s values as text, null for SQL NULL (for messages about a row never written);
     * a value with no text form ({@link UnwritableValue}) as Arrow Java shows it.
     */
    String[] values(int row) {
        String[] values = new String[vectors.length];
        for (int c = 0; c < vectors.length; c++) {
            try {
                values[c] = PgTypes.text(vectors[c]).apply(row);
            } catch (ArithmeticException | DateTimeException e) {
                values[c] = String.valueOf(vectors[c].getObject(row));
            }
        }
        return values;
    }

    private static long hash(long seed, byte[] bytes, int from, int to) {
        long h = seed;
        for (int i = from; i < to; i++) {
            h = (h ^ bytes[i]) * 0x100000001B3L;
        }
        // A separator, so (ab, c) and (a, bc) differ; then spread the bits.
        h = (h ^ 0xFF) * 0x100000001B3L;
        return h ^ (h >>> 29);
    }

    private static ValueWriter writer(FieldVector vector) {
        return switch (vector) {
            case UInt8Vector v -> (row, out) -> out.putAscii(Long.toUnsignedString(v.get(row)));
            case BaseIntVector v -> (row, out) -> out.putLong(v.getValueAsLong(row));
            case Float8Vector v ->
                (row, out) -> {
                    double d = v.get(row);
                    if (!putPlainDouble(d, out)) {
                        out.putAscii(Double.toString(d));
                    }
                };
            case Float4Vector v -> (row, out) -> out.putAscii(Float.toString(v.get(row)));
            case BitVector v -> (row, out) -> out.put(v.get(row) != 0 ? (byte) 't' : (byte) 'f');
            case VarCharVector v ->
                (row, out) -> {
                    int start = v.getStartOffset(row);
                    out.putEscaped(v.getDataBuffer(), start, v.getEndOffset(row) - start);
                };
            case DateDayVector v ->
                (row, out) -> {
                    long day = v.get(row);
                    if (!putDate(day, out)) {
                        out.putAscii(PgTypes.date(day));
                    }
                };
            case TimeStampVector v -> timestamp(v);
            default -> {
                IntFunction<String> text = PgTypes.text(vector);
                yield (row, out) -> out.putEscaped(text.apply(row));
            }
        };
    }

    /**
     * Writes {@code d} exactly as {@link Double#toString} does when it is zero or has at most three
     * decimals and 10⁻³ ≤ |d| < 10⁷ (prices, amounts, whole numbers: Java's plain notation), without
     * a String; false (nothing written) otherwise. The decimal m/1000 that divides back to d is
     * the shortest that rounds to d: another within d's rounding interval (under 2·10⁻⁹ wide
     * here) with no more digits would be a multiple of 10⁻⁴ too, so the same number.
     */
    static boolean putPlainDouble(double d, CopyRows out) {
        double magnitude = Math.abs(d);
        if (magnitude == 0) {
            out.putAscii(Double.doubleToRawLongBits(d) < 0 ? "-0.0" : "0.0");
            return true;
        }
        if (!(magnitude >= 1e-3 && magnitude < 1e7)) {
            return false; // also NaN
        }
        long thousandths = (long) Math.rint(magnitude * 1000);
        if ((double) thousandths / 1000 != magnitude) {
            return false;
        }
        if (d < 0) {
            out.put((byte) '-');
        }
        out.putLong(thousandths / 1000);
        out.put((byte) '.');
        long fraction = thousandths % 1000;
        int digits = 3;
        while (digits > 1 && fraction % 10 == 0) {
            fraction /= 10;
            digits--;
        }
        out.putDigits(fraction, digits);
        return true;
    }

    /**
     * A timestamp as {@link PgTypes#timestamp} writes it (what {@link PgTypes#text} gives):
     * seconds only when not zero, fractions in groups of three digits; {@code +00} for a column
     * with a zone (the values are UTC). Years outside 1–9999 are left to {@link PgTypes#timestamp}.
     */
    private static ValueWriter timestamp(TimeStampVector v) {
        ArrowType.Timestamp type = (ArrowType.Timestamp) v.getField().getType();
        boolean zoned = type.getTimezone() != null;
        TimeUnit unit = type.getUnit();
        return (row, out) -> {
            long micros = PgTypes.micros(v.get(row), unit);
            long day = Math.floorDiv(micros, 86_400_000_000L);
            long ofDay = Math.floorMod(micros, 86_400_000_000L);
            if (!putDate(day, out)) {
                out.putAscii(PgTypes.timestamp(micros, zoned));
                return;
            }
            long seconds = ofDay / 1_000_000L;
            long fraction = ofDay % 1_000_000L;
            out.put((byte) 'T');
            out.putDigits(seconds / 3600, 2);
            out.put((byte) ':');
            out.putDigits(seconds / 60 % 60, 2);
            if (seconds % 60 != 0 || fraction != 0) {
                out.put((byte) ':');
                out.putDigits(seconds % 60, 2);
                if (fraction != 0) {
                    out.put((byte) '.');
                    if (fraction % 1000 == 0) {
                        out.putDigits(fraction / 1000, 3);
                    } else {
                        out.putDigits(fraction, 6);
                    }
                }
            }
            if (zoned) {
                out.putAscii("+00");
            }
        };
    }

    /**
     * The date {@code day} days after 1970-01-01 as {@code yyyy-MM-dd}, for years 1 to 9999; false
     * (nothing written) outside them, which {@link PgTypes#date} writes. Civil-from-days after
     * Howard Hinnant's public-domain algorithm.
     */
    private static boolean putDate(long day, CopyRows out) {
        long z = day + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long dayOfEra = z - era * 146_097;
        long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        long mp = (5 * dayOfYear + 2) / 153;
        long dayOfMonth = dayOfYear - (153 * mp + 2) / 5 + 1;
        long month = mp < 10 ? mp + 3 : mp - 9;
        long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
        if (year < 1 || year > 9999) {
            return false;
        }
        out.putDigits(year, 4);
        out.put((byte) '-');
        out.putDigits(month, 2);
        out.put((byte) '-');
        out.putDigits(dayOfMonth, 2);
        return true;
    }
}
