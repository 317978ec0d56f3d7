package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
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

    private static final BufferAllocator ROOT = new RootAllocator();

    private ArrowC() {}

    /** The engine's root allocator; tests assert it holds nothing after a run. */
    public static BufferAllocator rootAllocator() {
        return ROOT;
    }

    /**
     * Writes {@code schemas} as consecutive C schemas into {@code arena} ({@link CSchemas}); the
     * core takes them. When one cannot be written, those written before it are released.
     */
    static MemorySegment exportSchemas(Arena arena, BufferAllocator allocator, List<Schema> schemas) {
        MemorySegment structs = arena.allocate(CSchemaLayout.SIZE * Math.max(1, schemas.size()), 8);
        for (int i = 0; i < schemas.size(); i++) {
            try {
                CSchemas.export(allocator, schemas.get(i), structs.asSlice(i * CSchemaLayout.SIZE, CSchemaLayout.SIZE));
            } catch (RuntimeException | Error e) {
                for (int j = 0; j < i; j++) {
                    NativeCore.bridge().schemaRelease(structs.address() + j * CSchemaLayout.SIZE);
                }
                throw e;
            }
        }
        return structs;
    }

    /** Exports one schema into C memory owned by {@code arena}; the core takes it. */
    public static MemorySegment exportSchema(Arena arena, BufferAllocator allocator, Schema schema) {
        return exportSchemas(arena, allocator, List.of(schema));
    }

    /** Reads a schema the core wrote with {@code writer} into a C struct ({@link CSchemas}). */
    public static Schema importSchema(BufferAllocator allocator, java.util.function.LongConsumer writer) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment struct = arena.allocate(CSchemaLayout.SIZE, 8);
            writer.accept(struct.address());
            return CSchemas.importAndRelease(allocator, struct);
        }
    }

    /** Exports {@code root} into {@code array} (struct memory reused by the caller), through {@link DirectExport}. */
    static void exportRoot(BufferAllocator allocator, VectorSchemaRoot root, ArrowArray array) {
        DirectExport.export(allocator, root, MemorySegment.ofAddress(array.memoryAddress()), MemorySegment.NULL);
    }
}
