package dev.sluice.connector.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.connector.kafka.KafkaTestSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka → SQL → PostgreSQL in child JVMs against the real broker and server: kill -9 at random
 * moments, then a restart gives exactly the expected table; a connection the server ends
 * mid-run is retried and nothing is lost.
 */
class KafkaToPostgresTest {

    @TempDir
    Path dir;

    private static final int KEYS = 2_000;

    /** Record i: key id = i % KEYS (one partition per key, so a key's changes stay in order), amount i. */
    private static List<String[]> records(int from, int to) {
        List<String[]> records = new ArrayList<>();
        for (int i = from; i < to; i++) {
            long id = i % KEYS;
            records.add(new String[] {"k" + id, "{\"id\": %d, \"name\": \"n%d\", \"amount\": %d}".formatted(id, i, i)});
        }
        return records;
    }

    /** The last change per key; a change whose amount is a multiple of 7 deletes the key (SQL's _op). */
    private static List<String> expected(int n) {
        TreeMap<Long, String> table = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            long id = i % KEYS;
            if (i % 7 == 0) {
                table.remove(id);
            } else {
                table.put(id, id + "|N" + i + "|" + i);
            }
        }
        return new ArrayList<>(table.values());
    }

    /**
     * The pipeline; with {@code keyAtSource} the key is the Kafka source's {@code primary_key} and
     * the sink takes it from upstream, else the sink's own {@code primary_key}.
     */
    private Path pipeline(String servers, String topic, String table, boolean keyAtSource) throws IOException {
        return Files.writeString(dir.resolve("pg.yaml"), """
                name: kafka-to-postgres
                checkpoint: {interval: 500ms}
                sources:
                  events:
                    type: kafka
                    topic: %s
                    group_id: g-%s
                    bootstrap_servers: %s
                    schema: {id: bigint, name: string, amount: bigint}
                    batch_size: 500
                    batch_flush_interval: 20ms
                    properties: {session.timeout.ms: 6000, heartbeat.interval.ms: 1000}
                    %s
                transforms:
                  changes:
                    type: sql
                    sql: |
                      SELECT id, upper(name) AS name, amount,
                             CASE WHEN amount %% 7 = 0 THEN 'd' ELSE 'u' END AS _op
                      FROM events
                sinks:
                  db:
                    type: postgres
                    from: changes
                    url: %s
                    user: postgres
                    table: %s
                    %s
                    create_table: true
                    batch_size: 1000
                """.formatted(
                        topic,
                        topic,
                        servers,
                        keyAtSource ? "primary_key: [id]" : "",
                        PgTestSupport.url(),
                        table,
                        keyAtSource ? "" : "primary_key: [id]"));
    }

    private static Thread streamInput(String servers, String topic, int n, int slice) {
        return Thread.ofPlatform().start(() -> {
            for (int i = 0; i < n; i += slice) {
                KafkaTestSupport.produce(servers, topic, records(i, Math.min(n, i + slice)));
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    /** The largest amount written so far (-1 before the table has rows): the pipeline's progress. */
    private static long progress(String table) {
        try {
            String max = PgTestSupport.rows("SELECT coalesce(max(amount), -1) FROM \"" + table + "\"")
                    .get(0);
            return Long.parseLong(max);
        } catch (SQLException e) {
            return -1; // not created yet
        }
    }

    private void awaitProgressBeyond(String table, long seen, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (progress(table) <= seen) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no progress beyond amount " + seen + " in " + table + " after " + within
                        + "; the run's log:\n" + log());
            }
            Thread.sleep(20);
        }
    }

    private List<String> awaitTable(String table, List<String> expected, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        List<String> rows = List.of();
        while (System.nanoTime() < deadline) {
            try {
                rows = PgTestSupport.rows("SELECT id, name, amount FROM \"" + table + "\" ORDER BY id");
            } catch (SQLException e) {
                rows = List.of();
            }
            if (rows.equals(expected)) {
                return rows;
            }
            Thread.sleep(200);
        }
        return rows;
    }

    @Test
    void killedThreeTimesAtRandomMomentsThenRestartedGivesExactlyTheExpectedTable() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        PgTestSupport.url();
        String topic = KafkaTestSupport.uniqueTopic("pg-in");
        String table = PgTestSupport.uniqueTable("killed");
        KafkaTestSupport.createTopics(servers, 3, topic);
        int n = 60_000;
        Thread producer = streamInput(servers, topic, n, 5_000);
        Path file = pipeline(servers, topic, table, false);
        Random random = new Random(11);
        List<Long> killedAt = new ArrayList<>();
        for (int kill = 0; kill < 3; kill++) {
            long seen = progress(table);
            Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
            try {
                awaitProgressBeyond(table, seen, Duration.ofSeconds(90));
                Thread.sleep(random.nextInt(700));
            } finally {
                process.destroyForcibly(); // kill -9: no final checkpoint, an epoch's transaction cut off
                process.waitFor(10, TimeUnit.SECONDS);
            }
            killedAt.add(progress(table));
        }
        producer.join();
        Process last = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        List<String> rows;
        try {
            rows = awaitTable(table, expected(n), Duration.ofSeconds(120));
        } finally {
            last.destroy();
            last.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(
                expected(n),
                rows,
                "exactly the expected table after three kills (at amounts " + killedAt + ")\n" + log());
        System.err.printf("kill -9 test: killed at amounts %s; final table %d rows%n", killedAt, rows.size());
    }

    @Test
    void aConnectionTheServerEndsMidRunIsRetriedAndNothingIsLost() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        PgTestSupport.url();
        String topic = KafkaTestSupport.uniqueTopic("pg-in");
        String table = PgTestSupport.uniqueTable("retried");
        KafkaTestSupport.createTopics(servers, 2, topic);
        int n = 30_000;
        Thread producer = streamInput(servers, topic, n, 3_000);
        Path file = pipeline(servers, topic, table, true); // the sink's key comes from upstream
        Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        List<String> rows;
        try {
            for (int i = 0; i < 3; i++) {
                awaitProgressBeyond(table, progress(table), Duration.ofSeconds(90));
                // The server ends the sink's session (SQLState 57P01, admin shutdown), mid-epoch.
                PgTestSupport.rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        + "WHERE application_name = 'sluice kafka-to-postgres/db'");
            }
            producer.join();
            rows = awaitTable(table, expected(n), Duration.ofSeconds(120));
            assertTrue(process.isAlive(), "the run survived its connection being ended\n" + log());
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(expected(n), rows, log());
        assertTrue(log().contains("retry 1 of 8"), "the retry was logged\n" + log());
    }

    @Test
    void theDatabaseRestartedMidRunIsRiddenOutAndNothingIsLost() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        Path repo = Path.of(System.getProperty("sluice.repo.root", ".."))
                .toAbsolutePath()
                .normalize();
        String script = repo.resolve("ci/postgres.sh").toString();
        // Only the server of ci/postgres.sh is restarted, never one SLUICE_PG_URL names elsewhere.
        Process url = new ProcessBuilder("bash", script, "url").start();
        String ours = new String(url.getInputStream().readAllBytes()).trim();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                ours.equals(PgTestSupport.url()),
                "SLUICE_PG_URL is not the server of ci/postgres.sh: not restarting it");
        String topic = KafkaTestSupport.uniqueTopic("pg-in");
        String table = PgTestSupport.uniqueTable("restarted");
        KafkaTestSupport.createTopics(servers, 2, topic);
        int n = 30_000;
        Thread producer = streamInput(servers, topic, n, 3_000);
        Path file = pipeline(servers, topic, table, false);
        Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        List<String> rows;
        try {
            awaitProgressBeyond(table, -1, Duration.ofSeconds(90));
            Process restart = new ProcessBuilder("bash", script, "restart")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            dir.resolve("postgres.log").toFile()))
                    .start();
            assertTrue(restart.waitFor(120, TimeUnit.SECONDS) && restart.exitValue() == 0, "the server restarted");
            producer.join();
            rows = awaitTable(table, expected(n), Duration.ofSeconds(120));
            assertTrue(process.isAlive(), "the run survived the restart\n" + log());
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(expected(n), rows, log());
        assertTrue(log().contains("retry 1 of 8"), "the lost connection was retried\n" + log());
    }

    @Test
    void transientErrorsAreRetriedUpToTheLimitThenTheRunFails() throws Exception {
        PgTestSupport.url();
        String table = PgTestSupport.uniqueTable("limit");
        String role = "sluice_" + table;
        // A role of its own, so that a connection limit of 0 refuses exactly the sink's
        // reconnects (SQLState 53300, too many connections: a transient error).
        PgTestSupport.execute(
                "CREATE ROLE \"" + role + "\" LOGIN",
                "CREATE TABLE \"" + table + "\" (id bigint PRIMARY KEY, price bigint)",
                "GRANT ALL ON \"" + table + "\" TO \"" + role + "\"");
        Path file = Files.writeString(dir.resolve("limit.yaml"), """
                name: retry-limit
                checkpoint: {interval: 200ms}
                sources:
                  bid: {type: generator, entity: bid, count: 100000000, rate: 20000, batch_size: 500}
                transforms:
                  prices: {type: sql, sql: "SELECT auction AS id, price FROM bid"}
                sinks:
                  db:
                    type: postgres
                    from: prices
                    url: %s
                    user: %s
                    password: not-needed-but-secret
                    table: %s
                    primary_key: id
                    max_retries: 3
                """.formatted(PgTestSupport.url(), role, table));
        Process process = KafkaTestSupport.startPipeline(file, dir.resolve("state"), dir.resolve("run.log"));
        try {
            awaitProgress(table, Duration.ofSeconds(60));
            PgTestSupport.execute(
                    "ALTER ROLE \"" + role + "\" CONNECTION LIMIT 0",
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'");
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the run gave up\n" + log());
        } finally {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        assertTrue(process.exitValue() != 0, log());
        String log = log();
        for (int attempt = 1; attempt <= 3; attempt++) {
            assertTrue(log.contains("retry " + attempt + " of 3"), log);
        }
        assertTrue(log.contains("failed after 4 attempts (max_retries 3)"), log);
        assertTrue(log.contains("too many connections for role"), log);
        assertTrue(!log.contains("not-needed-but-secret"), log);
    }

    private static void awaitProgress(String table, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (PgTestSupport.rows("SELECT count(*) FROM \"" + table + "\"")
                .get(0)
                .equals("0")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("nothing written to " + table + " after " + within);
            }
            Thread.sleep(50);
        }
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
