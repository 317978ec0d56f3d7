package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CSchemas} against Arrow Java's own C Data import and export, which stay the reference:
 * every flat type, nullable or not, with and without metadata, goes out through the core's
 * {@code sluice_schema_build} and comes back through Arrow Java equal, and what Arrow Java exports
 * comes back through {@link CSchemas} equal to Arrow Java's own import of it; other types take
 * Arrow Java's path both ways. No native handle or Arrow memory is left.
 */
class CSchemasTest {

    private static final long SIZE = dev.sluice.ffm.ArrowSchema.sizeof();

    private BufferAllocator allocator;
    private long handlesBefore;

    @BeforeEach
    void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("c-schemas", 0, Long.MAX_VALUE);
        handlesBefore = NativeTestSupport.liveHandles();
    }

    @AfterEach
    void tearDown() {
        NativeTestSupport.assertNoLeaks(handlesBefore, allocator);
        allocator.close();
    }

    /** What CFormat names: DirectExport's types and Null. */
    private static List<ArrowType> flatTypes() {
        List<ArrowType> types = new ArrayList<>(FlatTypes.written());
        types.add(ArrowType.Null.INSTANCE);
        return types;
    }

    /** Every flat type, nullable and not (Null only nullable), some fields with metadata, the schema's too. */
    private static Schema flatSchema() {
        List<Field> fields = new ArrayList<>();
        int i = 0;
        for (ArrowType type : flatTypes()) {
            for (boolean nullable : new boolean[] {true, false}) {
                if (type instanceof ArrowType.Null && !nullable) {
                    continue;
                }
                Map<String, String> metadata = i % 3 == 0 ? Map.of("unit", "ms", "ü-key", "välue " + i) : null;
                fields.add(new Field("c" + i++ + " " + type, new FieldType(nullable, type, null, metadata), null));
            }
        }
        return new Schema(fields, Map.of("pipeline", "p", "empty", ""));
    }

    @Test
    void everyFlatTypeGoesOutThroughTheCoreAndComesBackEqual() {
        Schema schema = flatSchema();
        assertNotNull(CSchemas.describe(schema), "a schema of flat columns is described, not left to Arrow Java");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment struct = arena.allocate(SIZE, 8);
            CSchemas.export(allocator, schema, struct);
            // Arrow Java's import, the reference reader (it releases the struct).
            assertEquals(schema, Data.importSchema(allocator, ArrowSchema.wrap(struct.address()), null));
        }
    }

    @Test
    void whatArrowJavaExportsIsReadEqualToArrowJavasOwnImport() {
        for (Schema schema : List.of(flatSchema(), new Schema(List.of()), new Schema(List.of(), null))) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ours = arena.allocate(SIZE, 8);
                MemorySegment theirs = arena.allocate(SIZE, 8);
                Data.exportSchema(allocator, schema, null, ArrowSchema.wrap(ours.address()));
                Data.exportSchema(allocator, schema, null, ArrowSchema.wrap(theirs.address()));
                Schema read = CSchemas.importAndRelease(allocator, ours);
                assertEquals(0, ours.get(JAVA_LONG, dev.sluice.ffm.ArrowSchema.release$offset()), "released");
                assertEquals(Data.importSchema(allocator, ArrowSchema.wrap(theirs.address()), null), read);
                assertEquals(schema, read);
            }
        }
    }

    @Test
    void theCoresOwnSchemasAreReadAsArrowJavaReadsThem() {
        // The generator's schema (timestamps, strings, integers), written by the core twice.
        try (NativeGenerator generator = NativeGenerator.create(allocator, Map.of("entity", "bid"));
                Arena arena = Arena.ofConfined()) {
            MemorySegment struct = arena.allocate(SIZE, 8);
            NativeCore.bridge().generatorSchema(generator.address(), struct.address());
            Schema reference = Data.importSchema(allocator, ArrowSchema.wrap(struct.address()), null);
            assertEquals(reference, generator.schema());
        }
    }

    @Test
    void nestedAndExtensionTypesTakeArrowJavasPathBothWays() {
        Field list = new Field(
                "tags",
                FieldType.nullable(ArrowType.List.INSTANCE),
                List.of(Field.nullable("item", ArrowType.Utf8.INSTANCE)));
        Field dictionary = new Field(
                "kind",
                new FieldType(
                        true, ArrowType.Utf8.INSTANCE, new DictionaryEncoding(7, false, new ArrowType.Int(32, true))),
                null);
        Field extension = new Field(
                "id",
                new FieldType(
                        false,
                        new ArrowType.FixedSizeBinary(16),
                        null,
                        Map.of("ARROW:extension:name", "example.unknown")),
                null);
        // Arrow Java exports a dictionary-encoded field only with its dictionaries at hand, which a
        // schema alone does not have; it is not described either.
        assertNull(CSchemas.describe(new Schema(List.of(dictionary))));
        for (Field field : List.of(list, extension)) {
            Schema schema = new Schema(List.of(Field.notNullable("n", new ArrowType.Int(64, true)), field));
            try (Arena arena = Arena.ofConfined()) {
                if (field == list) {
                    assertNull(CSchemas.describe(schema), field + " is not described");
                }
                MemorySegment struct = arena.allocate(SIZE, 8);
                CSchemas.export(allocator, schema, struct);
                Schema read = CSchemas.importAndRelease(allocator, struct);
                assertEquals(schema.getFields().get(0), read.getFields().get(0));
                assertEquals(field.getName(), read.getFields().get(1).getName());
                assertEquals(field.getType(), read.getFields().get(1).getType());
                assertEquals(field.getMetadata(), read.getFields().get(1).getMetadata());
            }
        }
    }

    @Test
    void aFormatTheCoreCannotReadIsRefusedNamingTheColumn() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment struct = arena.allocate(SIZE, 8);
            for (String format : List.of("+l", "q", "d:x,1", "tsX:", "i\u0000")) {
                String json = Json.object(Map.of(
                        "fields", List.of(Map.of("name", "price", "format", format, "nullable", true)),
                        "metadata", Map.of()));
                NativeException e = assertThrows(
                        NativeException.class, () -> NativeCore.bridge().schemaBuild(json, struct.address()));
                assertTrue(e.getMessage().contains("column 'price'"), e.getMessage());
                assertEquals(0, struct.get(JAVA_LONG, dev.sluice.ffm.ArrowSchema.release$offset()), "nothing written");
            }
        }
    }

    @Test
    void aReleasedStructIsRefusedAndReleasingTwiceIsHarmless() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment struct = arena.allocate(SIZE, 8);
            assertThrows(IllegalArgumentException.class, () -> CSchemas.importAndRelease(allocator, struct));
            CSchemas.export(allocator, flatSchema(), struct);
            NativeCore.bridge().schemaRelease(struct.address());
            NativeCore.bridge().schemaRelease(struct.address()); // already released: nothing to do
            assertThrows(NativeException.class, () -> NativeCore.bridge().schemaRelease(0));
        }
    }

    @Test
    void everyFormatCFormatWritesItParsesBack() {
        for (ArrowType type : flatTypes()) {
            String format = type instanceof ArrowType.Null ? "n" : CFormat.of(type);
            assertNotNull(format, type.toString());
            assertEquals(type, CFormat.parse(format), format);
        }
        for (String bad : List.of("", "x", "w:", "w:x", "d:1", "d:1,2,3,4", "tsq:", "tDx", "+s", "+l")) {
            assertNull(CFormat.parse(bad), bad);
        }
    }
}
