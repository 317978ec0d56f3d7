package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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

    private static final long INPUTS_SIZE = dev.sluice.ffm.SluiceTransformInputs.sizeof();
    private static final long INPUTS_SCHEMAS = dev.sluice.ffm.SluiceTransformInputs.schemas$offset();
    private static final long INPUTS_N_SCHEMAS = dev.sluice.ffm.SluiceTransformInputs.n_schemas$offset();
    private static final long INPUTS_FUNCTIONS = dev.sluice.ffm.SluiceTransformInputs.functions$offset();

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
    public static NativeTransform plan(
            BufferAllocator allocator, String sql, List<String> inputNames, List<Schema> inputSchemas) {
        return plan(allocator, sql, inputNames, inputSchemas, List.of());
    }

    /**
     * Plans {@code sql} over streaming inputs and static side tables, which the core reads now.
     * Each side table is described as the core's {@code side_tables::SideTable} (name, file, columns).
     *
     * @throws NativePlanException when the SQL is invalid or stateful; other {@link NativeException}s
     *     when a side table cannot be read (the message names the table and its file)
     */
    public static NativeTransform plan(
            BufferAllocator allocator,
            String sql,
            List<String> inputNames,
            List<Schema> inputSchemas,
            List<Map<String, Object>> sideTables) {
        return plan(allocator, sql, inputNames, inputSchemas, sideTables, null);
    }

    /**
     * As {@link #plan(BufferAllocator, String, List, List, List)}, with the pipeline's plugin
     * functions (null for none) callable by name in {@code sql}.
     */
    public static NativeTransform plan(
            BufferAllocator allocator,
            String sql,
            List<String> inputNames,
            List<Schema> inputSchemas,
            List<Map<String, Object>> sideTables,
            NativeFunctions functions) {
        if (inputNames.size() != inputSchemas.size()) {
            throw new IllegalArgumentException(
                    inputNames.size() + " input names but " + inputSchemas.size() + " schemas");
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("sql", sql);
        fields.put("inputs", new ArrayList<>(inputNames));
        if (!sideTables.isEmpty()) {
            fields.put("tables", sideTables);
        }
        String options = Json.object(fields);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment inputs = arena.allocate(INPUTS_SIZE, 8); // struct SluiceTransformInputs
            inputs.set(
                    ValueLayout.JAVA_LONG,
                    INPUTS_SCHEMAS,
                    ArrowC.exportSchemas(arena, allocator, inputSchemas).address());
            inputs.set(ValueLayout.JAVA_LONG, INPUTS_N_SCHEMAS, inputSchemas.size());
            inputs.set(ValueLayout.JAVA_LONG, INPUTS_FUNCTIONS, functions == null ? 0 : functions.handle());
            return new NativeTransform(core().transformCreate(options, inputs.address()), allocator);
        }
    }

    /** The names of the tables {@code sql} reads, as written. */
    public static List<String> tableReferences(String sql) {
        return tableReferences(core(), sql);
    }

    /** As {@link #tableReferences(String)}, through {@code bridge} (the parity test asks both). */
    static List<String> tableReferences(CoreBridge bridge, String sql) {
        long buffer = bridge.sqlTableReferences(sql); // a JSON array of names
        try {
            long[] data = bridge.bufferData(buffer);
            byte[] bytes = MemorySegment.ofAddress(data[0]).reinterpret(data[1]).toArray(ValueLayout.JAVA_BYTE);
            String json = new String(bytes, StandardCharsets.UTF_8);
            try {
                return Json.stringArray(json);
            } catch (java.io.IOException e) {
                throw new NativeArgumentException("bad table list from the core: " + json);
            }
        } finally {
            bridge.bufferFree(buffer);
        }
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
