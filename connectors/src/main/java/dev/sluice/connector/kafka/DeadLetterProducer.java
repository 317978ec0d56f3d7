package dev.sluice.connector.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Sends records that failed to decode to a dead-letter topic: the original key and value, and
 * the error and origin in headers ({@code sluice.error}, {@code sluice.topic},
 * {@code sluice.partition}, {@code sluice.offset}). Flushed before the batch's offsets can be
 * committed, so a dead letter is never lost. Under exactly_once it writes in the lane's
 * transaction, so a dead letter becomes visible with, and only with, its epoch's offsets.
 */
final class DeadLetterProducer implements AutoCloseable {

    /** Its own producer; null when it writes in {@link #transaction}. */
    private final KafkaProducer<byte[], byte[]> producer;

    private final KafkaTransaction transaction;
    private final String topic;
    private volatile Exception failure;

    DeadLetterProducer(Properties clientProperties, String topic) {
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.putIfAbsent(
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
                Integer.toString(KafkaClientDefaults.MAX_IN_FLIGHT));
        this.producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        this.transaction = null;
        this.topic = topic;
    }

    /** Writes in the lane's transaction (whose producer it does not own). */
    DeadLetterProducer(KafkaTransaction transaction, String topic) {
        this.producer = null;
        this.transaction = transaction;
        this.topic = topic;
    }

    void send(byte[] value, byte[] key, String error, String fromTopic, int partition, long offset) {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, key, value);
        record.headers()
                .add("sluice.error", error.getBytes(StandardCharsets.UTF_8))
                .add("sluice.topic", fromTopic.getBytes(StandardCharsets.UTF_8))
                .add("sluice.partition", Integer.toString(partition).getBytes(StandardCharsets.UTF_8))
                .add("sluice.offset", Long.toString(offset).getBytes(StandardCharsets.UTF_8));
        KafkaProducer<byte[], byte[]> to = producer != null ? producer : transaction.begin();
        to.send(record, (metadata, e) -> {
            if (e != null) {
                failure = e;
            }
        });
    }

    /** Waits until every dead letter is acknowledged; throws if one could not be written. */
    void flush() {
        if (producer != null) {
            producer.flush();
        } else {
            transaction.flush();
        }
        if (failure != null) {
            throw new IllegalStateException(
                    "cannot write to dead-letter topic " + topic + ": " + failure.getMessage(), failure);
        }
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.close();
        }
    }
}
