package dev.sluice.connector.kafka;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Assumptions;

/**
 * Talks to the real broker that ci/test.sh starts (ci/kafka.sh); its address comes from
 * SLUICE_KAFKA_BOOTSTRAP. Runs pipelines as separate processes, so they can be killed.
 */
public final class KafkaTestSupport {

    private KafkaTestSupport() {}

    public static String bootstrap() {
        String servers = System.getenv("SLUICE_KAFKA_BOOTSTRAP");
        Assumptions.assumeTrue(
                servers != null && !servers.isBlank(),
                "SLUICE_KAFKA_BOOTSTRAP is not set: start a broker with ci/kafka.sh start (ci/test.sh does)");
        return servers;
    }

    /** The test broker's SASL listener (ci/kafka.sh sasl-bootstrap), with users admin and alice. */
    public static String saslBootstrap() {
        String servers = System.getenv("SLUICE_KAFKA_SASL_BOOTSTRAP");
        Assumptions.assumeTrue(
                servers != null && !servers.isBlank(),
                "SLUICE_KAFKA_SASL_BOOTSTRAP is not set: ci/test.sh sets it from ci/kafka.sh sasl-bootstrap");
        return servers;
    }

    public static String uniqueTopic(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    public static void createTopics(String servers, int partitions, String... topics) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            List<NewTopic> newTopics = new ArrayList<>();
            for (String topic : topics) {
                newTopics.add(new NewTopic(topic, partitions, (short) 1));
            }
            admin.createTopics(newTopics).all().get(30, TimeUnit.SECONDS);
        }
    }

    public static void produce(String servers, String topic, List<String[]> keyValues) {
        produce(servers, topic, keyValues, Map.of());
    }

    /** As above, with more producer properties. */
    public static void produce(String servers, String topic, List<String[]> keyValues, Map<String, String> more) {
        List<byte[][]> bytes = new java.util.ArrayList<>();
        for (String[] kv : keyValues) {
            bytes.add(new byte[][] {
                kv[0] == null ? null : kv[0].getBytes(StandardCharsets.UTF_8), kv[1].getBytes(StandardCharsets.UTF_8)
            });
        }
        produceBytes(servers, topic, bytes, more);
    }

    /** Writes (key, value) pairs of bytes, a null key as none. */
    public static void produceBytes(String servers, String topic, List<byte[][]> keyValues, Map<String, String> more) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        // One request in flight: a topic created just before is exposed to KAFKA-15591 (see
        // KafkaSink), where a second in-flight request overtakes a refused first one and the
        // first is then refused with OUT_OF_ORDER_SEQUENCE_NUMBER until delivery.timeout.ms.
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        props.putAll(more);
        java.util.concurrent.atomic.AtomicReference<Exception> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (byte[][] kv : keyValues) {
                producer.send(new ProducerRecord<>(topic, kv[0], kv[1]), (metadata, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("the test input could not be written to " + topic, failure.get());
        }
    }

    /** Reads a topic from the beginning until {@code expected} records arrived or the time is up. */
    public static List<ConsumerRecord<byte[], byte[]>> consumeAll(
            String servers, String topic, int expected, Duration within) {
        return consumeUntil(servers, topic, records -> records.size() >= expected, within);
    }

    /**
     * Reads a topic from the beginning until {@code done} holds for what arrived (checked after
     * every poll) or the time is up, then a short grace period for anything still in flight.
     */
    public static List<ConsumerRecord<byte[], byte[]>> consumeUntil(
            String servers,
            String topic,
            java.util.function.Predicate<List<ConsumerRecord<byte[], byte[]>>> done,
            Duration within) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "verify-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long deadline = System.nanoTime() + within.toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (!done.test(out) && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            // Anything still in flight (duplicates) within a short grace period.
            long grace = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            while (System.nanoTime() < grace) {
                consumer.poll(Duration.ofMillis(100)).forEach(out::add);
            }
        }
        return out;
    }

    /** Counts a topic's records in the background, to time actions by the pipeline's progress. */
    public static final class OutputCounter implements AutoCloseable {
        private final java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong();
        private final Thread thread;
        private final String servers;
        private final String topic;
        private volatile boolean running = true;

        public OutputCounter(String servers, String topic) {
            this.servers = servers;
            this.topic = topic;
            Properties props = new Properties();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
            props.put(ConsumerConfig.GROUP_ID_CONFIG, "count-" + UUID.randomUUID());
            props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            thread = Thread.ofPlatform().daemon().start(() -> {
                try (KafkaConsumer<byte[], byte[]> consumer =
                        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(List.of(topic));
                    while (running) {
                        count.addAndGet(consumer.poll(Duration.ofMillis(100)).count());
                    }
                }
            });
        }

        public long count() {
            return count.get();
        }

        /** Waits until more than {@code seen} records were counted; fails the test after {@code within}. */
        public void awaitMoreThan(long seen, Duration within) throws InterruptedException {
            long deadline = System.nanoTime() + within.toNanos();
            while (count.get() <= seen) {
                if (System.nanoTime() >= deadline) {
                    throw new AssertionError("no more than " + seen + " records in " + topic + " after " + within);
                }
                Thread.sleep(20);
            }
        }

        /**
         * Waits until every record now in the topic is counted (call it when nothing writes to
         * it); returns the count. What is counted after this was written after this.
         */
        public long awaitCaughtUp(Duration within) throws Exception {
            long end = endOffsets(servers, topic);
            long deadline = System.nanoTime() + within.toNanos();
            while (count.get() < end) {
                if (System.nanoTime() >= deadline) {
                    throw new AssertionError(
                            "counted " + count.get() + " of the " + end + " records in " + topic + " after " + within);
                }
                Thread.sleep(20);
            }
            return count.get();
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(5_000);
        }
    }

    /** The sum of a topic's end offsets: how many records it holds. */
    public static long endOffsets(String servers, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            var partitions = admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get(topic)
                    .partitions();
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest =
                    new java.util.HashMap<>();
            for (var p : partitions) {
                latest.put(
                        new org.apache.kafka.common.TopicPartition(topic, p.partition()),
                        org.apache.kafka.clients.admin.OffsetSpec.latest());
            }
            long sum = 0;
            for (var info :
                    admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values()) {
                sum += info.offset();
            }
            return sum;
        }
    }

    /** Starts {@code sluice run} in a child JVM with the test class path. */
    public static Process startPipeline(Path pipeline, Path stateDir, Path log) throws IOException {
        List<String> command =
                dev.sluice.cli.ChildJvm.command("512m", "run", pipeline.toString(), "--state-dir", stateDir.toString());
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .directory(new File(System.getProperty("user.dir")))
                .start();
    }
}
