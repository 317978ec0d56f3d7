package dev.sluice.connector.postgres;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.BaseListVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Arrow types → PostgreSQL column types, and Arrow values → their PostgreSQL text form (what
 * COPY's text format and the type's input function read). Lists of scalars become arrays; lists
 * of lists, structs and maps become {@code jsonb}.
 */
final class PgTypes {

    private PgTypes() {}

    /** The PostgreSQL type a column of {@code field} is written as, e.g. {@code numeric(10,2)}. */
    static String pgType(Field field) {
        ArrowType type = field.getType();
        return switch (type) {
            case ArrowType.Int i
            when i.getIsSigned() ->
                switch (i.getBitWidth()) {
                    case 8, 16 -> "smallint";
                    case 32 -> "integer";
                    default -> "bigint";
                };
            case ArrowType.Int i ->
                switch (i.getBitWidth()) {
                    case 8 -> "smallint";
                    case 16 -> "integer";
                    case 32 -> "bigint";
                    default -> "numeric(20,0)";
                };
            case ArrowType.FloatingPoint f ->
                switch (f.getPrecision()) {
                    case HALF, SINGLE -> "real";
                    case DOUBLE -> "double precision";
                };
            case ArrowType.Decimal d -> "numeric(" + d.getPrecision() + "," + d.getScale() + ")";
            case ArrowType.Bool b -> "boolean";
            case ArrowType.Utf8 u -> "text";
            case ArrowType.LargeUtf8 u -> "text";
            case ArrowType.Utf8View u -> "text";
            case ArrowType.Null n -> "text";
            case ArrowType.Binary b -> "bytea";
            case ArrowType.LargeBinary b -> "bytea";
            case ArrowType.BinaryView b -> "bytea";
            case ArrowType.FixedSizeBinary b -> "bytea";
            case ArrowType.Date d -> "date";
            case ArrowType.Timestamp t -> t.getTimezone() == null ? "timestamp" : "timestamptz";
            case ArrowType.Time t -> "time";
            case ArrowType.Duration d -> "interval";
            case ArrowType.List l -> arrayOrJson(field);
            case ArrowType.LargeList l -> arrayOrJson(field);
            case ArrowType.FixedSizeList l -> arrayOrJson(field);
            case ArrowType.Struct s -> "jsonb";
            case ArrowType.Map m -> "jsonb";
            default ->
                throw new IllegalArgumentException("column '" + field.getName() + "' has Arrow type " + type
                        + ", which the postgres sink cannot write");
        };
    }

    private static String arrayOrJson(Field list) {
        Field element = list.getChildren().get(0);
        String inner = pgType(element);
        // PostgreSQL arrays are flat and typed: nested lists and lists of jsonb go as jsonb.
        return inner.endsWith("[]") || inner.equals("jsonb") ? "jsonb" : inner + "[]";
    }

    /**
     * The text form of each row of {@code vector} for a column of type {@link #pgType}, or null for
     * SQL NULL. Made once per batch and column.
     */
    static IntFunction<String> text(FieldVector vector) {
        String pg = pgType(vector.getField());
        if (pg.equals("jsonb")) {
            return row -> vector.isNull(row) ? null : json(vector, row);
        }
        if (pg.endsWith("[]")) {
            BaseListVector list = (BaseListVector) vector;
            FieldVector child = (FieldVector) list.getChildrenFromFields().get(0);
            IntFunction<String> element = text(child);
            return row -> vector.isNull(row) ? null : array(vector, row, element);
        }
        IntFunction<String> scalar = scalar(vector);
        return row -> vector.isNull(row) ? null : scalar.apply(row);
    }

    /** A scalar's text form (the row is not null). */
    private static IntFunction<String> scalar(ValueVector vector) {
        return switch (vector) {
            case UInt8Vector v -> row -> Long.toUnsignedString(v.get(row));
            case BaseIntVector v -> row -> Long.toString(v.getValueAsLong(row));
            case Float2Vector v -> row -> Float.toString(v.getValueAsFloat(row));
            case Float4Vector v -> row -> Float.toString(v.get(row));
            case Float8Vector v -> row -> Double.toString(v.get(row));
            case BitVector v -> row -> v.get(row) != 0 ? "t" : "f";
            case DateDayVector v -> row -> date(v.get(row));
            case DateMilliVector v -> row -> date(Math.floorDiv(v.get(row), 86_400_000L));
            case TimeStampVector v -> timestamp(v);
            case TimeSecVector v -> row -> LocalTime.ofSecondOfDay(v.get(row)).toString();
            case TimeMilliVector v ->
                row -> LocalTime.ofNanoOfDay(v.get(row) * 1_000_000L).toString();
            case TimeMicroVector v ->
                row -> LocalTime.ofNanoOfDay(Math.multiplyExact(v.get(row), 1_000L))
                        .toString();
            // Cut to the microsecond PostgreSQL keeps, as timestamps are (it would round).
            case TimeNanoVector v ->
                row -> LocalTime.ofNanoOfDay(v.get(row) / 1_000L * 1_000L).toString();
            case DurationVector v ->
                row -> durationMicros(DurationVector.get(v.getDataBuffer(), row), v.getUnit()) + " microseconds";
            default -> {
                ArrowType type = vector.getField().getType();
                if (type instanceof ArrowType.Decimal) {
                    yield row -> ((BigDecimal) vector.getObject(row)).toPlainString();
                }
                if (type instanceof ArrowType.Utf8
                        || type instanceof ArrowType.LargeUtf8
                        || type instanceof ArrowType.Utf8View) {
                    yield row -> vector.getObject(row).toString();
                }
                if (type instanceof ArrowType.Binary
                        || type instanceof ArrowType.LargeBinary
                        || type instanceof ArrowType.BinaryView
                        || type instanceof ArrowType.FixedSizeBinary) {
                    yield row -> "\\x" + HexFormat.of().formatHex((byte[]) vector.getObject(row));
                }
                if (type instanceof ArrowType.Null) {
                    yield row -> null;
                }
                throw new IllegalArgumentException(
                        "column '" + vector.getField().getName() + "' has Arrow type " + type
                                + ", which the postgres sink cannot write");
            }
        };
    }

    /**
     * A timestamp or duration of {@code unit} in microseconds, the unit PostgreSQL keeps (nanoseconds
     * cut to the microsecond below); one too large for 64 bits is refused, never wrapped.
     */
    static long micros(long value, TimeUnit unit) {
        return switch (unit) {
            case SECOND -> Math.multiplyExact(value, 1_000_000L);
            case MILLISECOND -> Math.multiplyExact(value, 1_000L);
            case MICROSECOND -> value;
            case NANOSECOND -> Math.floorDiv(value, 1_000L);
        };
    }

    private static final Pattern NUMERIC = Pattern.compile("numeric\\((\\d+),(\\d+)\\)");
    private static final Pattern FRACTION = Pattern.compile("(timestamp|time)\\((\\d)\\) with(out)? time zone");

    /** The scale of a {@code numeric(p,s)} column, or -1 for any other type (plain numeric too). */
    static int numericScale(String tableType) {
        Matcher numeric = NUMERIC.matcher(tableType);
        return numeric.matches() ? Integer.parseInt(numeric.group(2)) : -1;
    }

    /**
     * Why an existing column of {@code tableType} (as {@code format_type} writes it) would store
     * values of {@code input} as other values, without an error, or null when it stores them as
     * they are. PostgreSQL rounds a value to its column's scale, fractional seconds or float
     * precision on insert (23:59:59.999999 into a timestamp(0) is the next day's midnight, 0.001
     * into a numeric(12,2) is 0.00, 16777217 into a real 16777216) and drops a timestamp's time of
     * day into a date. Overflows are not here: the server refuses them.
     */
    static String narrowing(Field input, String tableType) {
        ArrowType type = input.getType();
        boolean isFloat = type instanceof ArrowType.FloatingPoint;
        int scale = type instanceof ArrowType.Decimal d ? d.getScale() : 0;
        int digits = type instanceof ArrowType.Decimal d ? d.getPrecision() : 0;
        int intBits = type instanceof ArrowType.Int i ? (i.getIsSigned() ? i.getBitWidth() - 1 : i.getBitWidth()) : 0;
        Matcher numeric = NUMERIC.matcher(tableType);
        Matcher fraction = FRACTION.matcher(tableType);
        switch (tableType) {
            case "smallint", "integer", "bigint" -> {
                if (isFloat || scale > 0) {
                    return "it would round each value's fraction away";
                }
            }
            case "real" -> {
                if (intBits > 24
                        || (isFloat && ((ArrowType.FloatingPoint) type).getPrecision() == FloatingPointPrecision.DOUBLE)
                        || digits > 6) {
                    return "a real keeps 24 bits (about 6 digits): it would round longer values";
                }
            }
            case "double precision" -> {
                if (intBits > 53 || digits > 15) {
                    return "a double keeps 53 bits (about 15 digits): it would round longer values";
                }
            }
            case "date" -> {
                if (type instanceof ArrowType.Timestamp) {
                    return "it would drop the time of day";
                }
            }
            case "money" -> {
                if (isFloat || scale > 2) {
                    return "money keeps 2 decimal places: it would round each value";
                }
            }
            default -> {
                if (numeric.matches() && (isFloat || scale > Integer.parseInt(numeric.group(2)))) {
                    return "it would round each value to " + numeric.group(2) + " decimal places";
                }
                if (fraction.matches() && fractionDigits(type) > Integer.parseInt(fraction.group(2))) {
                    return "it would round each value to " + fraction.group(2) + " fractional digits of a second";
                }
                if (type instanceof ArrowType.Duration
                        && (tableType.startsWith("interval ") || tableType.startsWith("interval("))) {
                    // interval second(0), interval year, interval(2): some fields or digits only.
                    return "the column keeps only some of an interval's fields or digits: it would drop or round the rest";
                }
            }
        }
        return null;
    }

    /** The fractional digits of a second a timestamp or time of {@code type} has (at most the 6 written). */
    private static int fractionDigits(ArrowType type) {
        TimeUnit unit = type instanceof ArrowType.Timestamp t
                ? t.getUnit()
                : type instanceof ArrowType.Time t ? t.getUnit() : TimeUnit.SECOND;
        return switch (unit) {
            case SECOND -> 0;
            case MILLISECOND -> 3;
            case MICROSECOND, NANOSECOND -> 6;
        };
    }

    /**
     * A duration of {@code unit} in microseconds, nanoseconds cut toward zero as a cast of a
     * duration does (floored, -1 ns was -1 µs, a thousand times its length).
     */
    static long durationMicros(long value, TimeUnit unit) {
        return unit == TimeUnit.NANOSECOND ? value / 1_000L : micros(value, unit);
    }

    /** A timestamp as ISO text: local for a naive column, UTC with {@code +00} for one with a zone. */
    private static IntFunction<String> timestamp(TimeStampVector v) {
        ArrowType.Timestamp type = (ArrowType.Timestamp) v.getField().getType();
        boolean zoned = type.getTimezone() != null;
        TimeUnit unit = type.getUnit();
        return row -> timestamp(micros(v.get(row), unit), zoned);
    }

    /**
     * {@code micros} after 1970-01-01 00:00 as PostgreSQL reads it: {@code 2024-02-29T13:14:15.5},
     * {@code +00} after it for a column with a zone, and a year as {@link #date} writes it.
     */
    static String timestamp(long micros, boolean zoned) {
        LocalDateTime at = LocalDateTime.ofEpochSecond(
                Math.floorDiv(micros, 1_000_000L), (int) Math.floorMod(micros, 1_000_000L) * 1_000, ZoneOffset.UTC);
        return dated(at.toLocalDate(), "T" + at.toLocalTime() + (zoned ? "+00" : ""));
    }

    /** The date {@code day} days after 1970-01-01 as PostgreSQL reads it (see {@link #dated}). */
    static String date(long day) {
        return dated(LocalDate.ofEpochDay(day), "");
    }

    /**
     * {@code day} as {@code yyyy-MM-dd}, then {@code rest}: years past 9999 with all their digits,
     * and years before 1 as PostgreSQL writes them, counted back from 1 BC with {@code BC} at the
     * end (ISO's year 0 is 1 BC; PostgreSQL refuses a year 0 and a signed year).
     */
    private static String dated(LocalDate day, String rest) {
        int year = day.getYear();
        boolean bc = year < 1;
        return String.format(
                "%04d-%02d-%02d%s%s",
                bc ? 1 - year : year, day.getMonthValue(), day.getDayOfMonth(), rest, bc ? " BC" : "");
    }

    private static String array(FieldVector vector, int row, IntFunction<String> element) {
        long start;
        long end;
        switch (vector) {
            case ListVector l -> {
                start = l.getElementStartIndex(row);
                end = l.getElementEndIndex(row);
            }
            case LargeListVector l -> {
                start = l.getElementStartIndex(row);
                end = l.getElementEndIndex(row);
            }
            case FixedSizeListVector l -> {
                start = (long) row * l.getListSize();
                end = start + l.getListSize();
            }
            default -> throw new IllegalStateException("not a list: " + vector.getField());
        }
        StringBuilder out = new StringBuilder("{");
        for (long i = start; i < end; i++) {
            if (i > start) {
                out.append(',');
            }
            String value = element.apply((int) i);
            if (value == null) {
                out.append("NULL");
            } else {
                out.append('"');
                for (int c = 0; c < value.length(); c++) {
                    char ch = value.charAt(c);
                    if (ch == '"' || ch == '\\') {
                        out.append('\\');
                    }
                    out.append(ch);
                }
                out.append('"');
            }
        }
        return out.append('}').toString();
    }

    /** One value (not null at the top) as JSON: structs and maps as objects, lists as arrays. */
    static String json(FieldVector vector, int row) {
        StringBuilder out = new StringBuilder();
        json(out, vector, row);
        return out.toString();
    }

    private static void json(StringBuilder out, FieldVector vector, int row) {
        if (vector.isNull(row)) {
            out.append("null");
            return;
        }
        switch (vector) {
            case MapVector map -> {
                // A map is a list of {key, value} structs; keys become JSON object keys.
                StructVector entries = (StructVector) map.getDataVector();
                FieldVector keys = (FieldVector) entries.getChildrenFromFields().get(0);
                FieldVector values =
                        (FieldVector) entries.getChildrenFromFields().get(1);
                IntFunction<String> keyText = text(keys);
                out.append('{');
                for (int i = map.getElementStartIndex(row); i < map.getElementEndIndex(row); i++) {
                    if (i > map.getElementStartIndex(row)) {
                        out.append(',');
                    }
                    jsonString(out, String.valueOf(keyText.apply(i)));
                    out.append(':');
                    json(out, values, i);
                }
                out.append('}');
            }
            case StructVector struct -> {
                out.append('{');
                List<FieldVector> children = struct.getChildrenFromFields();
                for (int c = 0; c < children.size(); c++) {
                    if (c > 0) {
                        out.append(',');
                    }
                    jsonString(out, children.get(c).getName());
                    out.append(':');
                    json(out, children.get(c), row);
                }
                out.append('}');
            }
            case BaseListVector list -> {
                FieldVector child = (FieldVector) list.getChildrenFromFields().get(0);
                long start;
                long end;
                if (list instanceof FixedSizeListVector f) {
                    start = (long) row * f.getListSize();
                    end = start + f.getListSize();
                } else if (list instanceof LargeListVector l) {
                    start = l.getElementStartIndex(row);
                    end = l.getElementEndIndex(row);
                } else {
                    start = ((ListVector) list).getElementStartIndex(row);
                    end = ((ListVector) list).getElementEndIndex(row);
                }
                out.append('[');
                for (long i = start; i < end; i++) {
                    if (i > start) {
                        out.append(',');
                    }
                    json(out, child, (int) i);
                }
                out.append(']');
            }
            default -> {
                String text = scalar(vector).apply(row);
                ArrowType type = vector.getField().getType();
                boolean number = type instanceof ArrowType.Int
                        || type instanceof ArrowType.Decimal
                        || (type instanceof ArrowType.FloatingPoint && !text.contains("N") && !text.contains("I"));
                if (type instanceof ArrowType.Bool) {
                    out.append(text.equals("t") ? "true" : "false");
                } else if (number) {
                    out.append(text);
                } else {
                    jsonString(out, text);
                }
            }
        }
    }

    private static void jsonString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** Appends {@code value} escaped for COPY's text format ({@code \N} for null). */
    static void copyText(StringBuilder out, String value) {
        if (value == null) {
            out.append("\\N");
            return;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '\t' -> out.append("\\t");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                default -> out.append(c);
            }
        }
    }

    /** {@code name} as a quoted SQL identifier. */
    static String ident(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }
}
