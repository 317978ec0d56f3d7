package dev.sluice.connector.kafka;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The values of a batch of Kafka records copied once into off-heap memory, straight from the
 * consumer's own buffers ({@link ValueViews}), with Arrow-style offsets ({@code count + 1}
 * longs) for the core's decoder, and each record's origin for
 * metadata columns, dead letters and checkpoint positions. Reused batch after batch; it only
 * grows (old segments stay in the arena until close, a bounded cost of doubling).
 */
final class RecordSlab implements AutoCloseable {

    private final Arena arena = Arena.ofShared();
    private MemorySegment data;
    private MemorySegment offsets;
    private long used;
    private int count;
    private String[] topics;
    private int[] partitions;
    private long[] recordOffsets;
    private long[] timestamps;
    private byte[][] keys;
    private boolean[] nullValues;
    private org.apache.kafka.common.header.Headers[] headers;

    RecordSlab(int expectedRecords) {
        int capacity = Math.max(16, expectedRecords);
        data = arena.allocate(Math.max(1 << 16, capacity * 256L), 8);
        offsets = arena.allocate((capacity + 1L) * 8, 8);
        topics = new String[capacity];
        partitions = new int[capacity];
        recordOffsets = new long[capacity];
        timestamps = new long[capacity];
        keys = new byte[capacity][];
        nullValues = new boolean[capacity];
        headers = new org.apache.kafka.common.header.Headers[capacity];
    }

    void add(ConsumerRecord<byte[], ByteBuffer> record) {
        ByteBuffer value = record.value();
        int length = value == null ? 0 : value.remaining();
        ensure(length);
        if (length > 0 && value.hasArray()) {
            MemorySegment.copy(value.array(), value.arrayOffset() + value.position(), data, JAVA_BYTE, used, length);
        } else if (length > 0) {
            MemorySegment.copy(MemorySegment.ofBuffer(value), 0, data, used, length);
        }
        offsets.setAtIndex(JAVA_LONG, count, used);
        used += length;
        topics[count] = record.topic();
        partitions[count] = record.partition();
        recordOffsets[count] = record.offset();
        timestamps[count] = record.timestamp();
        keys[count] = record.key();
        nullValues[count] = value == null;
        headers[count] = record.headers();
        count++;
        offsets.setAtIndex(JAVA_LONG, count, used);
    }

    private void ensure(int bytes) {
        if (count + 1 >= topics.length) {
            int capacity = topics.length * 2;
            MemorySegment grown = arena.allocate((capacity + 1L) * 8, 8);
            MemorySegment.copy(offsets, 0, grown, 0, (count + 1L) * 8);
            offsets = grown;
            topics = Arrays.copyOf(topics, capacity);
            partitions = Arrays.copyOf(partitions, capacity);
            recordOffsets = Arrays.copyOf(recordOffsets, capacity);
            timestamps = Arrays.copyOf(timestamps, capacity);
            keys = Arrays.copyOf(keys, capacity);
            nullValues = Arrays.copyOf(nullValues, capacity);
            headers = Arrays.copyOf(headers, capacity);
        }
        if (used + bytes > data.byteSize()) {
            MemorySegment grown = arena.allocate(Math.max(data.byteSize() * 2, used + bytes), 8);
            MemorySegment.copy(data, 0, grown, 0, used);
            data = grown;
        }
    }

    int count() {
        return count;
    }

    MemorySegment data() {
        return data;
    }

    MemorySegment offsets() {
        return offsets;
    }

    String topic(int i) {
        return topics[i];
    }

    int partition(int i) {
        return partitions[i];
    }

    long offset(int i) {
        return recordOffsets[i];
    }

    long timestamp(int i) {
        return timestamps[i];
    }

    /** The earliest record timestamp of the slab (epoch ms), or -1 when no record carries one. */
    long oldestTimestamp() {
        long oldest = Long.MAX_VALUE;
        for (int i = 0; i < count; i++) {
            if (timestamps[i] >= 0 && timestamps[i] < oldest) {
                oldest = timestamps[i];
            }
        }
        return oldest == Long.MAX_VALUE ? -1 : oldest;
    }

    byte[] key(int i) {
        return keys[i];
    }

    /** Whether record {@code i} had no value (a tombstone), held as no bytes. */
    boolean valueIsNull(int i) {
        return nullValues[i];
    }

    org.apache.kafka.common.header.Headers headers(int i) {
        return headers[i];
    }

    /** Records, per partition, the offset after the last buffered record. */
    void positionsInto(Map<TopicPartition, Long> positions) {
        for (int i = 0; i < count; i++) {
            boolean lastOfRun =
                    i == count - 1 || partitions[i + 1] != partitions[i] || !topics[i + 1].equals(topics[i]);
            if (lastOfRun) {
                positions.put(new TopicPartition(topics[i], partitions[i]), recordOffsets[i] + 1);
            }
        }
    }

    /** Forgets the buffered records; the memory is kept for the next batch. */
    void clear() {
        // Only the slots this batch used: the arrays keep the capacity of the largest batch
        // (a catch-up), and the batches after it are often a few hundred records.
        Arrays.fill(keys, 0, count, null);
        Arrays.fill(headers, 0, count, null);
        used = 0;
        count = 0;
    }

    @Override
    public void close() {
        arena.close();
    }
}
