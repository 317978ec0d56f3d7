package dev.sluice.connector.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Kafka metadata as Arrow columns appended to the decoded rows: {@code _partition} (int),
 * {@code _offset} (bigint), {@code _timestamp} (timestamp ms UTC), {@code _key} (binary),
 * {@code _headers} (a JSON object of the headers, values as UTF-8 text, or {@code {"hex": …}}
 * when they are not UTF-8).
 * Filled from primitives; the core keeps only the rows of records that decoded.
 */
final class MetadataColumns {

    /** The schema of raw records (the core's decoder produces it); a tombstone's value is NULL. */
    static final Schema RAW_SCHEMA =
            new Schema(List.of(new Field("value", FieldType.nullable(ArrowType.Binary.INSTANCE), null)));

    /**
     * For raw records only: which records had no value (a tombstone), a column the core's raw
     * decoder turns into the value's NULLs and drops (the slab holds a tombstone as no bytes).
     */
    static final String VALUE_IS_NULL = "_sluice_value_is_null";

    private MetadataColumns() {}

    static VectorSchemaRoot root(List<String> columns, BufferAllocator allocator) {
        List<FieldVector> vectors = new ArrayList<>();
        for (String column : columns) {
            vectors.add(
                    switch (column) {
                        case "_partition" ->
                            new IntVector(
                                    new Field(column, FieldType.notNullable(new ArrowType.Int(32, true)), null),
                                    allocator);
                        case "_offset" ->
                            new BigIntVector(
                                    new Field(column, FieldType.notNullable(new ArrowType.Int(64, true)), null),
                                    allocator);
                        case "_timestamp" ->
                            new TimeStampMilliTZVector(
                                    new Field(
                                            column,
                                            FieldType.notNullable(new ArrowType.Timestamp(
                                                    org.apache.arrow.vector.types.TimeUnit.MILLISECOND, "UTC")),
                                            null),
                                    allocator);
                        case "_key" ->
                            new VarBinaryVector(
                                    new Field(column, FieldType.nullable(ArrowType.Binary.INSTANCE), null), allocator);
                        case VALUE_IS_NULL ->
                            new BitVector(
                                    new Field(column, FieldType.notNullable(ArrowType.Bool.INSTANCE), null), allocator);
                        case "_headers" ->
                            new VarCharVector(
                                    new Field(column, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null), allocator);
                        default -> throw new IllegalArgumentException("unknown metadata column " + column);
                    });
        }
        return new VectorSchemaRoot(vectors);
    }

    /** Refills {@code root} (new buffers each time: the previous batch may still share the old ones). */
    static void fill(VectorSchemaRoot root, RecordSlab slab) {
        int n = slab.count();
        root.allocateNew();
        for (FieldVector vector : root.getFieldVectors()) {
            switch (vector) {
                case IntVector v -> {
                    for (int i = 0; i < n; i++) {
                        v.setSafe(i, slab.partition(i));
                    }
                }
                case BigIntVector v -> {
                    for (int i = 0; i < n; i++) {
                        v.setSafe(i, slab.offset(i));
                    }
                }
                case TimeStampMilliTZVector v -> {
                    for (int i = 0; i < n; i++) {
                        v.setSafe(i, slab.timestamp(i));
                    }
                }
                case VarBinaryVector v -> {
                    for (int i = 0; i < n; i++) {
                        byte[] key = slab.key(i);
                        if (key == null) {
                            v.setNull(i);
                        } else {
                            v.setSafe(i, key);
                        }
                    }
                }
                case VarCharVector v -> {
                    for (int i = 0; i < n; i++) {
                        v.setSafe(i, headersJson(slab.headers(i)));
                    }
                }
                case BitVector v -> {
                    for (int i = 0; i < n; i++) {
                        v.setSafe(i, slab.valueIsNull(i) ? 1 : 0);
                    }
                }
                default -> throw new IllegalStateException("unexpected metadata vector " + vector.getField());
            }
        }
        root.setRowCount(n);
    }

    private static final com.fasterxml.jackson.core.JsonFactory JSON = new com.fasterxml.jackson.core.JsonFactory();

    /**
     * The record's headers as a JSON object; a repeated key keeps its last value. A value is its
     * UTF-8 text, or {@code {"hex": "…"}} when its bytes are not UTF-8 (binary trace ids, Avro):
     * replacing them with U+FFFD would hand on other bytes as if they were the header's.
     */
    static byte[] headersJson(org.apache.kafka.common.header.Headers headers) {
        Map<String, byte[]> last = new java.util.LinkedHashMap<>();
        if (headers != null) {
            for (org.apache.kafka.common.header.Header header : headers) {
                last.put(header.key(), header.value());
            }
        }
        var out = new java.io.ByteArrayOutputStream();
        try (var json = JSON.createGenerator(out)) {
            json.writeStartObject();
            for (Map.Entry<String, byte[]> entry : last.entrySet()) {
                String text = entry.getValue() == null ? null : utf8(entry.getValue());
                if (entry.getValue() != null && text == null) {
                    json.writeObjectFieldStart(entry.getKey());
                    json.writeStringField("hex", java.util.HexFormat.of().formatHex(entry.getValue()));
                    json.writeEndObject();
                } else {
                    json.writeStringField(entry.getKey(), text);
                }
            }
            json.writeEndObject();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toByteArray();
    }

    /** {@code bytes} as text if they are UTF-8, else null. */
    private static String utf8(byte[] bytes) {
        try {
            return java.nio.charset.StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(java.nio.ByteBuffer.wrap(bytes))
                    .toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            return null;
        }
    }

    /** The row schema of a change stream plus its {@code _op} column (i, u, d). */
    static Schema withOp(Schema row) {
        List<Field> fields = new ArrayList<>(row.getFields());
        fields.add(new Field(OP, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null));
        return new Schema(fields);
    }

    /** The change-operation column of CDC rows, sent by the Kafka sink as the {@code op} header. */
    static final String OP = "_op";

    /** {@code values}'s fields followed by the metadata fields, if any. */
    static Schema append(Schema values, VectorSchemaRoot meta) {
        if (meta == null) {
            return values;
        }
        List<Field> fields = new ArrayList<>(values.getFields());
        meta.getSchema().getFields().stream()
                .filter(f -> !f.getName().equals(VALUE_IS_NULL))
                .forEach(fields::add);
        return new Schema(fields);
    }
}
