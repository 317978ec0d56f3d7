package dev.sluice.peers.kstreams;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;

/**
 * One Nexmark query on Kafka Streams over a bounded input: reads the input topic from earliest
 * to the end offsets present at start, writes JSON rows to the output topic, then closes
 * itself and prints {@code {"engine":"kafka-streams","query":..,"threads":N,"seconds":..}}.
 */
public final class NexmarkStreams {

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
            if (!Queries.NAMES.contains(options.query())) {
                throw new IllegalArgumentException("unknown query '" + options.query() + "'; known: " + Queries.NAMES);
            }
            if (options.query().equals("q13") && options.sideInput() == null) {
                throw new IllegalArgumentException("q13 needs --side-input FILE.csv");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("kstreams-nexmark: " + e.getMessage() + "\n" + Options.USAGE);
            System.exit(2);
            return;
        }
        System.exit(run(options));
    }

    private static int run(Options options) throws Exception {
        Map<Long, String> sideTable = options.sideInput() == null ? Map.of() : SideInput.load(options.sideInput());
        Map<Integer, long[]> offsets = inputOffsets(options.bootstrap(), options.input());
        long recordsIn = offsets.values().stream().mapToLong(o -> o[1] - o[0]).sum();
        EndOfInput endOfInput = new EndOfInput(offsets);
        LongAdder rowsOut = new LongAdder();

        StreamsBuilder builder = new StreamsBuilder();
        KStream<byte[], Bid> bids = builder.stream(options.input(), Consumed.with(Serdes.ByteArray(), Json.bids()))
                .processValues(endOfInput);
        Queries.of(options.query(), sideTable).apply(bids)
                .peek((key, row) -> rowsOut.increment())
                .to(options.output(), Produced.with(Serdes.ByteArray(), Json.rows()));

        Path stateDir = Files.createTempDirectory("kstreams-nexmark-");
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Properties config = config(options, stateDir);
        KafkaStreams streams = new KafkaStreams(builder.build(config), config);
        streams.setUncaughtExceptionHandler(e -> {
            failure.compareAndSet(null, e);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });

        long started = System.nanoTime();
        streams.start();
        boolean done = false;
        while (failure.get() == null && streams.state() != KafkaStreams.State.ERROR && !done) {
            done = endOfInput.await(100);
        }
        // A clean close flushes the producer (every output record acknowledged) and commits.
        boolean closed = streams.close(Duration.ofMinutes(2));
        double seconds = (System.nanoTime() - started) / 1e9;
        streams.cleanUp();
        deleteTree(stateDir);

        if (!done || !closed) {
            Throwable cause = failure.get();
            System.err.println("kstreams-nexmark: " + (cause != null ? "failed: " + cause
                    : !done ? "stopped in state " + streams.state() + " before the end of the input" : "close timed out"));
            return 1;
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", "kafka-streams");
        result.put("query", options.query());
        result.put("threads", options.threads());
        result.put("seconds", seconds);
        result.put("records_in", recordsIn);
        result.put("rows_out", rowsOut.sum());
        System.out.println(new String(Json.rowBytes(result), java.nio.charset.StandardCharsets.UTF_8));
        return 0;
    }

    /** Client settings: Sluice's Kafka source and sink defaults, so both sides pay the same I/O. */
    static Properties config(Options options, Path stateDir) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, options.appId());
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, options.bootstrap());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, options.threads());
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        // At-least-once, committing every 10 s: the same guarantee and interval as Sluice's checkpoints.
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 10_000);
        // Consumer: as Sluice's Kafka source (max.poll.records = its batch_size 8192).
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 8192);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), 65536);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), 10);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), 8 * 1024 * 1024);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.RECEIVE_BUFFER_CONFIG), 1024 * 1024);
        // Producer: as Sluice's Kafka sink.
        p.put(StreamsConfig.producerPrefix(ProducerConfig.ACKS_CONFIG), "all");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG), true);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 512 * 1024);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 10);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.SEND_BUFFER_CONFIG), 1024 * 1024);
        return p;
    }

    /** Partition -> [earliest, end) offsets of {@code topic} now. */
    static Map<Integer, long[]> inputOffsets(String bootstrap, String topic) throws InterruptedException, ExecutionException {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>(), latest = new HashMap<>();
            description.partitions().forEach(p -> {
                earliest.put(new TopicPartition(topic, p.partition()), OffsetSpec.earliest());
                latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
            });
            var first = admin.listOffsets(earliest).all().get();
            var end = admin.listOffsets(latest).all().get();
            Map<Integer, long[]> offsets = new HashMap<>();
            first.forEach((tp, info) -> offsets.put(tp.partition(), new long[] {info.offset(), end.get(tp).offset()}));
            return offsets;
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
