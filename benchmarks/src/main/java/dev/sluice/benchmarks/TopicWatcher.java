package dev.sluice.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Watches a topic from outside the pipeline: assigns all its partitions from the current end
 * and prints {@code <epoch ms> <records so far>} whenever records arrive, until stdin closes.
 * The restart benchmark reads it to time the first new output record.
 *
 * <p>Usage: {@code TopicWatcher BOOTSTRAP TOPIC}
 */
public final class TopicWatcher {

    private TopicWatcher() {}

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        Thread.ofPlatform().daemon().start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // until the benchmark closes our stdin
                }
            } catch (java.io.IOException ignored) {
                // the benchmark is gone
            }
            System.exit(0);
        });
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(args[1])) {
                partitions.add(new TopicPartition(args[1], p.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);
            System.out.println(System.currentTimeMillis() + " 0");
            System.out.flush();
            long seen = 0;
            while (true) {
                int n = consumer.poll(Duration.ofMillis(20)).count();
                if (n > 0) {
                    seen += n;
                    System.out.println(System.currentTimeMillis() + " " + seen);
                    System.out.flush();
                }
            }
        }
    }
}
