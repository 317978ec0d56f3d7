package dev.sluice.connector.kafka;

import dev.sluice.bridge.NativeDecoder;
import dev.sluice.plugin.InvalidSettingException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Infers the schema of a JSON topic from a sample: up to {@code rows} records from the start of
 * every partition, read by a throw-away consumer outside the pipeline's group (nothing is
 * committed), and inferred in the core.
 */
final class SchemaSampler {

    private static final Duration LIMIT = Duration.ofSeconds(10);

    private SchemaSampler() {}

    static Schema inferJson(Properties clientProperties, List<String> topics, int rows, BufferAllocator allocator) {
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "sluice-schema-sample-" + UUID.randomUUID());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(rows));
        KafkaClientDefaults.readCommitted(props);
        try (KafkaConsumer<byte[], ByteBuffer> consumer =
                        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ValueViews());
                RecordSlab sample = new RecordSlab(rows)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : topics) {
                consumer.partitionsFor(topic).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + LIMIT.toNanos();
            while (sample.count() < rows && System.nanoTime() < deadline && !atEnd(consumer, ends)) {
                for (ConsumerRecord<byte[], ByteBuffer> record : consumer.poll(Duration.ofMillis(200))) {
                    if (sample.count() < rows) {
                        sample.add(record);
                    }
                }
            }
            if (sample.count() == 0) {
                throw new InvalidSettingException(
                        KafkaSource.SCHEMA,
                        "cannot infer the schema: " + topics + " has no records yet; declare `schema:`");
            }
            try {
                return NativeDecoder.inferJsonSchema(allocator, sample.data(), sample.offsets(), sample.count());
            } catch (RuntimeException e) {
                throw new InvalidSettingException(
                        KafkaSource.SCHEMA,
                        "cannot infer the schema from " + sample.count() + " records of " + topics + ": "
                                + e.getMessage() + "; declare `schema:`",
                        e);
            }
        }
    }

    private static boolean atEnd(KafkaConsumer<byte[], ByteBuffer> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            if (consumer.position(end.getKey()) < end.getValue()) {
                return false;
            }
        }
        return true;
    }
}
