package dev.sluice.connector.kafka;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDecoder;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.Delivery;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.Source;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.UnreleasedInstanceIdException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code kafka} source. Polled record values are copied once into an off-heap slab and
 * decoded to Arrow in the core; metadata columns ({@code _partition}, {@code _offset},
 * {@code _timestamp}, {@code _key}) are appended when asked for. Positions are recorded at
 * each barrier and committed to Kafka when the checkpoint completes (at-least-once).
 */
public final class KafkaSource implements Source {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaSource.class);

    /** The {@code topic} setting. */
    public static final String TOPIC = "topic";
    /** The {@code group_id} setting. */
    public static final String GROUP_ID = "group_id";
    /** The {@code group_instance_id} setting. */
    public static final String GROUP_INSTANCE_ID = "group_instance_id";
    /** The {@code starting_offsets} setting. */
    public static final String STARTING_OFFSETS = "starting_offsets";
    /** The {@code format} setting. */
    public static final String FORMAT = "format";
    /** The {@code schema} setting. */
    public static final String SCHEMA = "schema";
    /** The {@code infer_rows} setting. */
    public static final String INFER_ROWS = "infer_rows";
    /** The {@code delimiter} setting. */
    public static final String DELIMITER = "delimiter";

    /** The {@code debezium_binary} setting: the connector's binary.handling.mode. */
    public static final String DEBEZIUM_BINARY = "debezium_binary";

    /** The {@code debezium_decimals} setting: the connector's decimal.handling.mode. */
    public static final String DEBEZIUM_DECIMALS = "debezium_decimals";
    /** The {@code primary_key} setting. */
    public static final String PRIMARY_KEY = "primary_key";
    /** The {@code metadata} setting. */
    public static final String METADATA = "metadata";
    /** The {@code bounded} setting. */
    public static final String BOUNDED = "bounded";
    /** The {@code dead_letter_topic} setting. */
    public static final String DEAD_LETTER_TOPIC = "dead_letter_topic";

    /** The {@code kafka} source's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(StandardKeys.batching(AvroSettings.define(
                KafkaSettings.client(new ConfigDef()
                        .define(TOPIC, ConfigType.LIST, null, true, "The topic, or a list of topics.")
                        .define(
                                GROUP_ID,
                                ConfigType.STRING,
                                null,
                                false,
                                "Consumer group. Default: sluice-<pipeline name>.")
                        .define(
                                GROUP_INSTANCE_ID,
                                ConfigType.STRING,
                                null,
                                false,
                                "Static group membership: each lane's consumer joins as <this>-lane-<n> (group.instance.id), "
                                        + "so a restarted instance, even after kill -9, gets its partitions back at once "
                                        + "instead of after session.timeout.ms. Must differ between instances sharing the group. "
                                        + "Default: sluice-<pipeline>-<node>-<random>, made on the first run and kept in the "
                                        + "state DB; `none` for dynamic membership. Bounded sources use dynamic membership.")
                        .defineEnum(
                                STARTING_OFFSETS,
                                List.of("committed", "earliest", "latest"),
                                "committed",
                                false,
                                "Where to start without a checkpoint: the group's committed offsets (else earliest), "
                                        + "or earliest/latest regardless of them.")
                        .defineEnum(
                                FORMAT,
                                List.of("json", "csv", "raw", "debezium", "avro"),
                                "json",
                                false,
                                "json (one object per record), csv (one line per record), raw (the bytes as column `value`; a tombstone's is NULL), "
                                        + "debezium (a Debezium JSON change event: the row of `after`, or `before` for deletes, "
                                        + "plus column `_op` = i, u or d; tombstones are skipped), or avro (one datum per record, "
                                        + "columns from the Avro schema).")
                        .define(
                                SCHEMA,
                                ConfigType.MAP,
                                null,
                                false,
                                "Columns and types of the records (for debezium: of the row), e.g. {id: bigint, name: string}. "
                                        + "Required for csv and debezium; for json, absent means inferred from the first "
                                        + "infer_rows records of the topic (strings stay strings: declare timestamps); "
                                        + "not used for raw and avro.")
                        .define(
                                INFER_ROWS,
                                ConfigType.INT,
                                1000,
                                false,
                                "JSON without a schema: records sampled to infer it.",
                                Validator.positive())
                        .define(DELIMITER, ConfigType.STRING, ",", false, "CSV: the field delimiter.")
                        .defineEnum(
                                DEBEZIUM_BINARY,
                                List.of("base64", "hex"),
                                "base64",
                                false,
                                "debezium: how the connector writes binary columns, its binary.handling.mode: base64 "
                                        + "(Debezium's default, bytes, through the JSON converter) or hex.")
                        .defineEnum(
                                DEBEZIUM_DECIMALS,
                                List.of("precise", "string", "double"),
                                "precise",
                                false,
                                "debezium: how the connector writes decimal columns, its decimal.handling.mode: precise "
                                        + "(Debezium's default: the unscaled value's bytes as base64, read with the declared "
                                        + "column's scale), string or double.")
                        .define(
                                PRIMARY_KEY,
                                ConfigType.LIST,
                                List.of(),
                                false,
                                "Columns that identify a row. SQL transforms that pass these columns through unchanged, row for "
                                        + "row, carry the key (renamed with them; not through UNION, UNNEST or a join that may repeat "
                                        + "a row), and a kafka sink without `key:` or a postgres sink without `primary_key:` keys its "
                                        + "writes by it.")
                        .define(
                                METADATA,
                                ConfigType.LIST,
                                List.of(),
                                false,
                                "Metadata columns to add: _partition, _offset, _timestamp, _key, _headers (a JSON object of "
                                        + "the headers' UTF-8 text; a value that is not UTF-8 as {\"hex\": \"…\"}).")
                        .define(
                                StandardKeys.PARALLELISM,
                                ConfigType.INT,
                                1,
                                false,
                                "Lanes: copies of the pipeline on their own threads, each with a consumer in the group, "
                                        + "sharing the partitions (use at most one per partition).",
                                Validator.positive())
                        .define(
                                BOUNDED,
                                ConfigType.BOOLEAN,
                                false,
                                false,
                                "Stop at the end offsets the partitions had when they were assigned (a backfill, "
                                        + "a benchmark) instead of waiting for new records.")
                        .define(
                                DEAD_LETTER_TOPIC,
                                ConfigType.STRING,
                                null,
                                false,
                                "Topic for records that do not decode (with the error and origin in headers), when on_error "
                                        + "is dead_letter. Default: the dead_letter file.")),
                true)));

        public Type() {
            super(
                    NodeKind.SOURCE,
                    "kafka",
                    "Reads one or more Kafka topics in a consumer group; run more instances with the same group to "
                            + "share the partitions. Offsets are committed only when a checkpoint is durable in every sink.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public KafkaSource create(Settings settings) {
            return new KafkaSource(settings);
        }

        @Override
        public void prepare() {
            KafkaSettings.startPlatformMBeanServer();
        }

        /** Consumers in one group share the partitions between lanes. */
        @Override
        public boolean supportsLanes() {
            return true;
        }

        /** Under exactly_once the offsets are committed in the kafka sinks' transaction. */
        @Override
        public boolean supportsExactlyOnce() {
            return true;
        }
    }

    /** How often the lane refreshes {@link #lag()}: status readers need no more. */
    private static final long LAG_REFRESH_NANOS = 1_000_000_000L;

    private static final List<String> METADATA_COLUMNS =
            List.of("_partition", "_offset", "_timestamp", "_key", "_headers");

    private final Settings config;
    private final List<String> topics;
    private final String format;
    private final List<String> metadata;
    private final int batchSize;
    private final long flushNanos;
    private final boolean bounded;
    /** With {@code bounded}: the end offsets of the assigned partitions when they were assigned. */
    private final Map<TopicPartition, Long> endOffsets = new HashMap<>();
    /** The offsets this run committed, per partition (kept when a partition is revoked). */
    private final Map<TopicPartition, Long> committedHere = new HashMap<>();

    private StageContext context;
    private KafkaConsumer<byte[], ByteBuffer> consumer;
    /** Records not yet fetched per partition ("topic/3"), refreshed by the lane about once a second. */
    private volatile Map<String, Long> lag = Map.of();

    private long lagSeenNanos;
    private Properties consumerProperties;
    private NativeDecoder decoder;
    private RecordSlab slab;
    private VectorSchemaRoot meta;
    private DeadLetterProducer deadLetters;
    /** Next offset per partition of what has been emitted (what a checkpoint would commit). */
    private final Map<TopicPartition, Long> emitted = new HashMap<>();
    /** Positions recorded at each barrier, until that epoch completes. */
    private final TreeMap<Long, Map<TopicPartition, Long>> pending = new TreeMap<>();

    private long firstBufferedNanos;
    /** A bounded source that returned END: it leaves the group after its final checkpoint. */
    private boolean ended;
    /** The emitter of the poll in progress: a rebalance inside poll flushes the slab through it. */
    private Emitter currentOut;
    /** Static membership: group.instance.id is this plus {@code -lane-<lane>}; null for dynamic. */
    private String instanceBase;
    /**
     * The stable id of this source's lanes: {@link #instanceBase}, or under exactly_once with
     * dynamic membership the saved or derived one; the transactional id is it plus the lane.
     */
    private String idBase;
    /** Whether {@link #idBase} was made here (and is kept in the state DB), not configured. */
    private boolean idDerived;
    /** Whether this run removed a stale member holding its instance id ({@link #takeOverInstanceId}). */
    private boolean instanceIdTakenOver;
    /** Under {@code delivery: exactly_once}: the lane's transaction; null otherwise. */
    private KafkaTransaction transaction;

    private String group;

    private int lane = -1;

    /** The key under which the derived group_instance_id is kept in the state DB, beside the offsets. */
    static final String INSTANCE_POSITION = "_group_instance_id";

    KafkaSource(Settings config) {
        this.config = config;
        this.topics = config.getList(TOPIC);
        this.format = config.getString(FORMAT);
        this.metadata = config.getList(METADATA);
        this.batchSize = config.getInt(StandardKeys.BATCH_SIZE);
        this.flushNanos = config.getDuration(StandardKeys.BATCH_FLUSH_INTERVAL).toNanos();
        this.bounded = config.getBoolean(BOUNDED);
        for (String column : metadata) {
            if (!METADATA_COLUMNS.contains(column)) {
                throw new InvalidSettingException(
                        METADATA, "unknown metadata column '" + column + "'; use " + METADATA);
            }
        }
    }

    @Override
    public Schema open(StageContext context) {
        this.context = context;
        Properties props = KafkaSettings.clientProperties(config);
        group = config.has(GROUP_ID) ? config.getString(GROUP_ID) : "sluice-" + context.pipelineName();
        Properties checkProps = KafkaSettings.checkProperties(props, config); // without the consumer's settings below
        Runnable accessCheck = () -> KafkaSettings.checkAccess(checkProps, topics, AclOperation.READ, group);
        if (format.equals("json") && !config.has(SCHEMA)) {
            accessCheck.run(); // inferring the schema reads the topic: it must exist first
        } else {
            context.checkWhileOpening(accessCheck);
        }
        Map<String, Object> formatOptions = AvroSettings.coreOptions(config, context.pipelineDirectory(), true);
        if (format.equals("debezium")) {
            formatOptions = new java.util.HashMap<>(formatOptions);
            formatOptions.put(DEBEZIUM_BINARY, config.getString(DEBEZIUM_BINARY));
            formatOptions.put(DEBEZIUM_DECIMALS, config.getString(DEBEZIUM_DECIMALS));
        }
        Schema declared = null;
        if (format.equals("avro") && config.has(SCHEMA)) {
            throw new InvalidSettingException(
                    SCHEMA, "avro records take their columns from the Avro schema; remove `schema:`");
        } else if (format.equals("avro")) {
            // The columns come from the Avro schema (the decoder below reports them).
        } else if (format.equals("json") && !config.has(SCHEMA)) {
            declared = SchemaSampler.inferJson(props, topics, config.getInt(INFER_ROWS), context.allocator());
        } else if (!format.equals("raw")) {
            if (!config.has(SCHEMA)) {
                throw new InvalidSettingException(SCHEMA, format + " records need a declared `schema:` (of the row)");
            }
            try {
                declared = ColumnTypes.schema(config.getMap(SCHEMA));
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException(SCHEMA, e.getMessage());
            }
        }
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        boolean exactlyOnce = context.delivery() == Delivery.EXACTLY_ONCE;
        instanceBase = instanceBase(props);
        idBase = instanceBase != null || !exactlyOnce ? instanceBase : savedOrDerivedId();
        if (idBase != null) {
            lane = Instances.claim(idBase);
        }
        if (instanceBase != null) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceBase + "-lane-" + lane);
        } else {
            props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        }
        if (exactlyOnce) {
            // Upstream transactions' aborted records are not input; committed offsets are
            // read only once no transaction of ours is pending on them (KIP-447).
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            transaction = KafkaTransaction.of(context);
            transaction.joinAsSource(
                    context.nodeName(),
                    props.getProperty(org.apache.kafka.clients.CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG),
                    idBase + "-lane-" + lane);
        }
        KafkaClientDefaults.consumer(props, batchSize);
        String starting = config.getString(STARTING_OFFSETS);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, starting.equals("latest") ? "latest" : "earliest");
        consumerProperties = props;
        decoder =
                NativeDecoder.create(context.allocator(), format, config.getString(DELIMITER), declared, formatOptions);
        slab = new RecordSlab(batchSize);
        List<String> metaColumns = new ArrayList<>(metadata);
        if (format.equals("raw")) {
            metaColumns.add(MetadataColumns.VALUE_IS_NULL);
        }
        meta = metaColumns.isEmpty() ? null : MetadataColumns.root(metaColumns, context.allocator());
        Schema values = switch (format) {
            case "raw" -> MetadataColumns.RAW_SCHEMA;
            case "debezium" -> MetadataColumns.withOp(declared);
            case "avro" -> decoder.schema();
            default -> declared;
        };
        for (String column : metadata) {
            if (values.getFields().stream().anyMatch(f -> f.getName().equals(column))) {
                // A row with two columns of one name: a JSON sink writes both keys (readers keep
                // one), and a key or SQL picks one of them.
                throw new InvalidSettingException(
                        METADATA,
                        "metadata column '" + column + "' has the name of a column of the records; leave it out of "
                                + "`metadata`, or leave the records' column out of `schema`");
            }
        }
        Schema schema = MetadataColumns.append(values, meta);
        List<String> primaryKey = config.getList(PRIMARY_KEY);
        if (!PrimaryKey.coveredBy(primaryKey, schema)) {
            throw new InvalidSettingException(
                    PRIMARY_KEY,
                    "primary key " + primaryKey + " names columns that are not in "
                            + schema.getFields().stream()
                                    .map(org.apache.arrow.vector.types.pojo.Field::getName)
                                    .toList());
        }
        return PrimaryKey.with(schema, primaryKey);
    }

    /**
     * The base of group.instance.id: the setting (or properties' group.instance.id), else the one
     * an earlier run of this state DB made, else a new one (saved with the next checkpoint).
     */
    private String instanceBase(Properties props) {
        String configured = config.has(GROUP_INSTANCE_ID)
                ? config.getString(GROUP_INSTANCE_ID)
                : (String) props.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        if (configured != null) {
            return configured.isBlank() || configured.equals("none") ? null : configured;
        }
        if (bounded) {
            // A bounded lane leaves the group when it is done; a static member cannot (it stays
            // until session.timeout.ms, and a lane joining later would wait for it).
            return null;
        }
        return savedOrDerivedId();
    }

    /** The id an earlier run of this state DB made, else a new one (saved with the next checkpoint). */
    private String savedOrDerivedId() {
        idDerived = true;
        String saved = context.restoredPositions().get(INSTANCE_POSITION);
        if (saved != null) {
            return KafkaSettings.idOf(saved);
        }
        return Instances.derived(context.pipelineName(), context.nodeName());
    }

    /** Joins the group only for a run: validation stops at {@link #open}. */
    @Override
    public void start() {
        subscribe();
        if (config.has(DEAD_LETTER_TOPIC)) {
            deadLetters = transaction != null
                    ? new DeadLetterProducer(transaction, config.getString(DEAD_LETTER_TOPIC))
                    : new DeadLetterProducer(
                            KafkaSettings.clientProperties(config), config.getString(DEAD_LETTER_TOPIC));
        }
    }

    @Override
    public Poll poll(Emitter out) {
        currentOut = out;
        // Wait in poll for the fetch in flight, up to when a partial batch is due: returning
        // empty-handed instead makes the lane park, and the fetch that lands meanwhile waits.
        long waitNanos = slab.count() == 0
                ? Math.max(1_000_000, Math.min(flushNanos, 100_000_000))
                : Math.max(0, firstBufferedNanos + flushNanos - System.nanoTime());
        ConsumerRecords<byte[], ByteBuffer> records;
        try {
            records = consumer.poll(Duration.ofNanos(waitNanos));
        } catch (UnreleasedInstanceIdException e) {
            takeOverInstanceId(e);
            return Poll.IDLE;
        }
        if (System.nanoTime() - lagSeenNanos > LAG_REFRESH_NANOS) {
            refreshLag();
        }
        for (ConsumerRecord<byte[], ByteBuffer> record : records) {
            if (slab.count() == 0) {
                firstBufferedNanos = System.nanoTime();
            }
            slab.add(record);
        }
        boolean due = slab.count() >= batchSize
                || (slab.count() > 0 && (System.nanoTime() - firstBufferedNanos >= flushNanos || caughtUp()));
        if (!due) {
            if (bounded && records.isEmpty() && slab.count() == 0 && reachedEnd()) {
                ended = true;
                return Poll.END;
            }
            return Poll.IDLE;
        }
        flush(out);
        return Poll.EMITTED;
    }

    private void subscribe() {
        consumer = new KafkaConsumer<>(consumerProperties, new ByteArrayDeserializer(), new ValueViews());
        consumer.subscribe(topics, new Rebalance(config.getString(STARTING_OFFSETS)));
    }

    /**
     * Under the consumer group protocol of KIP-848 ({@code group.protocol: consumer}) the broker
     * keeps a static member that died without leaving (kill -9) until its session times out, and
     * refuses its restart the same {@code group.instance.id}; the classic protocol hands the
     * restart the partitions at once. So a starting lane removes the stale member (the Admin
     * API's LeaveGroup, which fences it) and joins again with a new consumer, once: a second
     * refusal means a live instance holds the id, and the run fails with the cause.
     */
    private void takeOverInstanceId(UnreleasedInstanceIdException refused) {
        String instanceId = consumerProperties.getProperty(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        if (instanceIdTakenOver || instanceId == null) {
            throw refused;
        }
        instanceIdTakenOver = true;
        LOG.warn(
                "node '{}': group {} still holds instance id {} for a run that did not leave it (killed?); "
                        + "removing that member and joining again",
                context.nodeName(),
                group,
                instanceId);
        consumer.close(CloseOptions.timeout(Duration.ZERO));
        KafkaSettings.removeStaticMember(KafkaSettings.clientProperties(config), group, instanceId);
        subscribe();
    }

    @Override
    public Map<String, Long> lag() {
        return lag;
    }

    /** From the consumer's last fetch (no request to the broker); only on the lane's thread. */
    private void refreshLag() {
        lagSeenNanos = System.nanoTime();
        Map<String, Long> seen = new java.util.TreeMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            OptionalLong behind = consumer.currentLag(tp);
            if (behind.isPresent()) {
                seen.put(tp.topic() + "/" + tp.partition(), behind.getAsLong());
            }
        }
        lag = java.util.Collections.unmodifiableMap(seen);
    }

    /** Decodes the buffered records into one batch and emits it. */
    private void flush(Emitter out) {
        if (meta != null) {
            MetadataColumns.fill(meta, slab);
        }
        NativeDecoder.Decoded decoded = decoder.decode(slab.data(), slab.offsets(), slab.count(), meta);
        try (NativeBatch errors = decoded.errors()) {
            if (errors != null) {
                reject(errors);
            }
        } catch (RuntimeException e) {
            decoded.batch().close();
            throw e;
        }
        slab.positionsInto(emitted);
        long oldest = slab.oldestTimestamp(); // the records' Kafka time: sinks measure latency from it
        slab.clear();
        if (decoded.batch().rowCount() == 0) {
            decoded.batch().close();
        } else {
            out.emit(decoded.batch(), oldest >= 0 ? oldest : System.currentTimeMillis());
        }
    }

    /**
     * True when the last fetch left nothing unread in any assigned partition: waiting out
     * {@code batch_flush_interval} for rows that are not there would only add latency.
     */
    private boolean caughtUp() {
        for (TopicPartition tp : consumer.assignment()) {
            OptionalLong lag = consumer.currentLag(tp);
            if (lag.isEmpty() || lag.getAsLong() > 0) {
                return false;
            }
        }
        return true;
    }

    /** True once partitions are assigned and every one is read up to its end offset. */
    private boolean reachedEnd() {
        if (endOffsets.isEmpty()) {
            return false;
        }
        for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
            if (consumer.position(end.getKey()) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private void reject(NativeBatch errors) {
        try (VectorSchemaRoot root = errors.toVectors(context.allocator())) {
            BigIntVector index = (BigIntVector) root.getVector("index");
            VarBinaryVector record = (VarBinaryVector) root.getVector("record");
            VarCharVector error = (VarCharVector) root.getVector("error");
            for (int i = 0; i < root.getRowCount(); i++) {
                int at = (int) index.get(i);
                String message = new String(error.get(i), StandardCharsets.UTF_8);
                String origin = slab.topic(at) + "/" + slab.partition(at) + "@" + slab.offset(at);
                if (deadLetters != null) {
                    deadLetters.send(
                            record.get(i), slab.key(at), message, slab.topic(at), slab.partition(at), slab.offset(at));
                } else {
                    context.reject(slab.offset(at), record.get(i), origin + ": " + message);
                }
            }
        }
        if (deadLetters != null) {
            deadLetters.flush();
        }
    }

    @Override
    public void onBarrier(Barrier barrier) {
        pending.put(barrier.epoch(), Map.copyOf(emitted));
    }

    @Override
    public Map<String, String> positions(long epoch) {
        Map<TopicPartition, Long> at = pending.getOrDefault(epoch, Map.of());
        Map<String, String> out = new TreeMap<>();
        at.forEach((tp, offset) ->
                out.put(tp.topic() + "/" + tp.partition(), "{\"offset\":" + offset + ",\"epoch\":" + epoch + "}"));
        if (idBase != null && idDerived) {
            out.put(INSTANCE_POSITION, KafkaSettings.idJson(idBase));
        }
        return out;
    }

    @Override
    public void onCheckpointComplete(long epoch) {
        Map<TopicPartition, Long> at = pending.get(epoch);
        pending.headMap(epoch, true).clear();
        Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
        if (at != null) {
            at.forEach((tp, offset) -> commit.put(tp, new OffsetAndMetadata(offset, commitMark())));
        }
        if (transaction != null) {
            // The kafka sinks commit these with their messages, right after this (sources are
            // told first); the group is left only once they are in.
            if (!commit.isEmpty()) {
                transaction.addOffsets(group, consumer.groupMetadata(), commit);
            }
            if (ended) {
                transaction.afterCommit(consumer::unsubscribe);
            }
            return;
        }
        if (commit.isEmpty()) {
            return;
        }
        consumer.commitSync(commit);
        at.forEach(committedHere::put);
        if (ended) {
            // A lane that read its share to the end leaves the group now, not when every lane is
            // done: a lane that joins later would otherwise wait for it in the rebalance until
            // max.poll.interval.ms (5 min) expired. (Its revocation checkpoint is a no-op: we
            // are inside this one.)
            consumer.unsubscribe();
        }
    }

    @Override
    public void close() {
        currentOut = null; // leaving the group revokes partitions: nothing is emitted any more
        if (consumer != null) {
            // A static member stays in the group after close unless told to leave: a clean stop
            // hands its partitions over now (a kill -9 cannot, and its successor replaces it).
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5))
                    .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
        }
        if (lane >= 0) {
            Instances.release(idBase, lane);
            lane = -1;
        }
        if (deadLetters != null) {
            deadLetters.close();
        }
        if (meta != null) {
            meta.close();
        }
        if (slab != null) {
            slab.close();
        }
        if (decoder != null) {
            decoder.close();
        }
    }

    /**
     * The metadata of the offsets this source commits: an offset committed further on than this
     * instance's state DB under this mark was delivered by the same pipeline (another lane or
     * instance of it), so a restart goes on from there instead of reading it all again.
     */
    private String commitMark() {
        return "sluice " + context.pipelineName() + "/" + context.nodeName();
    }

    /**
     * Seeks each of {@code partitions} this pipeline is known to have delivered up to — by the
     * restored position, or by what this run committed itself — to the furthest such offset, or
     * to the group's committed offset where that is further on and carries this source's {@link
     * #commitMark} (another lane or instance went on from there). An offset moved forward by
     * anyone else (a stray consumer in the group, a reset by hand) is not followed: it would skip
     * records this pipeline never delivered. Partitions known by neither keep the consumer's
     * start: the committed offset, else {@code auto.offset.reset}.
     */
    private void seekRestored(Collection<TopicPartition> partitions, Map<String, String> restored) {
        Map<TopicPartition, Long> known = new HashMap<>();
        for (TopicPartition tp : partitions) {
            String saved = restored.get(tp.topic() + "/" + tp.partition());
            if (saved != null) {
                known.put(tp, KafkaSettings.offsetOf(saved));
            }
            Long here = committedHere.get(tp);
            if (here != null) {
                known.merge(tp, here, Math::max);
            }
        }
        if (known.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(known.keySet()));
        known.forEach((tp, at) -> {
            OffsetAndMetadata done = committed.get(tp);
            boolean ours = done != null && commitMark().equals(done.metadata());
            consumer.seek(tp, ours && done.offset() > at ? done.offset() : at);
        });
    }

    /** Whether this node ran before with this state DB (it saved positions, not only its id). */
    private static boolean resumed(Map<String, String> restored) {
        return restored.keySet().stream().anyMatch(key -> !key.equals(INSTANCE_POSITION));
    }

    /**
     * Seeks assigned partitions to the positions of the last finalized checkpoint — they win over
     * the group's committed offsets, unless those are further on and this pipeline committed them
     * (another instance of it went on from there) — at the run's first assignment as at a later
     * one, where the committed offsets are otherwise followed; forgets positions of revoked
     * partitions.
     */
    private final class Rebalance implements ConsumerRebalanceListener {
        private final String starting;
        /** Whether the run's first assignment (where starting_offsets applies) has happened. */
        private boolean assignedBefore;

        Rebalance(String starting) {
            this.starting = starting;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            // Emit what is buffered, then checkpoint: delivery is synchronous, so everything
            // read from these partitions is in the sinks and committed before they go.
            if (slab.count() > 0 && currentOut != null) {
                flush(currentOut);
            }
            context.requestCheckpoint();
            partitions.forEach(emitted::remove);
            partitions.forEach(endOffsets::remove);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (assignedBefore) {
                continueFromCommitted(partitions);
            } else {
                startAssigned(partitions);
                assignedBefore = true;
            }
            if (bounded) {
                endOffsets.putAll(consumer.endOffsets(partitions));
            }
        }

        /**
         * A later assignment of the run (a rebalance): the group's committed offsets are where its
         * partitions stand — this run's checkpoints committed there, and so did every other lane
         * or instance before it gave a partition up. Seeking to the positions restored at the
         * run's start, or to the beginning under {@code earliest}, read again what was already
         * delivered (under exactly-once, delivered twice). The consumer starts from the committed
         * offsets by itself (else from {@code auto.offset.reset}, which follows {@code
         * starting_offsets}); at-least-once goes to a restored position instead where the
         * committed offset is behind it or was not committed by this pipeline
         * ({@link #seekRestored}).
         */
        private void continueFromCommitted(Collection<TopicPartition> partitions) {
            if (transaction != null || partitions.isEmpty()) {
                return;
            }
            seekRestored(partitions, context.restoredPositions());
        }

        /** The run's first assignment: from the last checkpoint, else as starting_offsets says. */
        private void startAssigned(Collection<TopicPartition> partitions) {
            Map<String, String> restored = context.restoredPositions();
            List<TopicPartition> toBeginning = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                String saved = restored.get(tp.topic() + "/" + tp.partition());
                if (transaction != null) {
                    // Exactly-once: the offsets committed with the last transaction are the truth
                    // (the state DB may hold an epoch whose transaction never committed); a first
                    // run starts as starting_offsets says.
                    if (!resumed(restored) && starting.equals("earliest")) {
                        toBeginning.add(tp);
                    }
                } else if (saved == null && starting.equals("earliest")) {
                    toBeginning.add(tp);
                }
            }
            if (transaction == null) {
                seekRestored(partitions, restored);
            }
            if (!toBeginning.isEmpty()) {
                consumer.seekToBeginning(toBeginning);
            }
        }
    }
}
