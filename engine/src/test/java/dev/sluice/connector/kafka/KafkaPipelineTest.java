package dev.sluice.connector.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka → SQL → Kafka against the real broker, with checkpoints, dead letters and kill -9.
 * The broker-restart test runs last: right after a restart, the broker may refuse writes to
 * topics created then (NOT_LEADER_OR_FOLLOWER) for a while, which is not what the others test.
 */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class KafkaPipelineTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path pipeline(String servers, String in, String out, String group, String extraSource) throws IOException {
        Path file = dir.resolve("kafka.yaml");
        Files.writeString(file, """
                name: kafka-test
                checkpoint: {interval: 500ms}
                sources:
                  events:
                    type: kafka
                    topic: %s
                    group_id: %s
                    bootstrap_servers: %s
                    schema: {id: bigint, name: string, amount: bigint}
                    metadata: [_partition, _offset]
                    batch_size: 500
                    batch_flush_interval: 20ms
                    properties: {session.timeout.ms: 6000, heartbeat.interval.ms: 1000}
                %s
                transforms:
                  big:
                    type: sql
                    sql: SELECT id, upper(name) AS name, amount, _partition, _offset FROM events WHERE amount >= 50
                sinks:
                  out:
                    type: kafka
                    from: big
                    topic: %s
                    key: [id]
                    bootstrap_servers: %s
                """.formatted(in, group, servers, extraSource.indent(4).stripTrailing(), out, servers));
        return file;
    }

    private static List<String[]> records(int n) {
        List<String[]> records = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            records.add(new String[] {"k" + i, "{\"id\": %d, \"name\": \"n%d\", \"amount\": %d}".formatted(i, i, i % 100)});
        }
        return records;
    }

    @Test
    void recordsFlowThroughSqlAndPoisonGoesToTheDeadLetterTopic() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        String dlq = KafkaTestSupport.uniqueTopic("dlq");
        KafkaTestSupport.createTopics(servers, 1, in, out, dlq);
        List<String[]> input = records(2000);
        input.add(700, new String[] {"bad1", "{\"id\": \"not a number\"}"});
        input.add(1500, new String[] {"bad2", "garbage"});
        KafkaTestSupport.produce(servers, in, input);
        String group = "g-" + in;
        Path file = pipeline(servers, in, out, group, "dead_letter_topic: " + dlq);
        Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        try {
            List<ConsumerRecord<byte[], byte[]>> results = KafkaTestSupport.consumeAll(servers, out, 1000, Duration.ofSeconds(60));
            assertEquals(1000, results.size(), log());
            for (ConsumerRecord<byte[], byte[]> r : results) {
                JsonNode row = JSON.readTree(r.value());
                assertEquals(Long.toString(row.get("id").asLong()), new String(r.key(), StandardCharsets.UTF_8), "key is the id");
                assertTrue(row.get("amount").asLong() >= 50);
                assertEquals("N" + row.get("id").asLong(), row.get("name").asText());
            }
            List<ConsumerRecord<byte[], byte[]>> dead = KafkaTestSupport.consumeAll(servers, dlq, 2, Duration.ofSeconds(30));
            assertEquals(2, dead.size(), log());
            ConsumerRecord<byte[], byte[]> first = dead.get(0);
            assertEquals("{\"id\": \"not a number\"}", new String(first.value(), StandardCharsets.UTF_8));
            assertEquals(in, header(first, "sluice.topic"));
            assertEquals("700", header(first, "sluice.offset"));
            assertTrue(!header(first, "sluice.error").isBlank());
        } finally {
            process.destroy(); // SIGTERM: a final checkpoint, then exit
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the pipeline stops on SIGTERM");
        }
        // A clean stop (final checkpoint taken, summary printed) exits 0 (cli.StopSignals).
        assertEquals(0, process.exitValue(), log());
        assertTrue(log().contains("[kafka-test] stopped") && log().contains("checkpoints:"), log());
        // Every record was handled, so the final checkpoint committed the end of the topic.
        assertEquals(2002L, committed(servers, group).get(new TopicPartition(in, 0)), log());
        // The dead letters read back raw, with their headers as a metadata column.
        Path readBack = dir.resolve("dlq.yaml");
        Files.writeString(readBack, """
                sources:
                  dead: {type: kafka, topic: %s, bootstrap_servers: %s, format: raw, metadata: [_headers], bounded: true}
                transforms:
                  t: {type: sql, sql: "SELECT json_get_str(_headers, 'sluice.offset') AS offset, octet_length(CAST(value AS VARCHAR)) AS bytes FROM dead"}
                sinks:
                  out: {type: file, from: t, path: dlq.jsonl}
                """.formatted(dlq, servers));
        assertEquals(0, dev.sluice.cli.Main.execute("run", readBack.toString(), "--state-dir", dir.resolve("dlq-state").toString()));
        assertEquals(List.of("{\"offset\":\"700\",\"bytes\":22}", "{\"offset\":\"1500\",\"bytes\":7}"),
                Files.readAllLines(dir.resolve("dlq.jsonl")));
    }

    @Test
    void nothingIsLostWhenThePipelineIsKilledAtRandomMoments() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 3, in, out);
        int n = 60_000;
        // The input arrives as a stream over ~12 s while the pipeline is killed three times.
        Thread producer = streamInput(servers, in, n, 5_000);
        String group = "g-" + in;
        Path file = pipeline(servers, in, out, group, "");
        Random random = new Random(7);
        List<Map<TopicPartition, Long>> committedAtKills = new ArrayList<>();
        try (KafkaTestSupport.OutputCounter progress = new KafkaTestSupport.OutputCounter(servers, out)) {
            for (int kill = 0; kill < 3; kill++) {
                Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
                // Kill mid-stream: once this run has written something, after a random pause.
                long seen = progress.count();
                progress.awaitMoreThan(seen, Duration.ofSeconds(60));
                Thread.sleep(random.nextInt(700));
                process.destroyForcibly(); // kill -9: no final checkpoint
                process.waitFor(10, TimeUnit.SECONDS);
                committedAtKills.add(committed(servers, group));
            }
        }
        producer.join();
        Process last = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        List<ConsumerRecord<byte[], byte[]>> results;
        try {
            results = KafkaTestSupport.consumeUntil(servers, out, new AllIds(n / 2), Duration.ofSeconds(120));
        } finally {
            last.destroy();
            last.waitFor(30, TimeUnit.SECONDS);
        }
        Set<Long> ids = new HashSet<>();
        Map<TopicPartition, Map<Long, Integer>> copies = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : results) {
            JsonNode row = JSON.readTree(r.value());
            ids.add(row.get("id").asLong());
            TopicPartition source = new TopicPartition(in, row.get("_partition").asInt());
            copies.computeIfAbsent(source, k -> new HashMap<>()).merge(row.get("_offset").asLong(), 1, Integer::sum);
        }
        assertEquals(n / 2, ids.size(), "every expected output key is present: nothing lost\n" + log());
        // A record may appear once more per kill only if that kill happened before its epoch
        // was finalized, i.e. at or after the offset committed when the process died.
        long duplicates = 0;
        for (var partition : copies.entrySet()) {
            for (var offset : partition.getValue().entrySet()) {
                long allowed = 1 + committedAtKills.stream()
                        .filter(c -> c.getOrDefault(partition.getKey(), 0L) <= offset.getKey()).count();
                assertTrue(offset.getValue() <= allowed, partition.getKey() + "@" + offset.getKey() + " written "
                        + offset.getValue() + " times, but only " + allowed + " kills could replay it");
                duplicates += offset.getValue() - 1;
            }
        }
        System.err.printf("kill -9 test: %d output rows, %d distinct, %d duplicates from unfinalized epochs; committed at kills %s%n",
                results.size(), ids.size(), duplicates, committedAtKills);
    }

    @Test
    void aSecondInstanceTakesOverThePartitionsOfAKilledOne() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 4, in, out);
        int n = 40_000;
        Thread producer = streamInput(servers, in, n, n / 8);
        Path file = pipeline(servers, in, out, "g-" + in, "");
        Process first = KafkaTestSupport.startPipeline(file, dir.resolve("state-a"), dir.resolve("run.log"));
        Process second = KafkaTestSupport.startPipeline(file, dir.resolve("state-b"), dir.resolve("run.log"));
        List<ConsumerRecord<byte[], byte[]>> results;
        try (KafkaTestSupport.OutputCounter progress = new KafkaTestSupport.OutputCounter(servers, out)) {
            progress.awaitMoreThan(5_000, Duration.ofSeconds(60));
            first.destroyForcibly(); // its partitions move to the second instance after the session timeout
            first.waitFor(10, TimeUnit.SECONDS);
            producer.join();
            results = KafkaTestSupport.consumeUntil(servers, out, new AllIds(n / 2), Duration.ofSeconds(120));
        } finally {
            first.destroyForcibly();
            second.destroy();
            second.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(n / 2, distinctIds(results), "every expected key arrived although one instance died\n" + log());
    }

    @Test
    @org.junit.jupiter.api.Order(Integer.MAX_VALUE)
    void thePipelineRidesOutABrokerRestart() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 2, in, out);
        int n = 40_000;
        KafkaTestSupport.produce(servers, in, records(n / 2));
        Path file = pipeline(servers, in, out, "g-" + in, "");
        Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        List<ConsumerRecord<byte[], byte[]>> results;
        try (KafkaTestSupport.OutputCounter progress = new KafkaTestSupport.OutputCounter(servers, out)) {
            progress.awaitMoreThan(1_000, Duration.ofSeconds(60));
            Path repo = Path.of(System.getProperty("sluice.repo.root", "..")).toAbsolutePath().normalize();
            Process restart = new ProcessBuilder("bash", repo.resolve("ci/kafka.sh").toString(), "restart")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("broker.log").toFile())).start();
            assertTrue(restart.waitFor(120, TimeUnit.SECONDS) && restart.exitValue() == 0, "broker restarted");
            assertTrue(process.isAlive(), "the pipeline survived the broker restart\n" + log());
            KafkaTestSupport.produce(servers, in, records(n).subList(n / 2, n));
            results = KafkaTestSupport.consumeAll(servers, out, n / 2, Duration.ofSeconds(120));
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(n / 2, distinctIds(results), "nothing lost across the broker restart\n" + log());
    }

    @Test
    void parallelismRunsLanesThatShareThePartitions() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 4, in, out);
        int n = 20_000;
        KafkaTestSupport.produce(servers, in, records(n));
        Path file = pipeline(servers, in, out, "g-" + in, "parallelism: 2\nbounded: true");
        CliResult run = sluice("run", file.toString(), "--state-dir", dir.resolve("state").toString());
        String stderr = run.stderr();
        assertEquals(0, run.code(), stderr);
        assertTrue(stderr.contains("running 2 lanes") && stderr.contains("completed: in 20,000"), stderr);
        List<ConsumerRecord<byte[], byte[]>> results = KafkaTestSupport.consumeAll(servers, out, n / 2, Duration.ofSeconds(60));
        assertEquals(n / 2, distinctIds(results));
    }

    @Test
    void debeziumChangeEventsKeepTheirOperationAsAHeader() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("cdc");
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 1, in, out);
        KafkaTestSupport.produce(servers, in, List.of(
                new String[] {"1", "{\"payload\": {\"op\": \"c\", \"before\": null, \"after\": {\"id\": 1, \"name\": \"ada\"}}}"},
                new String[] {"1", "{\"payload\": {\"op\": \"u\", \"before\": {\"id\": 1, \"name\": \"ada\"}, \"after\": {\"id\": 1, \"name\": \"Ada\"}}}"},
                new String[] {"2", "{\"op\": \"r\", \"after\": {\"id\": 2, \"name\": \"alan\"}}"},
                new String[] {"1", "{\"op\": \"d\", \"before\": {\"id\": 1, \"name\": \"Ada\"}, \"after\": null}"}));
        Path file = dir.resolve("cdc.yaml");
        Files.writeString(file, """
                sources:
                  people:
                    type: kafka
                    topic: %s
                    bootstrap_servers: %s
                    format: debezium
                    schema: {id: bigint, name: string}
                    bounded: true
                transforms:
                  upper:
                    type: sql
                    sql: SELECT id, upper(name) AS name, _op FROM people
                sinks:
                  out: {type: kafka, from: upper, topic: %s, key: [id], bootstrap_servers: %s}
                """.formatted(in, servers, out, servers));
        assertEquals(0, dev.sluice.cli.Main.execute("run", file.toString(), "--state-dir", dir.resolve("state").toString()));
        List<ConsumerRecord<byte[], byte[]>> results = KafkaTestSupport.consumeAll(servers, out, 4, Duration.ofSeconds(30));
        assertEquals(List.of("i", "u", "i", "d"), results.stream().map(r -> header(r, "op")).toList());
        assertEquals("{\"id\":1,\"name\":\"ADA\"}", new String(results.get(1).value(), StandardCharsets.UTF_8));
        assertEquals("1", new String(results.get(3).key(), StandardCharsets.UTF_8));
    }

    @Test
    void aJsonSchemaIsInferredFromTheTopicWhenNoneIsDeclared() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 1, in, out);
        KafkaTestSupport.produce(servers, in, List.of(new String[] {null, "{\"id\": 1, \"name\": \"a\"}"},
                new String[] {null, "{\"id\": 2, \"name\": \"b\", \"score\": 0.5}"}));
        Path file = dir.resolve("infer.yaml");
        Files.writeString(file, """
                sources:
                  events: {type: kafka, topic: %s, bootstrap_servers: %s, bounded: true}
                transforms:
                  t: {type: sql, sql: "SELECT id * 10 AS x, name, score FROM events"}
                sinks:
                  out: {type: kafka, from: t, topic: %s, bootstrap_servers: %s}
                """.formatted(in, servers, out, servers));
        assertEquals(0, dev.sluice.cli.Main.execute("run", file.toString(), "--state-dir", dir.resolve("state").toString()));
        List<ConsumerRecord<byte[], byte[]>> results = KafkaTestSupport.consumeAll(servers, out, 2, Duration.ofSeconds(30));
        assertEquals(List.of("{\"x\":10,\"name\":\"a\",\"score\":null}", "{\"x\":20,\"name\":\"b\",\"score\":0.5}"),
                results.stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList());
    }

    @Test
    void avroInAndRawOutWithAPoisonRecordInBetween() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String avro = KafkaTestSupport.uniqueTopic("avro");
        String raw = KafkaTestSupport.uniqueTopic("raw");
        String dlq = KafkaTestSupport.uniqueTopic("dlq");
        KafkaTestSupport.createTopics(servers, 1, avro, raw, dlq);
        Files.writeString(dir.resolve("bid.avsc"), """
                {"type": "record", "name": "Bid", "fields": [
                  {"name": "auction", "type": "long"}, {"name": "price", "type": "long"},
                  {"name": "url", "type": "string"},
                  {"name": "dateTime", "type": {"type": "long", "logicalType": "local-timestamp-millis"}}]}
                """);
        // Bids from the generator, written as Avro with the schema file and as JSON lines to compare.
        Path write = dir.resolve("write.yaml");
        Files.writeString(write, """
                sources:
                  bid: {type: generator, entity: bid, count: 500, seed: 3}
                transforms:
                  t: {type: sql, sql: "SELECT auction, price, url, dateTime FROM bid"}
                sinks:
                  avro: {type: kafka, from: t, topic: %s, bootstrap_servers: %s, format: avro, avro_schema_file: bid.avsc}
                  expected: {type: file, from: t, path: expected.jsonl}
                """.formatted(avro, servers));
        assertEquals(0, dev.sluice.cli.Main.execute("run", write.toString(), "--state-dir", dir.resolve("w").toString()));
        List<String> expected = Files.readAllLines(dir.resolve("expected.jsonl"));
        KafkaTestSupport.produce(servers, avro, List.<String[]>of(new String[] {null, "not avro at all"}));
        // Read them back as Avro, keep the even auctions, write each url raw; the message key is
        // the source's primary key, carried through the SQL transform.
        Path read = dir.resolve("read.yaml");
        Files.writeString(read, """
                sources:
                  bids:
                    type: kafka
                    topic: %s
                    bootstrap_servers: %s
                    format: avro
                    avro_schema_file: bid.avsc
                    primary_key: [auction]
                    bounded: true
                    dead_letter_topic: %s
                transforms:
                  even: {type: sql, sql: "SELECT auction, url FROM bids WHERE auction %% 2 = 0"}
                sinks:
                  urls: {type: kafka, from: even, topic: %s, bootstrap_servers: %s, format: raw}
                """.formatted(avro, servers, dlq, raw, servers));
        assertEquals(0, dev.sluice.cli.Main.execute("run", read.toString(), "--state-dir", dir.resolve("r").toString()));
        Map<String, List<String>> expectedUrls = new HashMap<>();
        for (String line : expected) {
            JsonNode row = JSON.readTree(line);
            if (row.get("auction").asLong() % 2 == 0) {
                expectedUrls.computeIfAbsent(row.get("auction").asText(), k -> new ArrayList<>()).add(row.get("url").asText());
            }
        }
        int count = expectedUrls.values().stream().mapToInt(List::size).sum();
        assertTrue(count > 0 && count < expected.size(), "the filter keeps some rows: " + count);
        Map<String, List<String>> urls = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : KafkaTestSupport.consumeAll(servers, raw, count, Duration.ofSeconds(30))) {
            urls.computeIfAbsent(new String(r.key(), StandardCharsets.UTF_8), k -> new ArrayList<>())
                    .add(new String(r.value(), StandardCharsets.UTF_8));
        }
        assertEquals(expectedUrls, urls);
        List<ConsumerRecord<byte[], byte[]>> dead = KafkaTestSupport.consumeAll(servers, dlq, 1, Duration.ofSeconds(30));
        assertEquals(1, dead.size());
        assertEquals("not avro at all", new String(dead.get(0).value(), StandardCharsets.UTF_8));
        assertEquals(Integer.toString(expected.size()), header(dead.get(0), "sluice.offset"), "the poison record came after the bids");
        assertTrue(header(dead.get(0), "sluice.error").contains("Avro"), header(dead.get(0), "sluice.error"));
    }

    @Test
    void authorizationAndAuthenticationErrorsAreClearAtStart() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String sasl = KafkaTestSupport.saslBootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        KafkaTestSupport.createTopics(servers, 1, in);
        // alice authenticates but has no ACLs: the source may not read the topic.
        CliResult noAcl = sluice("validate", saslPipeline(sasl, in, "alice", "alice-secret").toString());
        assertEquals(2, noAcl.code(), noAcl.stderr());
        assertTrue(noAcl.stderr().contains("sasl.yaml:4:") && noAcl.stderr().contains("not authorized")
                && noAcl.stderr().contains("'" + in + "'"), noAcl.stderr());
        // A wrong password is refused by the broker, and said so.
        CliResult wrong = sluice("validate", saslPipeline(sasl, in, "alice", "wrong").toString());
        assertEquals(2, wrong.code(), wrong.stderr());
        assertTrue(wrong.stderr().contains("Authentication failed"), wrong.stderr());
        // The super user passes the same checks.
        CliResult admin = sluice("validate", saslPipeline(sasl, in, "admin", "admin-secret").toString());
        assertEquals(0, admin.code(), admin.stderr());
    }

    /** Reads {@code topic} over SASL/PLAIN as {@code user} (the test broker's users: ci/kafka.sh). */
    private Path saslPipeline(String servers, String topic, String user, String password) throws IOException {
        Path file = dir.resolve("sasl.yaml");
        Files.writeString(file, """
                sources:
                  events:
                    type: kafka
                    topic: %s
                    bootstrap_servers: %s
                    format: raw
                    properties:
                      security.protocol: SASL_PLAINTEXT
                      sasl.mechanism: PLAIN
                      sasl.jaas.config: 'org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s";'
                sinks:
                  out: {type: blackhole, from: events}
                """.formatted(topic, servers, user, password));
        return file;
    }

    @Test
    void aMissingTopicIsAClearErrorAtStart() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String out = KafkaTestSupport.uniqueTopic("out");
        KafkaTestSupport.createTopics(servers, 1, out);
        Path file = pipeline(servers, "no-such-topic-" + out, out, "g-" + out, "");
        CliResult validate = sluice("validate", file.toString());
        String message = validate.stderr();
        assertEquals(2, validate.code(), message);
        assertTrue(message.contains("kafka.yaml:6:") && message.contains("topic 'no-such-topic-" + out + "' does not exist on " + servers),
                message);
    }

    @Test
    void aMessageTheBrokerRefusesFailsTheRunWithoutCommittingIt() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("in");
        String out = KafkaTestSupport.uniqueTopic("out");
        String group = "g-" + in;
        KafkaTestSupport.createTopics(servers, 1, in);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            // Smaller than any record batch: every send the sink's sender thread makes is refused.
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(out, 1, (short) 1)
                    .configs(Map.of("max.message.bytes", "64")))).all().get(30, TimeUnit.SECONDS);
            KafkaTestSupport.produce(servers, in, records(200));
            Path file = pipeline(servers, in, out, group, "bounded: true");
            CliResult run = sluice("run", file.toString(), "--state-dir", dir.resolve("state").toString());
            assertEquals(1, run.code(), run.stderr());
            assertTrue(run.stderr().contains("writing to topic " + out + " failed"), run.stderr());
            // No epoch was finalized: the group has no offsets, a rerun reads everything again.
            assertTrue(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).isEmpty());
        }
    }

    /** Produces {@code n} records in slices of {@code slice}, a second apart, in the background. */
    private static Thread streamInput(String servers, String topic, int n, int slice) {
        return Thread.ofPlatform().start(() -> {
            List<String[]> all = records(n);
            for (int i = 0; i < n; i += slice) {
                KafkaTestSupport.produce(servers, topic, all.subList(i, Math.min(n, i + slice)));
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    /**
     * Done once {@code expected} distinct ids arrived. Output may hold duplicates (at-least-once),
     * so a record count would stop too early; parses each record once.
     */
    private static final class AllIds implements java.util.function.Predicate<List<ConsumerRecord<byte[], byte[]>>> {
        private final long expected;
        private final Set<Long> ids = new HashSet<>();
        private int parsed;

        AllIds(long expected) {
            this.expected = expected;
        }

        @Override
        public boolean test(List<ConsumerRecord<byte[], byte[]>> records) {
            for (; parsed < records.size(); parsed++) {
                ids.add(idOf(records.get(parsed)));
            }
            return ids.size() >= expected;
        }
    }

    private static long idOf(ConsumerRecord<byte[], byte[]> record) {
        try {
            return JSON.readTree(record.value()).get("id").asLong();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long distinctIds(List<ConsumerRecord<byte[], byte[]>> results) {
        Set<Long> ids = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : results) {
            ids.add(idOf(r));
        }
        return ids.size();
    }

    private static Map<TopicPartition, Long> committed(String servers, String group) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, Long> out = new HashMap<>();
            offsets.forEach((tp, o) -> {
                if (o != null) {
                    out.put(tp, o.offset());
                }
            });
            return out;
        }
    }

    private record CliResult(int code, String stderr) {}

    /** Runs the CLI in this JVM, capturing what it prints on stderr. */
    private static CliResult sluice(String... args) {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream original = System.err;
        System.setErr(new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = dev.sluice.cli.Main.execute(args);
            return new CliResult(code, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? "" : new String(header.value(), StandardCharsets.UTF_8);
    }

    private String log() {
        try {
            Path log = dir.resolve("run.log");
            return Files.exists(log) ? Files.readString(log) : "(no log)";
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }
}
