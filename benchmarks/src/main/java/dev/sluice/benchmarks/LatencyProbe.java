package dev.sluice.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end latency measured outside the engine: produces {@code {"id": N, "sent_us": T}} to the
 * input topic at a steady rate (T = wall clock in microseconds when the record is handed to the
 * producer), and reads the pipeline's output topic with {@code isolation.level=read_committed},
 * taking {@code now - sent_us} for every record. The first WARMUP seconds are sent but not
 * measured. Prints one JSON line: records measured and missing, the rate the producer reached,
 * the rate records came out of the pipeline (every record received, over the time from the first
 * send to the last receive: at a rate the pipeline cannot keep up with, its maximum), and p50,
 * p99, p99.9 and max in milliseconds.
 *
 * <p>Usage: {@code LatencyProbe BOOTSTRAP IN OUT RATE SECONDS WARMUP}
 */
public final class LatencyProbe {

    private LatencyProbe() {}

    public static void main(String[] args) throws Exception {
        String servers = args[0];
        String in = args[1];
        String out = args[2];
        int rate = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        int warmup = Integer.parseInt(args[5]);
        long total = (long) rate * (seconds + warmup);
        long firstMeasured = (long) rate * warmup;
        long[] latencyUs = new long[(int) (total - firstMeasured)];
        Arrays.fill(latencyUs, -1);

        Properties cprops = new Properties();
        cprops.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        cprops.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cprops.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "5");
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(cprops, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = new ArrayList<>();
        for (PartitionInfo p : consumer.partitionsFor(out)) {
            partitions.add(new TopicPartition(out, p.partition()));
        }
        consumer.assign(partitions);
        consumer.seekToEnd(partitions);
        partitions.forEach(consumer::position);

        AtomicReference<Exception> failure = new AtomicReference<>();
        long[] sentAtEnd = new long[1];
        long firstSend = System.nanoTime();
        long firstSendEpochUs = nowMicros();
        Thread producer = Thread.ofPlatform().start(() -> {
            Properties pprops = new Properties();
            pprops.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
            pprops.put(ProducerConfig.ACKS_CONFIG, "all");
            pprops.put(ProducerConfig.LINGER_MS_CONFIG, "1");
            // Room for a millisecond of records at the highest rates: the probe's one thread must
            // not be what limits the maximum rate (the client's default batch is 16 KiB).
            pprops.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 * 1024));
            try (KafkaProducer<byte[], byte[]> p =
                    new KafkaProducer<>(pprops, new ByteArraySerializer(), new ByteArraySerializer())) {
                long start = firstSend;
                for (long id = 0; id < total; id++) {
                    // Paced against the schedule, not the previous send: a stall is caught up.
                    long due = start + id * 1_000_000_000L / rate;
                    long wait;
                    while ((wait = due - System.nanoTime()) > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(Math.min(wait, 200_000));
                    }
                    String value = "{\"id\":" + id + ",\"sent_us\":" + nowMicros() + "}";
                    p.send(new ProducerRecord<>(in, value.getBytes(StandardCharsets.UTF_8)), (m, e) -> {
                        if (e != null) {
                            failure.compareAndSet(null, e);
                        }
                    });
                }
                p.flush();
                sentAtEnd[0] = System.nanoTime() - start;
            }
        });

        long received = 0;
        long receivedAll = 0;
        long lastReceive = firstSend;
        long deadline = Long.MAX_VALUE;
        while (received < latencyUs.length && System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(5))) {
                long now = nowMicros();
                lastReceive = System.nanoTime();
                receivedAll++;
                String v = new String(r.value(), StandardCharsets.UTF_8);
                long id = field(v, "\"id\":");
                long sent = field(v, "\"sent_us\":");
                if (id >= firstMeasured && id < total && latencyUs[(int) (id - firstMeasured)] < 0) {
                    latencyUs[(int) (id - firstMeasured)] = now - sent;
                    received++;
                }
            }
            if (!producer.isAlive() && deadline == Long.MAX_VALUE) {
                deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos(); // the tail of the output
            }
        }
        producer.join();
        consumer.close();
        if (failure.get() != null) {
            throw failure.get();
        }
        String timeline = System.getenv("LATENCY_TIMELINE");
        if (timeline != null && !timeline.isBlank()) {
            writeTimeline(java.nio.file.Path.of(timeline), latencyUs, rate, firstSendEpochUs / 1000 + warmup * 1000L);
        }
        long[] measured = Arrays.stream(latencyUs).filter(l -> l >= 0).sorted().toArray();
        System.out.println(String.format(
                Locale.ROOT,
                "{\"rate\": %d, \"achieved_rate\": %.0f, \"delivered_rate\": %.0f, \"measured\": %d, "
                        + "\"missing\": %d, \"p50_ms\": %.2f, \"p99_ms\": %.2f, \"p999_ms\": %.2f, \"max_ms\": %.2f}",
                rate,
                total / (sentAtEnd[0] / 1e9),
                receivedAll / ((lastReceive - firstSend) / 1e9),
                measured.length,
                latencyUs.length - measured.length,
                percentile(measured, 0.50),
                percentile(measured, 0.99),
                percentile(measured, 0.999),
                measured.length == 0 ? Double.NaN : measured[measured.length - 1] / 1000.0));
    }

    /** Per 100 ms of the measured records' send schedule: epoch ms, count, p99 ms, max ms. */
    private static void writeTimeline(java.nio.file.Path file, long[] latencyUs, int rate, long firstEpochMs)
            throws java.io.IOException {
        int perSlice = Math.max(1, rate / 10);
        StringBuilder lines = new StringBuilder("epoch_ms count p99_ms max_ms\n");
        for (int from = 0; from < latencyUs.length; from += perSlice) {
            long[] slice = Arrays.stream(latencyUs, from, Math.min(latencyUs.length, from + perSlice))
                    .filter(l -> l >= 0)
                    .sorted()
                    .toArray();
            lines.append(String.format(
                    Locale.ROOT,
                    "%d %d %.2f %.2f%n",
                    firstEpochMs + (long) from * 1000 / rate,
                    slice.length,
                    percentile(slice, 0.99),
                    slice.length == 0 ? Double.NaN : slice[slice.length - 1] / 1000.0));
        }
        java.nio.file.Files.writeString(file, lines);
    }

    private static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** The number after {@code name} in a flat JSON object, e.g. {@code "id":}. */
    private static long field(String json, String name) {
        int at = json.indexOf(name);
        if (at < 0) {
            return -1;
        }
        int i = at + name.length();
        while (json.charAt(i) == ' ') {
            i++;
        }
        long value = 0;
        for (; i < json.length() && Character.isDigit(json.charAt(i)); i++) {
            value = value * 10 + (json.charAt(i) - '0');
        }
        return value;
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int index = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, index)] / 1000.0;
    }
}
