package dev.sluice.benchmarks;

import dev.sluice.connector.kafka.KafkaClientDefaults;
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
 * records and produces each value unchanged, with the client settings Sluice uses (taken from
 * {@link KafkaClientDefaults}, as the Kafka source with its default batch of 8 192 records and the
 * sink with lz4 set them) unless {@code kafka-defaults} asks for the clients' own defaults.
 * {@code consumer.NAME=VALUE} and {@code producer.NAME=VALUE} arguments override single settings.
 * Prints one JSON line: events, seconds (the copy loop), cpu_seconds (the whole process, JVM
 * start included, as Sluice reports its own), bytes.
 *
 * <p>Usage: {@code KafkaCopyBaseline BOOTSTRAP IN_TOPIC OUT_TOPIC COUNT [kafka-defaults]
 * [consumer.NAME=VALUE | producer.NAME=VALUE ...]}
 */
public final class KafkaCopyBaseline {

    private KafkaCopyBaseline() {}

    public static void main(String[] args) {
        String servers = args[0];
        String in = args[1];
        String out = args[2];
        long count = Long.parseLong(args[3]);
        Properties consumerProps = new Properties();
        Properties producerProps = new Properties();
        boolean kafkaDefaults = false;
        for (int i = 4; i < args.length; i++) {
            String arg = args[i];
            int eq = arg.indexOf('=');
            if (arg.equals("kafka-defaults")) {
                kafkaDefaults = true;
            } else if (arg.startsWith("consumer.") && eq > 0) {
                consumerProps.put(arg.substring("consumer.".length(), eq), arg.substring(eq + 1));
            } else if (arg.startsWith("producer.") && eq > 0) {
                producerProps.put(arg.substring("producer.".length(), eq), arg.substring(eq + 1));
            } else {
                throw new IllegalArgumentException(
                        "not kafka-defaults, consumer.NAME=VALUE or producer.NAME=VALUE: " + arg);
            }
        }
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "baseline-" + UUID.randomUUID());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        if (!kafkaDefaults) {
            KafkaClientDefaults.consumer(consumerProps, 8192);
            KafkaClientDefaults.producer(producerProps, "lz4");
        }
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
