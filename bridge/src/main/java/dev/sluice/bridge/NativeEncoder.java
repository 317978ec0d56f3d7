package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** Encodes batches to bytes in the core (JSON lines, a JSON array, CSV, raw bytes, Avro). */
public final class NativeEncoder {

    /**
     * Encoded rows for one message per row, owning the native buffer they live in until
     * {@link #close()} (which may run on another thread than the encoding). Record {@code i}
     * is {@code data[offset(i) .. offset(i+1) - separator]}: JSON and CSV records are each
     * followed by a newline that is not part of them ({@code separator} 1), raw and Avro
     * records are back to back (0). Keys, when asked for, are always newline-separated.
     */
    public static final class Records implements AutoCloseable {
        private final long buffer;
        private final MemorySegment data;
        private final MemorySegment offsets;
        private final MemorySegment keys;
        private final MemorySegment keyOffsets;
        private final int count;
        private final int separator;
        private final AtomicBoolean closed = new AtomicBoolean();

        private Records(
                long buffer,
                MemorySegment data,
                MemorySegment offsets,
                MemorySegment keys,
                MemorySegment keyOffsets,
                int count,
                int separator) {
            this.buffer = buffer;
            this.data = data;
            this.offsets = offsets;
            this.keys = keys;
            this.keyOffsets = keyOffsets;
            this.count = count;
            this.separator = separator;
        }

        public MemorySegment data() {
            return data;
        }

        public MemorySegment keys() {
            return keys;
        }

        public int count() {
            return count;
        }

        public long start(int i) {
            return offsets.getAtIndex(JAVA_LONG, i);
        }

        /** Length of record {@code i} without its separator. */
        public long length(int i) {
            return offsets.getAtIndex(JAVA_LONG, i + 1) - start(i) - separator;
        }

        public boolean hasKeys() {
            return keyOffsets.byteSize() > 0;
        }

        public long keyStart(int i) {
            return keyOffsets.getAtIndex(JAVA_LONG, i);
        }

        /** Length of key {@code i} without its separator; -1 for a NULL key (no message key). */
        public long keyLength(int i) {
            return keyOffsets.getAtIndex(JAVA_LONG, i + 1) - keyStart(i) - 1;
        }

        /** Frees the native buffer; the segments above are invalid afterwards. Idempotent. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                NativeCore.bridge().bufferFree(buffer);
            }
        }
    }

    /** What {@code sluice_buffer_keys} reports for an encoder without key columns: no keys. */
    private static final long[] NO_KEYS = {0, 0, 0};

    private final String optionsJson;
    /** Bytes after each record that are not part of it: lines end in a newline. */
    private final int separator;
    /**
     * Whether key columns were given. Without them the keys are not asked for: besides a call
     * per batch, that saves the first batch the linking of a downcall shape no other per-batch
     * call has (~10 ms with FFM on two cores; benchmarks/README.md, "Linking").
     */
    private final boolean encodesKeys;

    /** {@code format}: json, jsonarray or csv. */
    public NativeEncoder(String format, boolean header) {
        this(format, header, false, List.of());
    }

    /** With {@code recordOffsets}, rows can be read one by one; {@code keyColumns} also encodes keys. */
    public NativeEncoder(String format, boolean header, boolean recordOffsets, List<String> keyColumns) {
        this(format, header, recordOffsets, keyColumns, List.of());
    }

    /** As above, leaving {@code excludeColumns} out of the encoded records. */
    public NativeEncoder(
            String format,
            boolean header,
            boolean recordOffsets,
            List<String> keyColumns,
            List<String> excludeColumns) {
        this(format, header, recordOffsets, keyColumns, excludeColumns, Map.of());
    }

    /** As above, with format-specific options for the core (for avro: {@code avro_schema}). */
    public NativeEncoder(
            String format,
            boolean header,
            boolean recordOffsets,
            List<String> keyColumns,
            List<String> excludeColumns,
            Map<String, Object> formatOptions) {
        Map<String, Object> fields = new java.util.LinkedHashMap<>(formatOptions);
        fields.putAll(Map.of(
                "format",
                format,
                "header",
                header,
                "record_offsets",
                recordOffsets,
                "key_columns",
                keyColumns,
                "exclude_columns",
                excludeColumns));
        this.optionsJson = Json.object(fields);
        this.separator = format.equals("raw") || format.equals("avro") ? 0 : 1;
        this.encodesKeys = !keyColumns.isEmpty();
    }

    /** The rows of {@code batch} as JSON lines: how a dead letter holds rows a stage refused. */
    public static byte[] jsonLines(NativeBatch batch) {
        byte[][] bytes = new byte[1][];
        new NativeEncoder("json", false).encode(batch, data -> bytes[0] = data.toArray(ValueLayout.JAVA_BYTE));
        return bytes[0];
    }

    /**
     * Encodes {@code batch} and hands the bytes to {@code consumer}; the segment is valid only
     * during the call (it is freed right after).
     */
    public void encode(NativeBatch batch, Consumer<MemorySegment> consumer) {
        CoreBridge core = NativeCore.bridge();
        long buffer = core.encode(batch.handle(), optionsJson);
        try {
            long[] data = core.bufferData(buffer);
            consumer.accept(segment(data[0], data[1]));
        } finally {
            core.bufferFree(buffer);
        }
    }

    /** Encodes {@code batch} as one record per row (needs {@code recordOffsets}); the caller closes the result. */
    public Records encodeRecords(NativeBatch batch) {
        CoreBridge core = NativeCore.bridge();
        long buffer = core.encode(batch.handle(), optionsJson);
        try {
            long[] data = core.bufferData(buffer);
            long[] offsets = core.bufferOffsets(buffer);
            long[] keys = encodesKeys ? core.bufferKeys(buffer) : NO_KEYS;
            if (offsets[1] == 0) {
                throw new IllegalStateException("encoder built without record offsets");
            }
            MemorySegment keyOffsets = segment(keys[1], keys[2] * 8);
            long keyBytes = keys[2] == 0 ? 0 : keyOffsets.getAtIndex(JAVA_LONG, keys[2] - 1);
            return new Records(
                    buffer,
                    segment(data[0], data[1]),
                    segment(offsets[0], offsets[1] * 8),
                    segment(keys[0], keyBytes),
                    keyOffsets,
                    (int) (offsets[1] - 1),
                    separator);
        } catch (RuntimeException e) {
            core.bufferFree(buffer);
            throw e;
        }
    }

    /** Encodes {@code batch} as one record per row and hands them to {@code consumer}, freeing them after. */
    public void encodeRecords(NativeBatch batch, Consumer<Records> consumer) {
        try (Records records = encodeRecords(batch)) {
            consumer.accept(records);
        }
    }

    private static MemorySegment segment(long address, long size) {
        return size == 0 ? MemorySegment.NULL : MemorySegment.ofAddress(address).reinterpret(size);
    }
}
