package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/** Reads a JSON-lines, CSV or Parquet file in the core, batch by batch. */
public final class NativeFileReader extends NativeHandle {

    /** One read: the decoded rows, and the malformed lines (line, record, error) or null. */
    public record Read(NativeBatch batch, NativeBatch errors) {}

    /** Schema metadata key of the reader's warnings, one per line (file_io::WARNINGS_KEY). */
    private static final String WARNINGS_KEY = "sluice.warnings";

    private final Schema schema;
    private final List<String> warnings;

    private NativeFileReader(long handle, BufferAllocator allocator) {
        super("file reader", handle);
        Schema withMetadata = ArrowC.importSchema(allocator, struct -> core().fileReaderSchema(handle, struct));
        String text = withMetadata.getCustomMetadata().get(WARNINGS_KEY);
        this.warnings = text == null ? List.of() : List.of(text.split("\n"));
        // The batches carry no metadata: neither does the schema.
        this.schema = new Schema(withMetadata.getFields());
    }

    /** What the core noticed while opening the file, e.g. columns of mixed types read as strings. */
    public List<String> warnings() {
        return warnings;
    }

    /**
     * Opens a file. {@code options}: path, format (json|csv|parquet), batch_size, header,
     * delimiter, infer_rows. {@code schema} null infers it (JSON, CSV) or reads the file's.
     */
    public static NativeFileReader open(BufferAllocator allocator, Map<String, ?> options, Schema schema) {
        String json = Json.object(options);
        try (Arena arena = Arena.ofConfined()) {
            long schemaStruct = schema == null
                    ? 0
                    : ArrowC.exportSchema(arena, allocator, schema).address();
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
