package dev.sluice.connector.kafka;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.CheckpointTimeoutException;
import dev.sluice.plugin.Delivery;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The {@code kafka} sink: rows encoded in the core (one slab plus offsets per batch); Java only
 * wraps each record's bytes into a producer record. Idempotent producer, acks=all; a barrier
 * waits until every record is acknowledged, so an acknowledged epoch is durable in Kafka.
 * A record Kafka refuses as too large follows the node's {@code on_error}; any other send
 * failure fails the run before its epoch is finalized, so a restart replays it. Under
 * {@code delivery: exactly_once} the lane's sinks write through one transactional producer
 * ({@link KafkaTransaction}) and the epoch's transaction commits when the epoch is finalized.
 */
public final class KafkaSink implements Sink {

    /** The {@code topic} setting. */
    public static final String TOPIC = "topic";
    /** The {@code format} setting. */
    public static final String FORMAT = "format";
    /** The {@code key} setting. */
    public static final String KEY = "key";
    /** The {@code compression} setting. */
    public static final String COMPRESSION = "compression";

    /** The {@code kafka} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = AvroSettings.define(
                KafkaSettings.client(new ConfigDef()
                        .define(TOPIC, ConfigType.STRING, null, true, "The topic to write.")
                        .defineEnum(
                                FORMAT,
                                List.of("json", "csv", "raw", "avro"),
                                "json",
                                false,
                                "json (an object per message), csv (a line), raw (the bytes of the one column left besides "
                                        + "the key's and `_op`, binary or string; NULL becomes a tombstone, a message without a value) or avro "
                                        + "(one datum per message, no framing).")
                        .define(
                                KEY,
                                ConfigType.LIST,
                                List.of(),
                                false,
                                "Columns that make the message key: one column's value (a binary column's bytes, another's text; "
                                        + "NULL: no key), several as a JSON object. "
                                        + "Default: the primary key of the source the rows come from (its `primary_key`), "
                                        + "where the transforms between keep it (SQL that passes its columns through unchanged, row for row); else no key.")
                        .defineEnum(
                                COMPRESSION,
                                List.of("none", "gzip", "snappy", "lz4", "zstd"),
                                "lz4",
                                false,
                                "Producer compression.")
                        .defineEnum(
                                StandardKeys.ON_ERROR,
                                ErrorPolicy.CONFIG_NAMES,
                                "dead_letter",
                                false,
                                "What to do with a row Kafka refuses as too large (the producer's max.request.size or the "
                                        + "topic's max.message.bytes): write it with the reason to the dead letter, skip it "
                                        + "(counted), or fail the run.")
                        .define(
                                StandardKeys.DEAD_LETTER,
                                ConfigType.PATH,
                                null,
                                false,
                                "The dead-letter file (JSON lines: node, position = the row's number in this run's output, "
                                        + "error, record). Default: <pipeline>.<node>.dead-letter.jsonl next to the first file sink's "
                                        + "output, else next to the pipeline file.")),
                false);

        public Type() {
            super(
                    NodeKind.SINK,
                    "kafka",
                    "Writes one message per row to a topic. Rows with an `_op` column (a change stream, e.g. from a "
                            + "debezium source) carry it as the `op` header (i, u, d) instead of in the value.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public KafkaSink create(Settings settings) {
            return new KafkaSink(settings);
        }

        @Override
        public void prepare() {
            KafkaSettings.startPlatformMBeanServer();
        }

        /** A producer per lane; the topic takes writes from all. */
        @Override
        public boolean supportsLanes() {
            return true;
        }

        /** Under exactly_once each epoch's messages are one transaction, committed at finalization. */
        @Override
        public boolean supportsExactlyOnce() {
            return true;
        }
    }

    private final Settings config;
    private final String topic;
    private NativeEncoder encoder;
    private List<String> key;
    /** Whether rows carry {@code _op}: it then travels as the {@code op} header, not in the value. */
    private boolean changeStream;
    /** The raw format's value column (null for other formats): its NULLs are sent as tombstones. */
    private String rawValue;

    /** The sink's own producer; null under exactly_once, which writes through {@link #transaction}. */
    private KafkaProducer<byte[], byte[]> producer;

    private KafkaTransaction transaction;
    private Properties producerProperties;
    private StageContext context;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    /** Records refused as too large, handed from the producer's threads to the lane (on_error). */
    private final Queue<Refused> refused = new ConcurrentLinkedQueue<>();
    /** Rows handed to the sender so far: a refused row's position in the dead letter. */
    private long rowsSent;

    private int maxRequestSize;
    /** The topic's max.message.bytes as the check at start read it; -1 if unknown. */
    private volatile int maxMessageBytes = -1;
    /** Messages handed to the sender thread and not yet acknowledged (or failed). */
    private final AtomicLong inFlight = new AtomicLong();
    /** At most two encoded batches wait for the sender: beyond that the lane waits (back-pressure). */
    private final BlockingQueue<Outgoing> outgoing = new ArrayBlockingQueue<>(2);

    private Thread sender;

    KafkaSink(Settings config) {
        this.config = config;
        this.topic = config.getString(TOPIC);
        this.key = config.getList(KEY);
    }

    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        List<String> columns = schema.getFields().stream().map(Field::getName).toList();
        if (key.isEmpty()) {
            key = PrimaryKey.of(schema);
        }
        changeStream = columns.contains(MetadataColumns.OP);
        String format = config.getString(FORMAT);
        List<String> excluded = new java.util.ArrayList<>(changeStream ? List.of(MetadataColumns.OP) : List.of());
        if (format.equals("raw")) {
            // The key travels as the message key; the one column left is the value.
            excluded.addAll(key);
            rawValue = columns.stream()
                    .filter(c -> !excluded.contains(c))
                    .findFirst()
                    .orElse(null);
        }
        encoder = new NativeEncoder(
                format,
                false,
                true,
                key,
                excluded,
                AvroSettings.coreOptions(config, context.pipelineDirectory(), false));
        for (String k : key) {
            if (!columns.contains(k)) {
                throw new InvalidSettingException(KEY, "key column '" + k + "' is not in the input " + columns);
            }
        }
        Properties props = KafkaSettings.clientProperties(config);
        KafkaClientDefaults.producer(props, config.getString(COMPRESSION));
        maxRequestSize =
                Integer.parseInt(String.valueOf(props.getOrDefault(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "1048576"))
                        .trim());
        Properties checkProps = KafkaSettings.checkProperties(props, config);
        context.checkWhileOpening(() -> KafkaSettings.checkAccess(
                checkProps,
                List.of(topic),
                org.apache.kafka.common.acl.AclOperation.WRITE,
                null,
                admin -> maxMessageBytes = KafkaSettings.maxMessageBytes(admin, topic)));
        producerProperties = props;
        if (context.delivery() == Delivery.EXACTLY_ONCE) {
            transaction = KafkaTransaction.of(context);
            transaction.joinAsSink(context.nodeName(), props);
        }
    }

    /** The producer connects only for a run: validation stops at {@link #open}. */
    @Override
    public void start() {
        if (transaction != null) {
            transaction.start(context.checkpointInterval());
        } else {
            producer = new KafkaProducer<>(producerProperties, new ByteArraySerializer(), new ByteArraySerializer());
        }
        sender = new Thread(this::sendLoop, "sluice-kafka-sink-" + context.nodeName());
        sender.setDaemon(true);
        sender.start();
    }

    @Override
    public void write(Batch batch) {
        throwIfFailed();
        handleRefused();
        NativeBatch.with(batch, context.allocator(), this::write);
    }

    /**
     * Encodes on the lane and hands the records to the sender thread. Only the queue's hand-off
     * (per batch, not per row) is shared; the lane goes on decoding and querying the next batch
     * while the previous one is copied into producer records and compressed.
     */
    private void write(NativeBatch batch) {
        byte[][] ops = changeStream ? opHeaders(batch) : null;
        boolean[] tombstones = rawValue != null ? tombstones(batch) : null;
        NativeEncoder.Records records = encoder.encodeRecords(batch);
        // Counted before the hand-off, so a barrier also waits for records still queued.
        inFlight.addAndGet(records.count());
        Outgoing next = new Outgoing(records, ops, tombstones, rowsSent);
        rowsSent += records.count();
        try {
            while (!outgoing.offer(next, 100, TimeUnit.MILLISECONDS)) {
                throwIfFailed();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            discard(next);
            throw new IllegalStateException(
                    "interrupted while handing records for topic " + topic + " to the producer", e);
        } catch (RuntimeException e) {
            discard(next);
            throw e;
        }
    }

    /** Which rows' raw value is NULL (null when none is), from the zero-copy imported value column. */
    private boolean[] tombstones(NativeBatch batch) {
        try (VectorSchemaRoot columns = batch.toVectors(context.allocator())) {
            org.apache.arrow.vector.FieldVector value = columns.getVector(rawValue);
            if (value == null || value.getNullCount() == 0) {
                return null;
            }
            boolean[] nulls = new boolean[columns.getRowCount()];
            for (int row = 0; row < nulls.length; row++) {
                nulls[row] = value.isNull(row);
            }
            return nulls;
        }
    }

    /** The {@code op} header of every row, read from the zero-copy imported {@code _op} column. */
    private byte[][] opHeaders(NativeBatch batch) {
        try (VectorSchemaRoot columns = batch.toVectors(context.allocator())) {
            VarCharVector ops = (VarCharVector) columns.getVector(MetadataColumns.OP);
            byte[][] headers = new byte[columns.getRowCount()][];
            for (int row = 0; row < headers.length; row++) {
                byte[] op = ops.get(row);
                headers[row] = switch (op.length == 1 ? op[0] : 0) {
                    case 'i' -> OPS[0];
                    case 'u' -> OPS[1];
                    case 'd' -> OPS[2];
                    default -> op;
                };
            }
            return headers;
        }
    }

    private static final byte[][] OPS = {
        "i".getBytes(StandardCharsets.UTF_8), "u".getBytes(StandardCharsets.UTF_8), "d".getBytes(StandardCharsets.UTF_8)
    };

    /**
     * Encoded records on their way to the sender thread, with each row's {@code op} header if
     * any, and the number of the first row in this run's output.
     */
    private record Outgoing(NativeEncoder.Records records, byte[][] ops, boolean[] tombstones, long firstRow) {}

    private static final Outgoing STOP = new Outgoing(null, null, null, 0);

    /** A record Kafka refused as too large: its row number, bytes and why. */
    private record Refused(long row, byte[] value, String reason) {}

    /** The sender thread: wraps each record into a producer record and sends it, in order. */
    private void sendLoop() {
        while (true) {
            Outgoing next;
            try {
                next = outgoing.take();
            } catch (InterruptedException e) {
                return;
            }
            if (next == STOP) {
                return;
            }
            if (failure.get() != null) {
                discard(next); // the lane fails on its next write or barrier
                continue;
            }
            int sent = 0;
            try (NativeEncoder.Records records = next.records()) {
                // Under exactly_once a batch after a commit opens the next epoch's transaction.
                KafkaProducer<byte[], byte[]> to = transaction != null ? transaction.begin() : producer;
                for (; sent < records.count(); sent++) {
                    send(to, records, next.ops(), next.tombstones(), sent, next.firstRow() + sent);
                }
            } catch (Throwable e) {
                // Whatever stops this thread must reach the lane, or its next hand-off would wait forever.
                failure.compareAndSet(
                        null, e instanceof Exception exception ? exception : new IllegalStateException(e));
                inFlight.addAndGet(sent - next.records().count()); // these never reached the producer
            }
        }
    }

    private void send(
            KafkaProducer<byte[], byte[]> to,
            NativeEncoder.Records records,
            byte[][] ops,
            boolean[] tombstones,
            int i,
            long row) {
        // The producer needs a byte[] per message: one copy straight out of the native slab.
        byte[] value = new byte[(int) records.length(i)];
        MemorySegment.copy(records.data(), JAVA_BYTE, records.start(i), value, 0, value.length);
        byte[] messageKey = null;
        if (records.hasKeys() && records.keyLength(i) >= 0) {
            messageKey = new byte[(int) records.keyLength(i)];
            MemorySegment.copy(records.keys(), JAVA_BYTE, records.keyStart(i), messageKey, 0, messageKey.length);
        }
        // A NULL raw value is a tombstone (no value), as the source reads one.
        boolean tombstone = tombstones != null && tombstones[i];
        ProducerRecord<byte[], byte[]> message = new ProducerRecord<>(topic, messageKey, tombstone ? null : value);
        if (ops != null) {
            message.headers().add("op", ops[i]);
        }
        // Only a record near a size limit can be refused as too large: only its callback keeps
        // its bytes for the dead letter (the others' become garbage once the producer copied them).
        int limit = maxMessageBytes < 0 ? 0 : Math.min(maxRequestSize, maxMessageBytes);
        boolean nearLimit = value.length + (messageKey == null ? 0 : messageKey.length) + NEAR_LIMIT_MARGIN >= limit;
        if (transaction != null && nearLimit && tooLargeForTransaction(value, messageKey)) {
            // A refused send would abort the whole epoch's transaction, and its replay would
            // refuse it again: one that may not fit goes to on_error without being sent.
            refused.add(new Refused(row, value, tooLarge(value.length, null)));
            inFlight.decrementAndGet();
            return;
        }
        to.send(message, new Sent(row, nearLimit ? value : null, value.length));
    }

    /** Whether a message may exceed a limit with its batch's overhead (a margin of NEAR_LIMIT_MARGIN bytes). */
    private boolean tooLargeForTransaction(byte[] value, byte[] messageKey) {
        int bytes = value.length + (messageKey == null ? 0 : messageKey.length) + NEAR_LIMIT_MARGIN;
        return bytes > maxRequestSize || (maxMessageBytes >= 0 && bytes > maxMessageBytes);
    }

    /** More than a one-record batch's overhead (headers included) can add to key and value. */
    private static final int NEAR_LIMIT_MARGIN = 1024;

    /** Frees records that will not be sent and stops waiting for them. */
    private void discard(Outgoing unsent) {
        unsent.records().close();
        inFlight.addAndGet(-unsent.records().count());
    }

    /**
     * The callback of one send: a record refused as too large goes to on_error (on the lane);
     * any other failure is remembered for the next write or barrier, which fails the run.
     */
    private final class Sent implements org.apache.kafka.clients.producer.Callback {
        private final long row;
        private final byte[] value;
        private final int length;

        Sent(long row, byte[] value, int length) {
            this.row = row;
            this.value = value;
            this.length = length;
        }

        @Override
        public void onCompletion(org.apache.kafka.clients.producer.RecordMetadata metadata, Exception e) {
            if (e instanceof RecordTooLargeException) {
                refused.add(new Refused(row, value == null ? new byte[0] : value, tooLarge(length, e)));
            } else if (e != null) {
                failure.compareAndSet(null, e);
            }
            inFlight.decrementAndGet(); // after the hand-off above: a barrier that sees 0 sees it too
        }
    }

    /** Why a record of {@code bytes} was refused, and which settings let it through. */
    private String tooLarge(long bytes, Exception e) {
        // The producer's own check names its setting; the broker's refusal does not.
        String limit = e == null
                ? "the producer's max.request.size (" + maxRequestSize + " bytes) or the topic's max.message.bytes "
                        + "with " + NEAR_LIMIT_MARGIN + " bytes for the batch's overhead (under exactly_once a "
                        + "message that may not fit is not sent: a refusal would abort the epoch's transaction)"
                : String.valueOf(e.getMessage()).contains("max.request.size")
                        ? "the producer's max.request.size (" + maxRequestSize + " bytes)"
                        : "the topic's max.message.bytes on the broker";
        return "a record of " + bytes + " bytes is too large for topic " + topic + ": it exceeds " + limit
                + "; raise max.request.size under the sink's properties: and the topic's max.message.bytes "
                + "(and the consumers' max.partition.fetch.bytes), or make the row smaller";
    }

    /** Applies on_error to the records refused so far; with {@code fail} this throws. */
    private void handleRefused() {
        Refused r;
        while ((r = refused.poll()) != null) {
            context.reject(r.row(), r.value(), r.reason());
        }
    }

    /**
     * The epoch is durable once every message sent before the barrier is acknowledged. Waits
     * for that (the producer sends within linger.ms) up to the checkpoint's deadline; a broker
     * that stays away longer times the epoch out rather than stalling the lane.
     */
    @Override
    public void onBarrier(Barrier barrier) {
        while (inFlight.get() > 0) {
            throwIfFailed();
            if (barrier.remainingNanos() == 0) {
                throw new CheckpointTimeoutException(
                        inFlight.get() + " messages to topic " + topic + " not acknowledged yet");
            }
            LockSupport.parkNanos(200_000);
        }
        throwIfFailed();
        // Every send of the epoch is answered: its refused records reach the dead letter,
        // which the runner flushes right after this, before the epoch can be finalized.
        handleRefused();
    }

    /** Exactly-once: the epoch is finalized (its offsets were handed over first): commit it. */
    @Override
    public void onCheckpointComplete(long epoch) {
        if (transaction != null) {
            transaction.commit();
        }
    }

    private void throwIfFailed() {
        Exception e = failure.get();
        if (e != null) {
            throw new IllegalStateException("writing to topic " + topic + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        if (sender != null) {
            // After a final checkpoint nothing is queued; after a failure, free what is.
            List<Outgoing> left = new java.util.ArrayList<>();
            outgoing.drainTo(left);
            left.forEach(this::discard);
            if (!outgoing.offer(STOP)) {
                sender.interrupt();
            }
            try {
                sender.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (producer != null) {
            producer.close();
        }
    }
}
