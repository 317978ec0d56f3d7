package dev.sluice.connector.kafka;

import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The Kafka client settings Sluice starts from, in one place: the source's consumer, the sink's
 * producer, and the benchmarks' plain consume→produce ceiling all take them from here, so the
 * ceiling is measured with exactly the settings Sluice runs with. Each is only a default: a
 * pipeline's {@code properties:} overrides it (except where a comment says the setting is
 * required). Why each value: benchmarks/README.md, "Which Kafka client settings matter". The
 * Nexmark peers (benchmarks/peers: Flink, Kafka Streams) build apart and repeat these values by
 * hand: change them there too.
 */
public final class KafkaClientDefaults {

    /**
     * One produce request in flight per broker. With more, a partition that this producer has
     * not written yet can lose its first batch for good (KAFKA-15591, fixed only in Kafka 4.5):
     * a broker that has published a partition's metadata but not yet opened the partition
     * (a topic just created, partitions just added; seconds under load) refuses request A with
     * NOT_LEADER_OR_FOLLOWER, request B overtakes it and is accepted (a broker without state for
     * the producer accepts any first sequence), and every retry of A then gets
     * OUT_OF_ORDER_SEQUENCE_NUMBER until delivery.timeout.ms (2 min) fails the run. With one
     * request in flight the retried A always goes before B. (properties: can raise it.)
     */
    public static final int MAX_IN_FLIGHT = 1;

    private static final int MIB = 1024 * 1024;

    private KafkaClientDefaults() {}

    /**
     * Client metrics: Sluice reports its own; Kafka's JMX registration and metrics push cost tens
     * of milliseconds per client at start.
     */
    public static void metrics(Properties props) {
        props.putIfAbsent(CommonClientConfigs.METRIC_REPORTER_CLASSES_CONFIG, "");
        props.putIfAbsent(CommonClientConfigs.ENABLE_METRICS_PUSH_CONFIG, "false");
    }

    /** A consumer that hands out up to {@code maxPollRecords} records per poll (a batch). */
    public static void consumer(Properties props, int maxPollRecords) {
        metrics(props);
        // Offsets are committed with the checkpoint, never by the client on its own.
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(maxPollRecords));
        readCommitted(props);
        // A fetch waits at most 10 ms for 64 KiB: at low rates that wait is part of every record's
        // latency (at 20 ms p99 end to end was 38-53 ms, at 10 ms 28-30 ms, at 5 ms 18-21 ms but
        // with 15-25 % more CPU per record; latency runs of 2026-12-03).
        props.putIfAbsent(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "65536");
        props.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        // Fewer, larger fetches (the client's default is 1 MiB per partition) and a socket buffer
        // that holds one: with both the plain copy loop used 14-16 % less CPU per record and
        // Sluice ran 9-15 % faster (kafka-settings runs of 2026-12-03). fetch.max.bytes (50 MiB)
        // still bounds one fetch over many partitions.
        props.putIfAbsent(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(8 * MIB));
        props.putIfAbsent(ConsumerConfig.RECEIVE_BUFFER_CONFIG, Integer.toString(MIB));
    }

    /**
     * Records of aborted transactions are no input (the client's default reads them: an upstream
     * exactly-once pipeline's epoch aborted by a crash came out twice downstream). On topics no
     * transaction writes it changes nothing; {@code properties: {isolation.level: ...}} overrides it.
     */
    static void readCommitted(Properties props) {
        props.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    }

    /** An idempotent producer with {@code compression} ("none", "lz4", ...). */
    public static void producer(Properties props, String compression) {
        metrics(props);
        // Every write is acknowledged by all in-sync replicas: a checkpoint counts it as done.
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.putIfAbsent(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        // Larger batches and a short linger cut client and broker CPU several times over the
        // defaults (FIELD-NOTES). Under load batches fill while the one request in flight is
        // out, so the linger only sets the latency at low rates (10 ms, as the fetch wait above).
        props.putIfAbsent(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(512 * 1024));
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "10");
        props.putIfAbsent(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, Integer.toString(MAX_IN_FLIGHT));
        // A socket buffer that holds a whole request (the client's default is 128 KiB).
        props.putIfAbsent(ProducerConfig.SEND_BUFFER_CONFIG, Integer.toString(MIB));
    }
}
