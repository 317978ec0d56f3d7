package dev.sluice.connector.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code delivery: exactly_once} against the real broker: pipelines killed with -9 at random
 * moments, and two instances of one group with one killed and restarted, while the input
 * streams in; then a {@code read_committed} consumer must find every input record's output
 * exactly once (no id missing, none twice), and every dead letter exactly once.
 */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class ExactlyOnceKafkaTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /**
     * Kafka → SQL → Kafka, exactly once. Short session and transaction timeouts (the broker's
     * minimum session is 6 s): a killed instance's partitions and its open transaction are given
     * up within seconds, not after the defaults' 45 s and 70 s.
     */
    private Path pipeline(String name, String servers, String in, String out, String deadLetters) throws IOException {
        return pipeline(name, servers, in, out, deadLetters, 1);
    }

    /** As above, with {@code lanes} lanes per process (a transaction each). */
    private Path pipeline(String name, String servers, String in, String out, String deadLetters, int lanes)
            throws IOException {
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, """
                name: %s
                delivery: exactly_once
                checkpoint: {interval: 500ms}
                sources:
                  events:
                    type: kafka
                    topic: %s
                    group_id: g-%s
                    bootstrap_servers: %s
                    schema: {id: bigint, name: string, amount: bigint}
                    batch_size: 2000
                    batch_flush_interval: 20ms
                    on_error: dead_letter
                    dead_letter_topic: %s
                    parallelism: %d
                    properties: {session.timeout.ms: 6000, heartbeat.interval.ms: 1000}
                transforms:
                  shaped:
                    type: sql
                    sql: SELECT id, upper(name) AS name, amount * 2 AS twice FROM events
                sinks:
                  out:
                    type: kafka
                    from: shaped
                    topic: %s
                    key: [id]
                    bootstrap_servers: %s
                    properties: {transaction.timeout.ms: 10000}
                """.formatted(name, in, in, servers, deadLetters, lanes, out, servers));
        return file;
    }

    /** Record {@code i} of the input: key {@code k<i>}, a JSON object with id, name and amount. */
    private static String[] record(int i) {
        return new String[] {"k" + i, "{\"id\": %d, \"name\": \"n%d\", \"amount\": %d}".formatted(i, i, i % 100)};
    }

    /** Streams ids [0, n) into {@code topic} in slices, one slice a second, with {@code poison} bad records spread in. */
    private static Thread streamInput(String servers, String topic, int n, int slice, int poison) {
        return Thread.ofPlatform().start(() -> {
            int poisonEvery = poison == 0 ? Integer.MAX_VALUE : n / poison;
            int poisoned = 0;
            for (int from = 0; from < n; from += slice) {
                List<String[]> batch = new ArrayList<>();
                for (int i = from; i < Math.min(n, from + slice); i++) {
                    batch.add(record(i));
                    if (i % poisonEvery == poisonEvery / 2 && poisoned < poison) {
                        batch.add(new String[] {"bad" + poisoned, "not json " + poisoned++});
                    }
                }
                KafkaTestSupport.produce(servers, topic, batch);
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    @Test
    void killedTwentyTimesAMillionRecordsComeOutExactlyOnce() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("eos-in");
        String out = KafkaTestSupport.uniqueTopic("eos-out");
        String deadLetters = KafkaTestSupport.uniqueTopic("eos-dlq");
        KafkaTestSupport.createTopics(servers, 3, in, out, deadLetters);
        int n = 1_000_000;
        int poison = 20;
        // ~100 s of input, longer than the 20 kills take, so every kill lands while output flows.
        Thread producer = streamInput(servers, in, n, 10_000, poison);
        Path file = pipeline("eos-kill", servers, in, out, deadLetters);
        Random random = new Random(20);
        List<Long> outputAtKills = new ArrayList<>();
        // Counts messages as they reach the log, committed or not (read_uncommitted).
        try (KafkaTestSupport.OutputCounter progress = new KafkaTestSupport.OutputCounter(servers, out)) {
            for (int kill = 0; kill < 20; kill++) {
                long before = awaitStable(progress);
                Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
                try {
                    // After this run's output started: its messages reach the log before they commit.
                    progress.awaitMoreThan(before, Duration.ofSeconds(60));
                    Thread.sleep(random.nextInt(1_500));
                } finally {
                    process.destroyForcibly(); // kill -9: its open transaction stays open
                    process.waitFor(10, TimeUnit.SECONDS);
                }
                outputAtKills.add(progress.count());
            }
        }
        producer.join();
        Process last = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        Verified verified;
        try {
            verified = readCommitted(servers, out, n, Duration.ofSeconds(240));
        } finally {
            last.destroy();
            last.waitFor(30, TimeUnit.SECONDS);
        }
        long uncommittedView = KafkaTestSupport.consumeUntil(
                        servers, out, r -> r.size() >= verified.records, Duration.ofSeconds(30))
                .size();
        System.err.printf(
                "exactly-once kill test: %d records read committed, %d distinct ids, %d duplicates; "
                        + "%d messages in the log including aborted ones; messages seen at the kills %s%n",
                verified.records, verified.distinct, verified.duplicates, uncommittedView, outputAtKills);
        assertEquals(n, verified.distinct, "every id arrived\n" + log());
        assertEquals(0, verified.duplicates, "no id arrived twice\n" + log());
        assertEquals(n, verified.records);
        assertDeadLettersExactlyOnce(servers, deadLetters, poison);
    }

    @Test
    void twoInstancesOfTwoLanesOneKilledAndRestartedEveryRecordOnce() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("eos2-in");
        String out = KafkaTestSupport.uniqueTopic("eos2-out");
        String deadLetters = KafkaTestSupport.uniqueTopic("eos2-dlq");
        KafkaTestSupport.createTopics(servers, 4, in, out, deadLetters);
        int n = 300_000;
        Thread producer = streamInput(servers, in, n, 10_000, 4);
        Path file = pipeline("eos-two", servers, in, out, deadLetters, 2); // 2 lanes each: 4 transactions
        Process a = KafkaTestSupport.startPipeline(file, dir.resolve("state-a"), dir.resolve("run.log"));
        Process b = KafkaTestSupport.startPipeline(file, dir.resolve("state-b"), dir.resolve("run.log"));
        Verified verified;
        try (KafkaTestSupport.OutputCounter progress = new KafkaTestSupport.OutputCounter(servers, out)) {
            progress.awaitMoreThan(20_000, Duration.ofSeconds(60));
            Thread.sleep(new Random(2).nextInt(1_000));
            b.destroyForcibly(); // its partitions go to a after the session timeout; its transaction is aborted
            b.waitFor(10, TimeUnit.SECONDS);
            // a alone for a while (it takes over b's partitions), then b again: two more rebalances.
            progress.awaitMoreThan(progress.count() + 50_000, Duration.ofSeconds(90));
            b = KafkaTestSupport.startPipeline(file, dir.resolve("state-b"), dir.resolve("run.log"));
            producer.join();
            verified = readCommitted(servers, out, n, Duration.ofSeconds(180));
        } finally {
            a.destroy();
            b.destroy();
            a.waitFor(30, TimeUnit.SECONDS);
            b.waitFor(30, TimeUnit.SECONDS);
        }
        System.err.printf(
                "exactly-once two instances: %d records read committed, %d distinct ids, %d duplicates%n",
                verified.records, verified.distinct, verified.duplicates);
        assertEquals(n, verified.distinct, "every id arrived\n" + log());
        assertEquals(0, verified.duplicates, "no id arrived twice\n" + log());
        assertDeadLettersExactlyOnce(servers, deadLetters, 4);
    }

    /**
     * The broker restarts under a running exactly-once pipeline. The pipeline may ride it out or
     * fail (a transaction the restart broke fails the run, as it should: a supervisor restarts it);
     * either way, after at most one restart, every record's output is there exactly once.
     * Runs last: right after a restart the broker may refuse writes to topics created then.
     */
    @Test
    @org.junit.jupiter.api.Order(Integer.MAX_VALUE)
    void aBrokerRestartLosesAndRepeatsNothing() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("eos3-in");
        String out = KafkaTestSupport.uniqueTopic("eos3-out");
        String deadLetters = KafkaTestSupport.uniqueTopic("eos3-dlq");
        KafkaTestSupport.createTopics(servers, 2, in, out, deadLetters);
        int n = 100_000;
        KafkaTestSupport.produce(servers, in, ids(0, n / 2));
        Path file = pipeline("eos-broker", servers, in, out, deadLetters);
        Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        boolean survived;
        Verified verified;
        try {
            try (KafkaTestSupport.OutputCounter progress = new KafkaTestSupport.OutputCounter(servers, out)) {
                progress.awaitMoreThan(5_000, Duration.ofSeconds(60));
            }
            Path repo = Path.of(System.getProperty("sluice.repo.root", ".."))
                    .toAbsolutePath()
                    .normalize();
            Process restart = new ProcessBuilder(
                            "bash", repo.resolve("ci/kafka.sh").toString(), "restart")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            dir.resolve("broker.log").toFile()))
                    .start();
            assertTrue(restart.waitFor(120, TimeUnit.SECONDS) && restart.exitValue() == 0, "broker restarted");
            KafkaTestSupport.produce(servers, in, ids(n / 2, n));
            process.waitFor(5, TimeUnit.SECONDS);
            survived = process.isAlive();
            if (!survived) {
                process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
            }
            verified = readCommitted(servers, out, n, Duration.ofSeconds(180));
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        System.err.printf(
                "exactly-once broker restart: the pipeline %s; %d records read committed, %d distinct ids, "
                        + "%d duplicates%n",
                survived ? "rode it out" : "failed and was started again",
                verified.records,
                verified.distinct,
                verified.duplicates);
        assertEquals(n, verified.distinct, "every id arrived\n" + log());
        assertEquals(0, verified.duplicates, "no id arrived twice\n" + log());
    }

    private static List<String[]> ids(int from, int to) {
        List<String[]> records = new ArrayList<>();
        for (int i = from; i < to; i++) {
            records.add(record(i));
        }
        return records;
    }

    /**
     * A row too large for the producer goes to the sink's dead letter without being sent (a
     * refused send would abort the epoch's transaction, and the replay would refuse it again); the
     * other rows commit, exactly once, with the input's offsets.
     */
    @Test
    void aRowTooLargeGoesToTheDeadLetterAndTheEpochStillCommits() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("eos4-in");
        String out = KafkaTestSupport.uniqueTopic("eos4-out");
        KafkaTestSupport.createTopics(servers, 1, in, out);
        KafkaTestSupport.produce(servers, in, ids(0, 200));
        Path file = dir.resolve("big.yaml");
        Files.writeString(file, """
                name: eos-big
                delivery: exactly_once
                sources:
                  events: {type: kafka, topic: %s, group_id: g-%s, bootstrap_servers: %s, bounded: true,
                           schema: {id: bigint, name: string, amount: bigint}}
                transforms:
                  shaped:
                    type: sql
                    sql: "SELECT id, CASE WHEN id = 7 THEN repeat('x', 1100000) ELSE upper(name) END AS name, amount * 2 AS twice FROM events"
                sinks:
                  out: {type: kafka, from: shaped, topic: %s, key: [id], bootstrap_servers: %s}
                """.formatted(in, in, servers, out, servers));
        Process run = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        assertTrue(run.waitFor(120, TimeUnit.SECONDS), "the bounded run ended\n" + log());
        assertEquals(0, run.exitValue(), log());
        Verified verified =
                readCommitted(servers, out, 200, Duration.ofSeconds(10)); // 199 arrive: it reads until the time is up
        assertEquals(199, verified.distinct, log());
        assertEquals(0, verified.duplicates);
        List<String> dead = Files.readAllLines(dir.resolve("eos-big.out.dead-letter.jsonl"));
        assertEquals(1, dead.size(), log());
        JsonNode letter = JSON.readTree(dead.get(0));
        assertTrue(letter.get("record").asText().startsWith("{\"id\":7,\"name\":\"xxx"), log());
        assertTrue(
                letter.get("error").asText().contains("under exactly_once"),
                letter.get("error").asText());
    }

    @Test
    void sinksOnAnotherClusterOrWithOtherProducerSettingsAreRefusedAtValidate() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("eos-v-in");
        String out = KafkaTestSupport.uniqueTopic("eos-v-out");
        KafkaTestSupport.createTopics(servers, 1, in, out);
        String source = """
                delivery: exactly_once
                sources:
                  events:
                    type: kafka
                    topic: %s
                    bootstrap_servers: %s
                    schema: {id: bigint}
                sinks:
                  a:
                    type: kafka
                    from: events
                    topic: %s
                    bootstrap_servers: %s
                    compression: lz4
                """.formatted(in, servers, out, servers);
        String ok = validate("ok.yaml", source);
        assertTrue(ok.isEmpty(), ok);
        String otherSettings = validate("settings.yaml", source + """
                  b:
                    type: kafka
                    from: events
                    topic: %s
                    bootstrap_servers: %s
                    compression: gzip
                """.formatted(out, servers));
        assertTrue(
                otherSettings.contains("settings.yaml:15:3: node 'b': delivery: exactly_once writes every kafka sink "
                        + "of the pipeline through one transactional producer, so their producer settings must agree; "
                        + "this sink's differ from 'a': compression.type"),
                otherSettings);
        String otherCluster = validate(
                "cluster.yaml",
                source.replace(
                        "bootstrap_servers: " + servers + "\n    compression",
                        "bootstrap_servers: 127.0.0.1:1\n    compression"));
        assertTrue(
                otherCluster.contains("node 'a': delivery: exactly_once commits the source's offsets in the sink's "
                        + "transaction, so both must use one cluster: source 'events' reads from " + servers
                        + " but this sink writes to 127.0.0.1:1"),
                otherCluster);
    }

    /** {@code sluice validate} of {@code yaml}: its stderr if it failed, else empty. */
    private String validate(String name, String yaml) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, yaml);
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = Main.execute("validate", file.toString());
            return code == 0 ? "" : err.toString(StandardCharsets.UTF_8).replace(file.toString(), name);
        } finally {
            System.setErr(original);
        }
    }

    private record Verified(long records, long distinct, long duplicates) {}

    /**
     * Reads {@code topic} read_committed from the start until {@code n} distinct ids arrived or
     * the time is up, then 3 s more for anything late; checks each row's values against its id.
     */
    private static Verified readCommitted(String servers, String topic, int n, Duration within) throws IOException {
        byte[] seen = new byte[n];
        long records = 0;
        long distinct = 0;
        long duplicates = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = readCommittedFromStart(servers, topic)) {
            long deadline = System.nanoTime() + within.toNanos();
            long graceEnd = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, graceEnd)) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    JsonNode row = JSON.readTree(r.value());
                    int id = row.get("id").asInt();
                    assertEquals("N" + id, row.get("name").asText(), "row " + row);
                    assertEquals(2L * (id % 100), row.get("twice").asLong(), "row " + row);
                    assertEquals(Integer.toString(id), new String(r.key(), StandardCharsets.UTF_8), "key of " + row);
                    records++;
                    if (seen[id]++ == 0) {
                        distinct++;
                    } else {
                        duplicates++;
                    }
                }
                if (distinct == n && graceEnd == Long.MAX_VALUE) {
                    graceEnd = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                }
            }
        }
        return new Verified(records, distinct, duplicates);
    }

    /** A consumer of {@code topic} from its start that sees only committed transactions (a fresh group). */
    private static KafkaConsumer<byte[], byte[]> readCommittedFromStart(String servers, String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "verify-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** The dead-letter topic holds each bad record once, read committed (its writes join the transactions). */
    private static void assertDeadLettersExactlyOnce(String servers, String topic, int poison) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = readCommittedFromStart(servers, topic)) {
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < end) {
                consumer.poll(Duration.ofMillis(200))
                        .forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
            }
        }
        Set<String> distinct = new HashSet<>(values);
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < poison; i++) {
            expected.add("not json " + i);
        }
        assertEquals(expected, distinct, "every dead letter arrived");
        assertEquals(poison, values.size(), "no dead letter twice: " + values);
    }

    /**
     * The counter's count once it has not moved for 500 ms: what a killed run wrote is counted, so
     * what arrives next is the next run's. (End offsets cannot tell: transaction markers take
     * offsets too, and the next run's initTransactions writes abort markers before any output.)
     */
    private static long awaitStable(KafkaTestSupport.OutputCounter progress) throws InterruptedException {
        long last = -1;
        while (progress.count() != last) {
            last = progress.count();
            Thread.sleep(500);
        }
        return last;
    }

    private String log() {
        try {
            Path log = dir.resolve("run.log");
            String text = Files.exists(log) ? Files.readString(log) : "(no log)";
            return text.length() > 20_000 ? text.substring(text.length() - 20_000) : text;
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }
}
