package dev.sluice.connector.postgres;

import static dev.sluice.connector.postgres.PgTypes.ident;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDecoder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Reading a table's rows into Arrow, as the postgres source and the postgres lookup backend do:
 * the server builds each row as JSON ({@code jsonb_build_object}) and the core decodes the JSON
 * into the declared columns, so both read every type the same way.
 */
final class PgRows {

    private PgRows() {}

    /** Each column of table {@code qualified} with its type as {@code format_type} writes it; empty if no such table. */
    static Map<String, String> columnTypes(Connection c, String qualified) throws SQLException {
        Map<String, String> types = new LinkedHashMap<>();
        try (PreparedStatement s =
                c.prepareStatement("SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                        + "WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped")) {
            s.setString(1, qualified);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    types.put(rs.getString(1), rs.getString(2));
                }
            }
        } finally {
            c.rollback();
        }
        return types;
    }

    /**
     * A SQL expression building the JSON of a row of alias {@code t} with the declared columns, plus
     * {@code _op} = {@code op} unless that is null. {@code tableTypes} are the table's column types
     * ({@link #columnTypes}).
     */
    static String rowJson(Schema columns, Map<String, String> tableTypes, String t, String op) {
        String fields = columns.getFields().stream()
                .map(f -> "'" + f.getName().replace("'", "''") + "', "
                        + value(f, tableTypes.get(f.getName()), t + "." + ident(f.getName())))
                .collect(Collectors.joining(", "));
        return "jsonb_build_object(" + fields + (op == null ? "" : ", '_op', '" + op + "'") + ")::text";
    }

    /**
     * The value of {@code column} (of table type {@code tableType}) in the form the core's JSON
     * decoder reads for {@code field}. jsonb's own forms suit most types; not bytea ({@code
     * "\\x00ff"}, where the decoder reads binary as bare hex) nor dates outside years 1–9999
     * ({@code "0044-03-15 BC"}), which go as hex and as days since 1970. An infinite date stays
     * {@code "infinity"}, which the decoder refuses, naming the row. A float -0 goes as the string
     * {@code "-0"}: jsonb's numbers have no negative zero (it became 0, and 1 / x +Infinity). Also
     * the key of a deleted row ({@code column} then the notified key), which must read as the rows do.
     */
    static String value(Field field, String tableType, String column) {
        ArrowType type = field.getType();
        boolean binary = type instanceof ArrowType.Binary || type instanceof ArrowType.LargeBinary;
        if (binary && "bytea".equals(tableType)) {
            return "encode(" + column + ", 'hex')";
        }
        if (binary && tableType != null && (tableType.equals("text") || tableType.startsWith("character"))) {
            return "encode(convert_to(" + column + ", 'UTF8'), 'hex')";
        }
        if (type instanceof ArrowType.FloatingPoint
                && ("double precision".equals(tableType) || "real".equals(tableType))) {
            return "CASE WHEN " + column + "::text = '-0' THEN to_jsonb(text '-0') ELSE to_jsonb(" + column + ") END";
        }
        if (type instanceof ArrowType.Date d && d.getUnit() == DateUnit.DAY && "date".equals(tableType)) {
            return "CASE WHEN isfinite(" + column + ") THEN to_jsonb(" + column + " - date '1970-01-01') ELSE to_jsonb("
                    + column + ") END";
        }
        return column;
    }

    /**
     * Decodes JSON rows in the core as one batch. A row that does not fit the declared columns
     * fails, naming {@code what}.
     */
    static NativeBatch decode(NativeDecoder decoder, List<String> rows, String what, BufferAllocator allocator) {
        byte[][] bytes =
                rows.stream().map(r -> r.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
        long total = 0;
        for (byte[] b : bytes) {
            total += b.length;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(Math.max(1, total));
            MemorySegment offsets = arena.allocate(ValueLayout.JAVA_LONG, bytes.length + 1L);
            long at = 0;
            for (int i = 0; i < bytes.length; i++) {
                offsets.setAtIndex(ValueLayout.JAVA_LONG, i, at);
                MemorySegment.copy(bytes[i], 0, data, ValueLayout.JAVA_BYTE, at, bytes[i].length);
                at += bytes[i].length;
            }
            offsets.setAtIndex(ValueLayout.JAVA_LONG, bytes.length, at);
            NativeDecoder.Decoded decoded = decoder.decode(data, offsets, bytes.length, null);
            try (NativeBatch errors = decoded.errors()) {
                if (errors != null && errors.rowCount() > 0) {
                    decoded.batch().close();
                    throw new IllegalStateException("a row of " + what + " does not fit the declared columns: "
                            + firstError(errors, allocator));
                }
            }
            return decoded.batch();
        }
    }

    private static String firstError(NativeBatch errors, BufferAllocator allocator) {
        try (VectorSchemaRoot root = errors.toVectors(allocator)) {
            return new String(((VarCharVector) root.getVector("error")).get(0), StandardCharsets.UTF_8);
        }
    }
}
