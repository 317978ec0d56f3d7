package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow Java ↔ C Data Interface, for the places where Java code needs columns. Structs
 * exported to the core are moved into it (it calls {@code release}); Java frees only the
 * struct memory.
 */
public final class ArrowC {

    /** Size of {@code struct ArrowSchema} in the C Data Interface. */
    public static final long SCHEMA_SIZE = 72;

    private static final BufferAllocator ROOT = new RootAllocator();

    private ArrowC() {}

    /** The engine's root allocator; tests assert it holds nothing after a run. */
    public static BufferAllocator rootAllocator() {
        return ROOT;
    }

    /** Writes {@code schemas} as consecutive C schemas into {@code arena}; the core takes them. */
    static MemorySegment exportSchemas(Arena arena, BufferAllocator allocator, List<Schema> schemas) {
        MemorySegment structs = arena.allocate(SCHEMA_SIZE * Math.max(1, schemas.size()), 8);
        for (int i = 0; i < schemas.size(); i++) {
            ArrowSchema slot = ArrowSchema.wrap(structs.address() + i * SCHEMA_SIZE);
            Data.exportSchema(allocator, schemas.get(i), null, slot);
        }
        return structs;
    }

    /** Exports one schema into C memory owned by {@code arena}; the core takes it. */
    public static MemorySegment exportSchema(Arena arena, BufferAllocator allocator, Schema schema) {
        return exportSchemas(arena, allocator, List.of(schema));
    }

    /** Reads a schema the core wrote with {@code writer} into a C struct. */
    public static Schema importSchema(BufferAllocator allocator, java.util.function.LongConsumer writer) {
        try (ArrowSchema struct = ArrowSchema.allocateNew(allocator)) {
            writer.accept(struct.memoryAddress());
            return Data.importSchema(allocator, struct, null);
        }
    }

    /** Exports {@code root} into {@code array} (struct memory reused by the caller), through {@link DirectExport}. */
    static void exportRoot(BufferAllocator allocator, VectorSchemaRoot root, ArrowArray array) {
        DirectExport.export(allocator, root, MemorySegment.ofAddress(array.memoryAddress()), MemorySegment.NULL);
    }
}
