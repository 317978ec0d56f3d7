package dev.sluice.connector.kafka;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.config.ConfigDef;
import dev.sluice.config.ConfigType;
import dev.sluice.config.NodeKind;
import dev.sluice.config.ParsedConfig;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.CheckpointTimeoutException;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.runtime.StageType;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
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
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The {@code kafka} sink: rows encoded in the core (one slab plus offsets per batch); Java only
 * wraps each record's bytes into a producer record. Idempotent producer, acks=all; a barrier
 * waits until every record is acknowledged, so an acknowledged epoch is durable in Kafka.
 */
public final class KafkaSink implements Sink {

    public static final StageType TYPE = StageType.of(NodeKind.SINK, "kafka",
            "Writes one message per row to a topic. Rows with an `_op` column (a change stream, e.g. from a "
                    + "debezium source) carry it as the `op` header (i, u, d) instead of in the value.",
            AvroSettings.define(KafkaSettings.client(new ConfigDef()
                    .define("topic", ConfigType.STRING, null, true, "The topic to write.")
                    .defineEnum("format", List.of("json", "csv", "raw", "avro"), "json", false,
                            "json (an object per message), csv (a line), raw (the bytes of the one column left besides "
                                    + "the key's and `_op`, binary or string; null becomes an empty message) or avro "
                                    + "(one datum per message, no framing).")
                    .define("key", ConfigType.LIST, List.of(), false,
                            "Columns that make the message key: one column's value as text, several as a JSON object. "
                                    + "Default: the primary key of the source the rows come from (its `primary_key`), "
                                    + "if the rows still have its columns; else no key.")
                    .defineEnum("compression", List.of("none", "gzip", "snappy", "lz4", "zstd"), "lz4", false,
                            "Producer compression.")), false),
            KafkaSink::new).preparedBy(KafkaSettings::startPlatformMBeanServer);

    private final ParsedConfig config;
    private final String topic;
    private NativeEncoder encoder;
    private List<String> key;
    /** Whether rows carry {@code _op}: it then travels as the {@code op} header, not in the value. */
    private boolean changeStream;
    private KafkaProducer<byte[], byte[]> producer;
    private Properties producerProperties;
    private StageContext context;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    /** Messages handed to the sender thread and not yet acknowledged (or failed). */
    private final AtomicLong inFlight = new AtomicLong();
    /** At most two encoded batches wait for the sender: beyond that the lane waits (back-pressure). */
    private final BlockingQueue<Outgoing> outgoing = new ArrayBlockingQueue<>(2);
    private Thread sender;

    KafkaSink(ParsedConfig config) {
        this.config = config;
        this.topic = config.getString("topic");
        this.key = config.getList("key");
    }

    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        List<String> columns = schema.getFields().stream().map(Field::getName).toList();
        if (key.isEmpty()) {
            key = PrimaryKey.of(schema);
        }
        changeStream = columns.contains(MetadataColumns.OP);
        String format = config.getString("format");
        List<String> excluded = new java.util.ArrayList<>(changeStream ? List.of(MetadataColumns.OP) : List.of());
        if (format.equals("raw")) {
            // The key travels as the message key; the one column left is the value.
            excluded.addAll(key);
        }
        encoder = new NativeEncoder(format, false, true, key, excluded,
                AvroSettings.coreOptions(config, context.pipelineDirectory(), false));
        for (String k : key) {
            if (!columns.contains(k)) {
                throw new InvalidSettingException("key", "key column '" + k + "' is not in the input " + columns);
            }
        }
        Properties props = KafkaSettings.clientProperties(config);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.putIfAbsent(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.getString("compression"));
        // Larger batches and a short linger cut client and broker CPU several times over the
        // defaults (FIELD-NOTES); properties: can override both.
        props.putIfAbsent(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(512 * 1024));
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "20");
        Properties checkProps = new Properties();
        checkProps.putAll(props);
        context.checkWhileOpening(() -> KafkaSettings.checkAccess(checkProps, List.of(topic),
                org.apache.kafka.common.acl.AclOperation.WRITE, null));
        producerProperties = props;
    }

    /** The producer connects only for a run: validation stops at {@link #open}. */
    @Override
    public void start() {
        producer = new KafkaProducer<>(producerProperties, new ByteArraySerializer(), new ByteArraySerializer());
        sender = new Thread(this::sendLoop, "sluice-kafka-sink-" + context.nodeName());
        sender.setDaemon(true);
        sender.start();
    }

    @Override
    public void write(Batch batch) {
        throwIfFailed();
        if (batch instanceof NativeBatch nativeBatch) {
            write(nativeBatch);
        } else {
            try (VectorSchemaRoot root = batch.toVectors(context.allocator());
                    NativeBatch copy = NativeBatch.fromVectors(context.allocator(), root)) {
                write(copy);
            }
        }
    }

    /**
     * Encodes on the lane and hands the records to the sender thread. Only the queue's hand-off
     * (per batch, not per row) is shared; the lane goes on decoding and querying the next batch
     * while the previous one is copied into producer records and compressed.
     */
    private void write(NativeBatch batch) {
        byte[][] ops = changeStream ? opHeaders(batch) : null;
        NativeEncoder.Records records = encoder.encodeRecords(batch);
        // Counted before the hand-off, so a barrier also waits for records still queued.
        inFlight.addAndGet(records.count());
        Outgoing next = new Outgoing(records, ops);
        try {
            while (!outgoing.offer(next, 100, TimeUnit.MILLISECONDS)) {
                throwIfFailed();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            discard(next);
            throw new IllegalStateException("interrupted while handing records for topic " + topic + " to the producer", e);
        } catch (RuntimeException e) {
            discard(next);
            throw e;
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

    private static final byte[][] OPS = {"i".getBytes(StandardCharsets.UTF_8), "u".getBytes(StandardCharsets.UTF_8),
        "d".getBytes(StandardCharsets.UTF_8)};

    /** Encoded records on their way to the sender thread, with each row's {@code op} header if any. */
    private record Outgoing(NativeEncoder.Records records, byte[][] ops) {}

    private static final Outgoing STOP = new Outgoing(null, null);

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
                for (; sent < records.count(); sent++) {
                    send(records, next.ops(), sent);
                }
            } catch (Throwable e) {
                // Whatever stops this thread must reach the lane, or its next hand-off would wait forever.
                failure.compareAndSet(null, e instanceof Exception exception ? exception : new IllegalStateException(e));
                inFlight.addAndGet(sent - next.records().count()); // these never reached the producer
            }
        }
    }

    private void send(NativeEncoder.Records records, byte[][] ops, int i) {
        // The producer needs a byte[] per message: one copy straight out of the native slab.
        byte[] value = new byte[(int) records.length(i)];
        MemorySegment.copy(records.data(), JAVA_BYTE, records.start(i), value, 0, value.length);
        byte[] messageKey = null;
        if (records.hasKeys()) {
            messageKey = new byte[(int) records.keyLength(i)];
            MemorySegment.copy(records.keys(), JAVA_BYTE, records.keyStart(i), messageKey, 0, messageKey.length);
        }
        ProducerRecord<byte[], byte[]> message = new ProducerRecord<>(topic, messageKey, value);
        if (ops != null) {
            message.headers().add("op", ops[i]);
        }
        producer.send(message, onSent);
    }

    /** Frees records that will not be sent and stops waiting for them. */
    private void discard(Outgoing unsent) {
        unsent.records().close();
        inFlight.addAndGet(-unsent.records().count());
    }

    /** One callback for every send: remembers the first failure for the next write or barrier. */
    private final org.apache.kafka.clients.producer.Callback onSent = (metadata, e) -> {
        if (e != null) {
            failure.compareAndSet(null, e);
        }
        inFlight.decrementAndGet();
    };

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
                throw new CheckpointTimeoutException(inFlight.get() + " messages to topic " + topic + " not acknowledged yet");
            }
            LockSupport.parkNanos(200_000);
        }
        throwIfFailed();
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
