package dev.sluice.state;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeQuery;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * State rows as an Arrow table, and bounded SQL over it in the native core: the table is called
 * {@code state} with columns {@code namespace}, {@code key}, {@code data} (JSON text, so
 * {@code json_get_int(data, 'offset')} works) and {@code created_at} (timestamp, ms, UTC).
 * Stateless and thread-safe; the caller owns the allocator and every root returned.
 */
public final class StateTable {

    /** The table name SQL uses. */
    public static final String NAME = "state";

    /** The table's schema; no column is nullable. */
    public static final Schema SCHEMA = new Schema(List.of(
            utf8("namespace"),
            utf8("key"),
            utf8("data"),
            new Field(
                    "created_at", FieldType.notNullable(new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC")), null)));

    private StateTable() {}

    /** The rows as columns of {@link #SCHEMA}; the caller closes the root. */
    public static VectorSchemaRoot toVectors(List<StateRow> rows, BufferAllocator allocator) {
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
        try {
            root.allocateNew();
            VarCharVector namespace = (VarCharVector) root.getVector(0);
            VarCharVector key = (VarCharVector) root.getVector(1);
            VarCharVector data = (VarCharVector) root.getVector(2);
            TimeStampMilliTZVector createdAt = (TimeStampMilliTZVector) root.getVector(3);
            for (int i = 0; i < rows.size(); i++) {
                StateRow row = rows.get(i);
                namespace.setSafe(i, row.namespace().getBytes(StandardCharsets.UTF_8));
                key.setSafe(i, row.key().getBytes(StandardCharsets.UTF_8));
                data.setSafe(i, row.data().getBytes(StandardCharsets.UTF_8));
                createdAt.setSafe(i, row.createdAt().toEpochMilli());
            }
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    /**
     * Runs {@code sql} over {@code rows} as table {@value #NAME} and returns the result; the
     * caller closes it. Any bounded SQL that only reads works: aggregations, ORDER BY, JSON
     * functions; statements that write or define (COPY … TO, CREATE EXTERNAL TABLE, SET) are
     * refused.
     *
     * @throws dev.sluice.bridge.NativePlanException if the SQL is invalid or not read-only
     * @throws dev.sluice.bridge.NativeExecutionException if it fails while running
     */
    public static VectorSchemaRoot query(List<StateRow> rows, String sql, BufferAllocator allocator) {
        return query(rows, sql, allocator, false);
    }

    /**
     * As {@link #query(List, String, BufferAllocator)}; with {@code allowWrites} any SQL runs,
     * also statements that read or write files. The table is a copy either way: nothing a
     * statement does changes the state DB.
     */
    public static VectorSchemaRoot query(
            List<StateRow> rows, String sql, BufferAllocator allocator, boolean allowWrites) {
        try (VectorSchemaRoot table = toVectors(rows, allocator);
                NativeBatch result = NativeQuery.run(allocator, sql, NAME, table, allowWrites)) {
            return result.toVectors(allocator);
        }
    }

    private static Field utf8(String name) {
        return new Field(name, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null);
    }
}
