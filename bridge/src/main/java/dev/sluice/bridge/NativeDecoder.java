package dev.sluice.bridge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Decodes record slabs (JSON, CSV, raw bytes) in the core. The caller copies a batch of
 * records once into an off-heap slab with Arrow-style offsets; no record becomes a Java object.
 */
public final class NativeDecoder extends NativeHandle {

    /** One decoded batch: the good rows, and the malformed records (index, record, error) or null. */
    public record Decoded(NativeBatch batch, NativeBatch errors) {}

    private final BufferAllocator allocator;

    private NativeDecoder(long handle, BufferAllocator allocator) {
        super("decoder", handle);
        this.allocator = allocator;
    }

    /** {@code format}: json, csv or raw; {@code schema} null for raw (one Binary column {@code value}). */
    public static NativeDecoder create(BufferAllocator allocator, String format, String delimiter, Schema schema) {
        return create(allocator, format, delimiter, schema, Map.of());
    }

    /**
     * As above with format-specific options for the core (for avro: {@code avro_schema},
     * {@code avro_framing}, {@code avro_schema_id}; the schema is then null — see {@link #schema}).
     */
    public static NativeDecoder create(
            BufferAllocator allocator,
            String format,
            String delimiter,
            Schema schema,
            Map<String, Object> formatOptions) {
        Map<String, Object> fields = new java.util.LinkedHashMap<>(formatOptions);
        fields.put("format", format);
        fields.put("delimiter", delimiter);
        String options = Json.object(fields);
        try (Arena arena = Arena.ofConfined()) {
            long schemaStruct = schema == null
                    ? 0
                    : ArrowC.exportSchema(arena, allocator, schema).address();
            return new NativeDecoder(core().decoderCreate(options, schemaStruct), allocator);
        }
    }

    /**
     * Decodes {@code count} records: {@code data} holds their bytes, {@code offsets} {@code count + 1}
     * longs. {@code extra} (may be null) has one row per record and is appended as columns to
     * the good rows, e.g. Kafka partitions and offsets.
     */
    public Decoded decode(MemorySegment data, MemorySegment offsets, int count, VectorSchemaRoot extra) {
        long[] out;
        if (extra == null) {
            out = core().decoderDecode(address(), data.address(), offsets.address(), count, 0, 0);
        } else {
            out = DirectExport.exportTo(
                    allocator,
                    extra,
                    (array, schema) ->
                            core().decoderDecode(address(), data.address(), offsets.address(), count, array, schema));
        }
        return new Decoded(new NativeBatch(out[0]), NativeBatch.ofNullable(out[1]));
    }

    /** The schema of the rows this decoder makes (before any extra columns): decodes no record. */
    public Schema schema() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment offsets = arena.allocate(Long.BYTES);
            try (NativeBatch empty = decode(offsets, offsets, 0, null).batch();
                    VectorSchemaRoot root = empty.toVectors(allocator)) {
                return root.getSchema();
            }
        }
    }

    /**
     * Infers the schema of {@code count} JSON records laid out as for {@link #decode}; records
     * that are not JSON objects are left out.
     */
    public static Schema inferJsonSchema(
            BufferAllocator allocator, MemorySegment data, MemorySegment offsets, int count) {
        return ArrowC.importSchema(
                allocator, struct -> core().inferJsonSchema(data.address(), offsets.address(), count, struct));
    }

    @Override
    protected void free(long address) {
        core().decoderFree(address);
    }
}
