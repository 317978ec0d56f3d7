package dev.sluice.connector.kafka;

import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.StageContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Kafka transaction of one lane under {@code delivery: exactly_once}: one transactional
 * producer shared by the lane's kafka sinks and the kafka sources' dead-letter topics, and one
 * transaction per checkpoint epoch holding their messages and the sources' offsets
 * ({@code sendOffsetsToTransaction} with the consumer's group metadata, KIP-447).
 *
 * <p>The lane is one thread that delivers each batch to every sink before it polls again, and a
 * checkpoint's barrier and finalization run between two polls: so when the epoch is finalized
 * (after the runtime recorded it in the state DB) nothing of the next epoch has been sent, and
 * {@link #commit} closes exactly the epoch. A crash before the commit leaves the transaction open;
 * the restarted lane, with the same {@code transactional.id} (the source's stable instance id and
 * lane), aborts it in {@code initTransactions} before its consumer reads the committed offsets,
 * which are then those of the last committed epoch: nothing lost, nothing visible twice.
 *
 * <p>Stages join while they open (no effect outside the process; validation opens them too);
 * the producer starts with the first sink's {@code start}, before any source joins its group.
 */
final class KafkaTransaction implements AutoCloseable {

    private static final String KEY = "kafka.transaction";

    /** The lane's transaction, made by the first stage that asks. */
    static KafkaTransaction of(StageContext context) {
        return context.laneShared(KEY, KafkaTransaction.class, KafkaTransaction::new);
    }

    /** The source that named the cluster and the transactional id, and its brokers. */
    private String sourceNode;

    private String bootstrap;
    private String transactionalId;
    /** The first sink's producer properties; every other sink must agree with them. */
    private Properties producerProperties;

    private String producerNode;
    private KafkaProducer<byte[], byte[]> producer;
    /** A transaction is begun and not yet committed or aborted. */
    private boolean open;
    /** Offsets to commit with the transaction, per consumer group. */
    private final Map<String, GroupOffsets> offsets = new LinkedHashMap<>();
    /** What sources asked to do once the transaction is committed (leave the group). */
    private final List<Runnable> afterCommit = new ArrayList<>();
    /** Set when the producer can no longer be used (fenced, or a commit failed). */
    private RuntimeException broken;

    private record GroupOffsets(ConsumerGroupMetadata metadata, Map<TopicPartition, OffsetAndMetadata> offsets) {}

    /**
     * A kafka source of the lane: its brokers (every sink must write to the same cluster, whose
     * group coordinator takes the offsets) and, for the first source, the transactional id.
     */
    synchronized void joinAsSource(String node, String brokers, String id) {
        if (sourceNode == null) {
            sourceNode = node;
            bootstrap = brokers;
            transactionalId = id;
        } else if (!sameCluster(bootstrap, brokers)) {
            throw new InvalidSettingException(
                    KafkaSettings.BOOTSTRAP_SERVERS,
                    "delivery: exactly_once commits every source's offsets in one transaction on one cluster, but '"
                            + sourceNode + "' reads from " + bootstrap + " and this source from " + brokers);
        }
    }

    /**
     * A kafka sink of the lane, with its producer properties: the lane's sinks share one
     * producer, so they must agree on them and write to the sources' cluster.
     */
    synchronized void joinAsSink(String node, Properties props) {
        String brokers = props.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        if (sourceNode == null) {
            throw new IllegalStateException("delivery: exactly_once needs a kafka source before the kafka sink");
        }
        if (!sameCluster(bootstrap, brokers)) {
            throw new InvalidSettingException(
                    KafkaSettings.BOOTSTRAP_SERVERS,
                    "delivery: exactly_once commits the source's offsets in the sink's transaction, so both must use "
                            + "one cluster: source '" + sourceNode + "' reads from " + bootstrap
                            + " but this sink writes to " + brokers);
        }
        if (producerProperties == null) {
            producerNode = node;
            producerProperties = new Properties();
            producerProperties.putAll(props);
        } else if (!producerProperties.equals(props)) {
            throw new InvalidSettingException(
                    KafkaSettings.PROPERTIES,
                    "delivery: exactly_once writes every kafka sink of the pipeline through one transactional "
                            + "producer, so their producer settings must agree; this sink's differ from '"
                            + producerNode + "': " + difference(producerProperties, props));
        }
    }

    /**
     * Creates the producer and fences any earlier one with the same transactional id, aborting
     * the transaction a crashed run left open. Idempotent; called by every sink's start, which
     * the runtime calls before any source's, so it precedes the consumers' offset fetches.
     */
    synchronized void start(Duration checkpointInterval) {
        if (producer != null) {
            return;
        }
        Properties props = new Properties();
        props.putAll(producerProperties);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        // A transaction spans one checkpoint interval plus the barrier; the broker aborts one
        // that lives longer (and the run fails and replays the epoch). Long enough not to abort a
        // slow barrier, short enough that a crashed instance's open transaction, which holds back
        // read_committed consumers of its partitions, does not linger (properties: can set it).
        props.putIfAbsent(
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
                Long.toString(Math.min(900_000, checkpointInterval.toMillis() + 60_000)));
        KafkaProducer<byte[], byte[]> made =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        try {
            made.initTransactions();
        } catch (RuntimeException e) {
            made.close(Duration.ZERO);
            throw new IllegalStateException(
                    "cannot start the Kafka transaction (transactional.id " + transactionalId + "): " + e.getMessage(),
                    e);
        }
        producer = made;
    }

    /** The producer, inside a transaction (begun now if none is). Any thread; sends follow. */
    synchronized KafkaProducer<byte[], byte[]> begin() {
        throwIfBroken();
        if (!open) {
            producer.beginTransaction();
            open = true;
        }
        return producer;
    }

    /** Waits until every message sent in the transaction so far is acknowledged. */
    void flush() {
        KafkaProducer<byte[], byte[]> p;
        synchronized (this) {
            p = producer;
        }
        p.flush();
    }

    /**
     * A source's offsets for the epoch being finalized (the next offset to read per partition),
     * committed with the transaction; the latest call per group wins.
     */
    synchronized void addOffsets(
            String group, ConsumerGroupMetadata metadata, Map<TopicPartition, OffsetAndMetadata> next) {
        offsets.put(group, new GroupOffsets(metadata, new HashMap<>(next)));
    }

    /** Runs {@code action} after the next commit (or now, if it is made without one). */
    synchronized void afterCommit(Runnable action) {
        afterCommit.add(action);
    }

    /**
     * Commits the epoch: the sources' offsets into the transaction, then the transaction. A lane
     * with several kafka sinks calls it once per sink; the calls after the first find nothing to
     * do. A failure leaves the producer unusable: the run fails and a restart replays the epoch.
     */
    synchronized void commit() {
        throwIfBroken();
        try {
            if (!offsets.isEmpty()) {
                begin();
                for (GroupOffsets group : offsets.values()) {
                    producer.sendOffsetsToTransaction(group.offsets(), group.metadata());
                }
                offsets.clear();
            }
            if (open) {
                producer.commitTransaction();
                open = false;
            }
        } catch (RuntimeException e) {
            broken = e;
            throw new IllegalStateException(
                    "committing the Kafka transaction (transactional.id " + transactionalId + ") failed: "
                            + e.getMessage(),
                    e);
        }
        List<Runnable> actions = List.copyOf(afterCommit);
        afterCommit.clear();
        actions.forEach(Runnable::run);
    }

    private void throwIfBroken() {
        if (broken != null) {
            throw new IllegalStateException(
                    "the Kafka transaction (transactional.id " + transactionalId + ") failed earlier: "
                            + broken.getMessage(),
                    broken);
        }
    }

    /**
     * Aborts an open transaction (a failed or stopped run that did not commit its epoch): the
     * broker discards its messages at once instead of after transaction.timeout.ms.
     */
    @Override
    public synchronized void close() {
        if (producer == null) {
            return;
        }
        try {
            if (open && broken == null) {
                producer.abortTransaction();
            }
        } catch (RuntimeException e) {
            // Fenced or unreachable: the next producer with this id, or the timeout, aborts it.
        } finally {
            open = false;
            producer.close(Duration.ofSeconds(5));
            producer = null;
        }
    }

    private static boolean sameCluster(String a, String b) {
        return normalized(a).equals(normalized(b));
    }

    private static java.util.Set<String> normalized(String brokers) {
        java.util.Set<String> set = new java.util.TreeSet<>();
        for (String broker : Objects.requireNonNullElse(brokers, "").split(",")) {
            if (!broker.isBlank()) {
                set.add(broker.trim());
            }
        }
        return set;
    }

    /** The names of the settings two producer configurations disagree on (not their values: they may be secrets). */
    private static String difference(Properties first, Properties other) {
        java.util.Set<String> keys = new java.util.TreeSet<>(first.stringPropertyNames());
        keys.addAll(other.stringPropertyNames());
        List<String> differing = new ArrayList<>();
        for (String key : keys) {
            String a = first.getProperty(key);
            String b = other.getProperty(key);
            if (!Objects.equals(a, b)) {
                differing.add(key);
            }
        }
        return String.join(", ", differing);
    }
}
