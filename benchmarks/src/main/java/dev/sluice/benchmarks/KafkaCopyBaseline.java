package dev.sluice.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The I/O ceiling for Kafka → Kafka: a plain kafka-clients loop that consumes {@code count}
 * records and produces each value unchanged, with the client settings Sluice uses (512 KiB
 * batches, 20 ms linger, lz4, acks=all, idempotence, one request in flight; fetches of at least
 * 64 KiB). Prints one
 * JSON line: events, seconds (the copy loop), cpu_seconds (the whole process, JVM start
 * included, as Sluice reports its own), bytes.
 *
 * <p>Usage: {@code KafkaCopyBaseline BOOTSTRAP IN_TOPIC OUT_TOPIC COUNT}
 */
public final class KafkaCopyBaseline {

    private KafkaCopyBaseline() {}

    public static void main(String[] args) {
        String servers = args[0];
        String in = args[1];
        String out = args[2];
        long count = Long.parseLong(args[3]);
        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "baseline-" + UUID.randomUUID());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumerProps.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "8192");
        consumerProps.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "65536");
        consumerProps.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "20");
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        producerProps.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        producerProps.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(512 * 1024));
        producerProps.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        producerProps.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long start = System.nanoTime();
        long copied = 0;
        long bytes = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                        new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
            consumer.subscribe(List.of(in));
            while (copied < count) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    producer.send(new ProducerRecord<>(out, record.key(), record.value()));
                    bytes += record.value().length;
                    copied++;
                }
            }
            producer.flush();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        double cpu = os.getProcessCpuTime() / 1e9;
        System.out.printf(
                "{\"events\": %d, \"seconds\": %.3f, \"cpu_seconds\": %.3f, \"bytes\": %d}%n",
                copied, seconds, cpu, bytes);
    }
}
