package dev.sluice.peers.kstreams;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorSupplier;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;

/**
 * Kafka Streams has no bounded mode: this pass-through step, first in the topology, notes the
 * offset of each input record after its results were handed to the producer, and opens a latch
 * once every partition reached the last offset that existed at start. The caller then closes
 * the KafkaStreams instance, which flushes the producer and commits.
 *
 * <p>Assumes the input was written without transactions (as Sluice's sink writes it): the
 * record before the end offset is then a data record, not a commit marker.
 */
final class EndOfInput implements FixedKeyProcessorSupplier<byte[], Bid, Bid> {

    private final long[] lastOffset;
    private final AtomicIntegerArray reached;
    private final CountDownLatch remaining;

    /** {@code endOffsets}: partition -> [earliest, end) offsets of the input at start. */
    EndOfInput(Map<Integer, long[]> endOffsets) {
        int partitions = endOffsets.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        lastOffset = new long[partitions];
        reached = new AtomicIntegerArray(partitions);
        int pending = 0;
        for (Map.Entry<Integer, long[]> e : endOffsets.entrySet()) {
            long earliest = e.getValue()[0], end = e.getValue()[1];
            lastOffset[e.getKey()] = end - 1;
            if (end > earliest) {
                pending++;
            } else {
                reached.set(e.getKey(), 1);
            }
        }
        remaining = new CountDownLatch(pending);
    }

    boolean await(long millis) throws InterruptedException {
        return remaining.await(millis, TimeUnit.MILLISECONDS);
    }

    private void seen(int partition, long offset) {
        if (offset >= lastOffset[partition] && reached.compareAndSet(partition, 0, 1)) {
            remaining.countDown();
        }
    }

    @Override
    public FixedKeyProcessor<byte[], Bid, Bid> get() {
        return new FixedKeyProcessor<>() {
            private FixedKeyProcessorContext<byte[], Bid> context;

            @Override
            public void init(FixedKeyProcessorContext<byte[], Bid> context) {
                this.context = context;
            }

            @Override
            public void process(FixedKeyRecord<byte[], Bid> record) {
                context.forward(record);
                context.recordMetadata().ifPresent(m -> seen(m.partition(), m.offset()));
            }
        };
    }
}
