package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/** Reads a JSON-lines, CSV or Parquet file in the core, batch by batch. */
public final class NativeFileReader extends NativeHandle {

    /** One read: the decoded rows, and the malformed lines (line, record, error) or null. */
    public record Read(NativeBatch batch, NativeBatch errors) {}

    private final Schema schema;

    private NativeFileReader(long handle, BufferAllocator allocator) {
        super("file reader", handle);
        this.schema = ArrowC.importSchema(allocator, struct -> core().fileReaderSchema(handle, struct));
    }

    /**
     * Opens a file. {@code options}: path, format (json|csv|parquet), batch_size, header,
     * delimiter, infer_rows. {@code schema} null infers it (JSON, CSV) or reads the file's.
     */
    public static NativeFileReader open(BufferAllocator allocator, Map<String, ?> options, Schema schema) {
        String json = Json.object(options);
        try (Arena arena = Arena.ofConfined()) {
            long schemaStruct = schema == null ? 0 : ArrowC.exportSchema(arena, allocator, schema).address();
            return new NativeFileReader(core().fileReaderOpen(json, schemaStruct), allocator);
        }
    }

    public Schema schema() {
        return schema;
    }

    /** The next batch, or null at the end of the file. */
    public Read next() {
        long[] out = core().fileReaderNext(address());
        if (out[0] == 0) {
            return null;
        }
        return new Read(new NativeBatch(out[0]), NativeBatch.ofNullable(out[1]));
    }

    @Override
    protected void free(long address) {
        core().fileReaderFree(address);
    }
}
