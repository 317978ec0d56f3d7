package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A SQL transform planned once in the core. Push a batch into an input, then {@link #drain}
 * until it returns null: that is everything the batch produced.
 */
public final class NativeTransform extends NativeHandle {

    private final BufferAllocator allocator;
    private final Schema outputSchema;
    /** One C struct reused for every push of a Java batch: the core moves its content out. */
    private ArrowArray pushStruct;

    private NativeTransform(long handle, BufferAllocator allocator) {
        super("transform", handle);
        this.allocator = allocator;
        this.outputSchema = ArrowC.importSchema(allocator, struct -> core().transformOutputSchema(handle, struct));
    }

    /**
     * Plans {@code sql} over inputs named as the SQL refers to them, with their schemas.
     *
     * @throws NativePlanException when the SQL is invalid or stateful
     */
    public static NativeTransform plan(BufferAllocator allocator, String sql, List<String> inputNames, List<Schema> inputSchemas) {
        if (inputNames.size() != inputSchemas.size()) {
            throw new IllegalArgumentException(inputNames.size() + " input names but " + inputSchemas.size() + " schemas");
        }
        String options = Json.object(Map.of("sql", sql, "inputs", new ArrayList<>(inputNames)));
        try (Arena arena = Arena.ofConfined()) {
            var schemas = ArrowC.exportSchemas(arena, allocator, inputSchemas);
            long handle = core().transformCreate(options, schemas.address(), inputSchemas.size());
            return new NativeTransform(handle, allocator);
        }
    }

    /** The names of the tables {@code sql} reads, as written. */
    public static List<String> tableReferences(String sql) {
        return core().sqlTableReferences(sql);
    }

    public Schema outputSchema() {
        return outputSchema;
    }

    /** Pushes a native batch (borrowed) into input {@code input}. */
    public void push(int input, NativeBatch batch) {
        core().transformPushBatch(address(), input, batch.handle());
    }

    /** Pushes Java columns into input {@code input}, zero-copy; {@code root} stays usable. */
    public void push(int input, VectorSchemaRoot root) {
        if (pushStruct == null) {
            pushStruct = ArrowArray.allocateNew(allocator);
        }
        ArrowC.exportRoot(allocator, root, pushStruct);
        core().transformPush(address(), input, pushStruct.memoryAddress());
    }

    /** The next output batch of what was pushed, or null when there is none left. */
    public NativeBatch drain() {
        return NativeBatch.ofNullable(core().transformDrain(address()));
    }

    @Override
    protected void free(long address) {
        if (pushStruct != null) {
            pushStruct.close();
            pushStruct = null;
        }
        core().transformFree(address);
    }
}
