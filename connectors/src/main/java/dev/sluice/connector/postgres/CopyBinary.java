package dev.sluice.connector.postgres;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * COPY's binary format for the column types whose binary form is plain: integers, floats,
 * boolean, text, bytea, date, timestamp. The server reads these without parsing text (about a
 * quarter less of its time on a COPY of bigint, text, double and timestamp:
 * benchmarks/postgres/copy_format.sh), and the sink writes them without formatting numbers. A binary value
 * must be exactly of the column's type, so a table gets it only when every column's type is the
 * one its Arrow type maps to ({@link #formFor}); otherwise the sink writes text.
 */
final class CopyBinary {

    private CopyBinary() {}

    /** 2000-01-01, PostgreSQL's epoch, in days and in microseconds since 1970-01-01. */
    private static final int EPOCH_DAYS = 10_957;

    private static final long EPOCH_MICROS = 946_684_800_000_000L;

    /** A binary form, and the table column type (as {@code format_type} names it) it is for. */
    enum Form {
        INT2("smallint"),
        INT4("integer"),
        INT8("bigint"),
        FLOAT4("real"),
        FLOAT8("double precision"),
        BOOL("boolean"),
        TEXT("text"),
        BYTEA("bytea"),
        DATE("date"),
        TIMESTAMP("timestamp without time zone"),
        TIMESTAMPTZ("timestamp with time zone");

        final String tableType;

        Form(String tableType) {
            this.tableType = tableType;
        }
    }

    /**
     * The binary form of a column of {@code field} written into a table column of {@code
     * tableType}, or null when it must go as text (a type without a plain binary form, or a table
     * column of another type, which the server converts from text).
     */
    static Form formFor(Field field, String tableType) {
        Form form = switch (PgTypes.pgType(field)) {
            case "smallint" -> Form.INT2;
            case "integer" -> Form.INT4;
            case "bigint" -> Form.INT8;
            case "real" -> Form.FLOAT4;
            case "double precision" -> Form.FLOAT8;
            case "boolean" -> Form.BOOL;
            case "text" -> Form.TEXT;
            case "bytea" -> Form.BYTEA;
            case "date" -> Form.DATE;
            case "timestamp" -> Form.TIMESTAMP;
            case "timestamptz" -> Form.TIMESTAMPTZ;
            default -> null;
        };
        if (form == null) {
            return null;
        }
        // varchar(n) reads text's binary form and still checks its length.
        boolean fits =
                tableType.equals(form.tableType) || (form == Form.TEXT && tableType.startsWith("character varying"));
        return fits ? form : null;
    }

    /** Writes the binary form of a non-null value of {@code vector} (its length is the caller's). */
    static CopyEncoder.ValueWriter writer(FieldVector vector, Form form) {
        return switch (form) {
            case INT2 -> (row, out) -> out.putInt16((int) ((BaseIntVector) vector).getValueAsLong(row));
            case INT4 -> (row, out) -> out.putInt32((int) ((BaseIntVector) vector).getValueAsLong(row));
            case INT8 -> (row, out) -> out.putInt64(((BaseIntVector) vector).getValueAsLong(row));
            case FLOAT4 ->
                vector instanceof Float2Vector half
                        ? (row, out) -> out.putInt32(Float.floatToRawIntBits(half.getValueAsFloat(row)))
                        : (row, out) -> out.putInt32(Float.floatToRawIntBits(((Float4Vector) vector).get(row)));
            case FLOAT8 -> (row, out) -> out.putInt64(Double.doubleToRawLongBits(((Float8Vector) vector).get(row)));
            case BOOL -> (row, out) -> out.put(((BitVector) vector).get(row) != 0 ? (byte) 1 : (byte) 0);
            case TEXT ->
                vector instanceof VarCharVector v
                        ? (row, out) -> {
                            int start = v.getStartOffset(row);
                            out.putRaw(v.getDataBuffer(), start, v.getEndOffset(row) - start);
                        }
                        : (row, out) ->
                                out.putRaw(vector.getObject(row).toString().getBytes(StandardCharsets.UTF_8));
            case BYTEA -> (row, out) -> out.putRaw((byte[]) vector.getObject(row));
            case DATE ->
                vector instanceof DateDayVector v
                        ? (row, out) -> out.putInt32(Math.subtractExact(v.get(row), EPOCH_DAYS))
                        : (row, out) -> out.putInt32(Math.toIntExact(
                                Math.floorDiv(((DateMilliVector) vector).get(row), 86_400_000L) - EPOCH_DAYS));
            case TIMESTAMP, TIMESTAMPTZ -> {
                TimeStampVector v = (TimeStampVector) vector;
                TimeUnit unit = ((ArrowType.Timestamp) v.getField().getType()).getUnit();
                yield (row, out) -> out.putInt64(Math.subtractExact(PgTypes.micros(v.get(row), unit), EPOCH_MICROS));
            }
        };
    }

    /** A binary value as the text {@link PgTypes#text} gives for it, for messages. */
    static String text(Form form, byte[] data, int at, int length) {
        return switch (form) {
            case INT2 -> Short.toString((short) int16(data, at));
            case INT4 -> Integer.toString(int32(data, at));
            case INT8 -> Long.toString(int64(data, at));
            case FLOAT4 -> Float.toString(Float.intBitsToFloat(int32(data, at)));
            case FLOAT8 -> Double.toString(Double.longBitsToDouble(int64(data, at)));
            case BOOL -> data[at] != 0 ? "t" : "f";
            case TEXT -> new String(data, at, length, StandardCharsets.UTF_8);
            case BYTEA -> "\\x" + HexFormat.of().formatHex(data, at, at + length);
            case DATE -> PgTypes.date((long) int32(data, at) + EPOCH_DAYS);
            case TIMESTAMP, TIMESTAMPTZ -> PgTypes.timestamp(int64(data, at) + EPOCH_MICROS, form == Form.TIMESTAMPTZ);
        };
    }

    static int int16(byte[] data, int at) {
        return ((data[at] & 0xFF) << 8) | (data[at + 1] & 0xFF);
    }

    static int int32(byte[] data, int at) {
        return (int16(data, at) << 16) | int16(data, at + 2);
    }

    private static long int64(byte[] data, int at) {
        return ((long) int32(data, at) << 32) | (int32(data, at + 4) & 0xFFFFFFFFL);
    }
}
