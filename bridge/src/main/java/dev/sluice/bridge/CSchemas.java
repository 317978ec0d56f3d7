package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Moves schemas of flat columns across the C Data Interface by reading and writing memory
 * alone: to the core as a JSON description from which the core writes the C struct ({@code
 * sluice_schema_build}), from the core by reading its struct field by field and letting the core
 * release it ({@code sluice_schema_release}). Arrow Java's {@code Data} needs its JNI library for
 * both (a release callback and calling one), which it extracts to a temporary file and loads at
 * first use, with a secure random generator and the security providers: ~8 ms on the main thread
 * inside every run's clock, before any batch. It stays the path for nested, dictionary-encoded and
 * extension types, and for a struct this class does not recognize.
 */
final class CSchemas {

    /** The metadata key that makes a field an extension type, which Arrow Java's importer resolves. */
    private static final String EXTENSION_NAME = "ARROW:extension:name";

    private CSchemas() {}

    /** Writes {@code schema} into the C struct at {@code struct}; the receiver releases it once. */
    static void export(BufferAllocator allocator, Schema schema, MemorySegment struct) {
        String description = describe(schema);
        if (description == null) {
            Data.exportSchema(allocator, schema, null, ArrowSchema.wrap(struct.address()));
        } else {
            NativeCore.bridge().schemaBuild(description, struct.address());
        }
    }

    /** Reads the schema the core wrote into the C struct at {@code struct} and releases the struct. */
    static Schema importAndRelease(BufferAllocator allocator, MemorySegment struct) {
        MemorySegment top = struct.reinterpret(CSchemaLayout.SIZE);
        if (top.get(JAVA_LONG, CSchemaLayout.RELEASE) == 0) {
            throw new IllegalArgumentException("the ArrowSchema was released before it was read");
        }
        Schema schema;
        try {
            schema = read(top);
        } catch (RuntimeException e) {
            NativeCore.bridge().schemaRelease(top.address());
            throw e;
        }
        if (schema == null) {
            return Data.importSchema(allocator, ArrowSchema.wrap(top.address()), null); // and releases it
        }
        NativeCore.bridge().schemaRelease(top.address());
        return schema;
    }

    /** The JSON {@code sluice_schema_build} takes, or null when a column is not a flat type it describes. */
    static String describe(Schema schema) {
        List<Map<String, Object>> fields = new ArrayList<>(schema.getFields().size());
        for (Field field : schema.getFields()) {
            String format = format(field.getType());
            if (format == null
                    || field.getDictionary() != null
                    || !field.getChildren().isEmpty()) {
                return null;
            }
            Map<String, Object> description = new LinkedHashMap<>();
            description.put("name", field.getName());
            description.put("format", format);
            description.put("nullable", field.isNullable());
            description.put("metadata", orEmpty(field.getMetadata()));
            fields.add(description);
        }
        return Json.object(Map.of("fields", fields, "metadata", orEmpty(schema.getCustomMetadata())));
    }

    private static Map<String, String> orEmpty(Map<String, String> metadata) {
        return metadata == null ? Map.of() : metadata;
    }

    private static String format(ArrowType type) {
        // Null has no buffers, so CFormat.of (DirectExport writes arrays with it) leaves it out.
        return type instanceof ArrowType.Null ? "n" : CFormat.of(type);
    }

    /** The schema of a struct of flat columns, or null for anything else (Arrow Java reads it). */
    private static Schema read(MemorySegment top) {
        if (!"+s".equals(string(top.get(JAVA_LONG, CSchemaLayout.FORMAT)))
                || top.get(JAVA_LONG, CSchemaLayout.DICTIONARY) != 0) {
            return null;
        }
        long n = top.get(JAVA_LONG, CSchemaLayout.N_CHILDREN);
        long children = top.get(JAVA_LONG, CSchemaLayout.CHILDREN);
        if (n < 0 || n > Integer.MAX_VALUE || (n > 0 && children == 0)) {
            throw new IllegalArgumentException("ArrowSchema with " + n + " children at " + children);
        }
        MemorySegment pointers = MemorySegment.ofAddress(children).reinterpret(8 * n);
        List<Field> fields = new ArrayList<>((int) n);
        for (int i = 0; i < n; i++) {
            MemorySegment child =
                    MemorySegment.ofAddress(pointers.getAtIndex(JAVA_LONG, i)).reinterpret(CSchemaLayout.SIZE);
            Field field = readField(child);
            if (field == null) {
                return null;
            }
            fields.add(field);
        }
        return new Schema(fields, metadata(top.get(JAVA_LONG, CSchemaLayout.METADATA)));
    }

    private static Field readField(MemorySegment child) {
        long name = child.get(JAVA_LONG, CSchemaLayout.NAME);
        if (name == 0
                || child.get(JAVA_LONG, CSchemaLayout.N_CHILDREN) != 0
                || child.get(JAVA_LONG, CSchemaLayout.DICTIONARY) != 0) {
            return null;
        }
        ArrowType type = CFormat.parse(string(child.get(JAVA_LONG, CSchemaLayout.FORMAT)));
        Map<String, String> metadata = metadata(child.get(JAVA_LONG, CSchemaLayout.METADATA));
        if (type == null || (metadata != null && metadata.containsKey(EXTENSION_NAME))) {
            return null;
        }
        boolean nullable = (child.get(JAVA_LONG, CSchemaLayout.FLAGS) & CSchemaLayout.FLAG_NULLABLE) != 0;
        return new Field(string(name), new FieldType(nullable, type, null, metadata), new ArrayList<>());
    }

    private static String string(long address) {
        return address == 0
                ? null
                : MemorySegment.ofAddress(address).reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** The C Data Interface's metadata encoding: int32 count, then int32-length-prefixed keys and values. */
    private static Map<String, String> metadata(long address) {
        if (address == 0) {
            return null;
        }
        MemorySegment m = MemorySegment.ofAddress(address).reinterpret(Long.MAX_VALUE);
        int count = m.get(JAVA_INT_UNALIGNED, 0);
        long at = 4;
        Map<String, String> entries = new HashMap<>();
        for (int i = 0; i < count; i++) {
            String[] pair = new String[2];
            for (int j = 0; j < 2; j++) {
                int length = m.get(JAVA_INT_UNALIGNED, at);
                byte[] bytes = m.asSlice(at + 4, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                pair[j] = new String(bytes, StandardCharsets.UTF_8);
                at += 4 + length;
            }
            entries.put(pair[0], pair[1]);
        }
        return entries;
    }
}
