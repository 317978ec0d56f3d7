package dev.sluice.bridge;

import java.util.Map;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A bounded SQL query run once in the core over one table of Java columns: any SQL,
 * aggregations and ORDER BY included. For small data such as the state DB, not for streams.
 */
public final class NativeQuery {

    private NativeQuery() {}

    /**
     * Runs {@code sql} with {@code root} registered as table {@code table} and returns the
     * result (the caller closes it). {@code root} stays usable. Read-only: statements that write
     * or define (COPY … TO, INSERT, CREATE EXTERNAL TABLE, SET) fail.
     *
     * @throws NativePlanException when the SQL is invalid or not read-only
     */
    public static NativeBatch run(BufferAllocator allocator, String sql, String table, VectorSchemaRoot root) {
        return run(allocator, sql, table, root, false);
    }

    /** As {@link #run(BufferAllocator, String, String, VectorSchemaRoot)}; {@code allowWrites} lets any SQL run. */
    public static NativeBatch run(
            BufferAllocator allocator, String sql, String table, VectorSchemaRoot root, boolean allowWrites) {
        try (ArrowArray array = ArrowArray.allocateNew(allocator);
                ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            Data.exportVectorSchemaRoot(allocator, root, null, array, schema);
            String options = Json.object(Map.of("sql", sql, "table", table, "allow_writes", allowWrites));
            return new NativeBatch(
                    NativeCore.bridge().sqlQuery(options, array.memoryAddress(), schema.memoryAddress()));
        }
    }
}
