package dev.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.cli.ChildJvm;
import dev.sluice.cli.Main;
import dev.sluice.connector.kafka.KafkaTestSupport;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice serve} in a child JVM against the real broker, operated through the CLI in this
 * JVM: the whole lifecycle with every input key checked, the CLI's exit codes and JSON, and a
 * service killed with -9 that resumes its running pipelines and keeps paused ones paused.
 */
class ServiceKafkaTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

    @TempDir
    Path dir;

    private final List<Process> services = new ArrayList<>();

    @AfterEach
    void killServices() {
        services.forEach(Process::destroyForcibly);
    }

    private record Cli(int exit, String out, String err) {}

    /** Runs {@code sluice args...} in this JVM, capturing its output. */
    private static synchronized Cli cli(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            int exit = Main.execute(args);
            return new Cli(exit, stdout.toString(StandardCharsets.UTF_8), stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    /** Starts {@code sluice serve --port 0} on {@code state}; returns its URL once it is ready. */
    private String startService(Path state, Path log) throws Exception {
        return startService(state, log, Map.of());
    }

    private String startService(Path state, Path log, Map<String, String> environment, String... more)
            throws Exception {
        List<String> command = ChildJvm.command(
                "512m", "serve", "--port", "0", "--state-dir", state.toString(), "--base-dir", dir.toString());
        command.addAll(List.of(more));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(environment);
        Process service = builder.redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .directory(new File(dir.toString()))
                .start();
        services.add(service);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            String text = Files.exists(log) ? Files.readString(log) : "";
            Matcher listening = LISTENING.matcher(text);
            String url = null;
            while (listening.find()) {
                url = listening.group(1);
            }
            // The last start's line: the log is appended to across restarts.
            int starts = text.split("listening on ", -1).length - 1;
            int readies = text.split("sluice service ready", -1).length - 1;
            if (url != null && starts == services.size() && readies == starts) {
                return url;
            }
            if (!service.isAlive()) {
                throw new AssertionError("the service exited with " + service.exitValue() + ":\n" + text);
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the service did not become ready:\n" + Files.readString(log));
    }

    private Path pipeline(String name, String input, String output, String query) throws IOException {
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, """
                name: %s
                checkpoint: {interval: 500ms}
                sources:
                  src:
                    type: kafka
                    topic: %s
                    bootstrap_servers: %s
                    starting_offsets: earliest
                    schema: {id: bigint}
                transforms:
                  t: {type: sql, from: src, sql: "%s"}
                sinks:
                  out: {type: kafka, from: t, topic: %s, bootstrap_servers: %s}
                """.formatted(
                        name, input, KafkaTestSupport.bootstrap(), query, output, KafkaTestSupport.bootstrap()));
        return file;
    }

    private static void produceIds(String servers, String topic, int from, int to) {
        List<String[]> records = new ArrayList<>();
        for (int id = from; id < to; id++) {
            records.add(new String[] {String.valueOf(id), "{\"id\": " + id + "}"});
        }
        KafkaTestSupport.produce(servers, topic, records);
    }

    private static Set<Long> ids(List<ConsumerRecord<byte[], byte[]>> records) {
        Set<Long> ids = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            try {
                ids.add(JSON.readTree(record.value()).path("id").asLong());
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
        return ids;
    }

    private static Set<Long> range(int from, int to) {
        Set<Long> ids = new HashSet<>();
        for (long id = from; id < to; id++) {
            ids.add(id);
        }
        return ids;
    }

    private static List<ConsumerRecord<byte[], byte[]>> awaitIds(String servers, String topic, int upTo) {
        return KafkaTestSupport.consumeUntil(
                servers, topic, records -> ids(records).containsAll(range(0, upTo)), Duration.ofSeconds(90));
    }

    @Test
    void lifecycleThroughTheCli() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String name = "svc-" + UUID.randomUUID().toString().substring(0, 8);
        String input = name + "-in";
        String output = name + "-out";
        KafkaTestSupport.createTopics(servers, 3, input, output);
        String url = startService(dir.resolve("state"), dir.resolve("service.log"));
        Path file = pipeline(name, input, output, "SELECT id FROM src");

        produceIds(servers, input, 0, 1000);
        Cli applied = cli("apply", "-f", file.toString(), "--server", url);
        assertEquals(0, applied.exit(), applied.err());
        assertTrue(applied.out().contains("created"), applied.out());
        assertEquals(range(0, 1000), ids(awaitIds(servers, output, 1000)));

        // Paused: a final checkpoint, then no new rows for a measured while.
        assertEquals(0, cli("pause", name, "--server", url).exit());
        try (KafkaTestSupport.OutputCounter counter = new KafkaTestSupport.OutputCounter(servers, output)) {
            long before = counter.awaitCaughtUp(Duration.ofSeconds(30));
            produceIds(servers, input, 1000, 2000);
            Thread.sleep(3000);
            assertEquals(before, counter.count(), "rows flowed while paused");
        }
        Cli status = cli("status", name, "--server", url, "-o", "json");
        assertEquals(0, status.exit());
        JsonNode paused = JSON.readTree(status.out());
        assertEquals("paused", paused.path("state").asText());

        // Resumed from the checkpoint: every input key arrives.
        assertEquals(0, cli("resume", name, "--server", url).exit());
        assertEquals(range(0, 2000), ids(awaitIds(servers, output, 2000)));

        // Lag per partition: the three partitions of the input, all read.
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        JsonNode lag = null;
        while (System.nanoTime() < deadline) {
            lag = JSON.readTree(
                            cli("status", name, "--server", url, "-o", "json").out())
                    .path("lag")
                    .path("src");
            if (lag.size() == 3
                    && lag.path(input + "/0").asLong(-1) == 0
                    && lag.path(input + "/1").asLong(-1) == 0
                    && lag.path(input + "/2").asLong(-1) == 0) {
                break;
            }
            Thread.sleep(200);
        }
        assertEquals(3, lag.size(), "lag of " + lag);
        assertEquals(
                0,
                lag.path(input + "/0").asLong(-1)
                        + lag.path(input + "/1").asLong(-1)
                        + lag.path(input + "/2").asLong(-1),
                "lag of " + lag);

        String metrics = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/metrics"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
        assertTrue(metrics.contains("sluice_source_lag_records{node=\"src\",partition=\"" + input + "/0\""), metrics);
        // The inspector shows the same lag on the source (summed over its partitions) and rows it read.
        JsonNode inspected = JSON.readTree(java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/inspect/" + name + "/state"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body());
        JsonNode source = inspected.path("nodes").get(0);
        assertEquals("src", source.path("name").asText(), inspected.toString());
        assertEquals(0, source.path("lag").asLong(-1), inspected.toString());
        assertTrue(source.path("samples").size() > 0, inspected.toString());
        assertTrue(source.path("samples").get(0).path("row").has("id"), inspected.toString());

        // Identical re-apply: no restart.
        JsonNode running =
                JSON.readTree(cli("status", name, "--server", url, "-o", "json").out());
        Cli same = cli("apply", "-f", file.toString(), "--server", url);
        assertTrue(same.out().contains("unchanged"), same.out());
        JsonNode after =
                JSON.readTree(cli("status", name, "--server", url, "-o", "json").out());
        assertEquals(running.path("started_at"), after.path("started_at"));

        // Changed SQL: stops at a checkpoint, restarts from it with the new query.
        pipeline(name, input, output, "SELECT id, id * 2 AS twice FROM src");
        Cli changed = cli("apply", "-f", file.toString(), "--server", url, "-o", "json");
        assertEquals(0, changed.exit(), changed.err());
        assertEquals("updated", JSON.readTree(changed.out()).path("applied").asText());
        produceIds(servers, input, 2000, 2500);
        List<ConsumerRecord<byte[], byte[]>> all = awaitIds(servers, output, 2500);
        for (ConsumerRecord<byte[], byte[]> record : all) {
            JsonNode row = JSON.readTree(record.value());
            if (row.path("id").asLong() >= 2000) {
                assertEquals(row.path("id").asLong() * 2, row.path("twice").asLong(), row.toString());
            }
        }

        Cli list = cli("list", "--server", url);
        assertEquals(0, list.exit());
        assertTrue(list.out().startsWith("NAME") && list.out().contains(name), list.out());
        assertEquals(
                1,
                JSON.readTree(cli("list", "--server", url, "-o", "json").out())
                        .path("pipelines")
                        .size());

        Cli logs = cli("logs", name, "--server", url);
        assertEquals(0, logs.exit());
        assertTrue(logs.out().contains("running version 2"), logs.out());

        // Exit codes: not confirmed (no console here), deleted, then not found; unreachable; invalid.
        Cli unconfirmed = cli("delete", name, "--server", url);
        assertEquals(2, unconfirmed.exit());
        assertTrue(unconfirmed.err().contains("--yes"), unconfirmed.err());
        assertEquals(0, cli("delete", name, "--yes", "--server", url).exit());
        Cli gone = cli("status", name, "--server", url);
        assertEquals(3, gone.exit());
        assertTrue(gone.err().contains("no pipeline named"), gone.err());
        Cli unreachable = cli("list", "--server", "http://127.0.0.1:1");
        assertEquals(4, unreachable.exit());
        assertTrue(unreachable.err().contains("sluice serve"), unreachable.err());
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "sources:\n  s: {type: generator}\nsinks:\n  o: {type: blackhole, from: s}\n");
        Cli invalid = cli("apply", "-f", bad.toString(), "--server", url);
        assertEquals(2, invalid.exit());
        assertTrue(invalid.err().contains("bad.yaml:2:"), invalid.err());
    }

    @Test
    void applyDirPipelinesRunBeforeTheServiceIsReadyAndABadOneStopsIt() throws Exception {
        Path pipelines = Files.createDirectories(dir.resolve("pipelines"));
        Files.writeString(pipelines.resolve("gen.yaml"), """
                sources:
                  bids: {type: generator, entity: bid, rate: 500}
                sinks:
                  out: {type: blackhole, from: bids}
                """);
        Files.writeString(pipelines.resolve("notes.txt"), "not a pipeline: ignored");
        String url = startService(
                dir.resolve("state"), dir.resolve("service.log"), Map.of(), "--apply-dir", pipelines.toString());
        JsonNode listed =
                JSON.readTree(cli("list", "--server", url, "-o", "json").out()).path("pipelines");
        assertEquals(1, listed.size(), listed.toString());
        assertEquals("gen", listed.get(0).path("name").asText());
        services.getLast().destroy();
        services.getLast().waitFor();

        Files.writeString(pipelines.resolve("broken.yaml"), "sources:\n  s: {type: generator}\n");
        Path log = dir.resolve("broken.log");
        Process broken = new ProcessBuilder(ChildJvm.command(
                        "256m",
                        "serve",
                        "--port",
                        "0",
                        "--state-dir",
                        dir.resolve("state2").toString(),
                        "--base-dir",
                        dir.toString(),
                        "--apply-dir",
                        pipelines.toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        services.add(broken);
        assertEquals(2, broken.waitFor(), Files.readString(log));
        assertTrue(Files.readString(log).contains("broken.yaml:2:"), Files.readString(log));
        assertFalse(Files.readString(log).contains("sluice service ready"), Files.readString(log));
    }

    @Test
    void secretsFromTheEnvironmentAreMaskedInStatusLogsAndErrors() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String name = "secret-" + UUID.randomUUID().toString().substring(0, 8);
        KafkaTestSupport.createTopics(servers, 1, name + "-in", name + "-out");
        String secret = "hunter2-" + UUID.randomUUID();
        Path log = dir.resolve("service.log");
        String url = startService(dir.resolve("state"), log, Map.of("SLUICE_TEST_SECRET", secret));
        // The secret reaches the run's error through the SQL: a cast that fails on the first row.
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, """
                name: %s
                restart: {max_attempts: 0}
                sources:
                  src: {type: kafka, topic: %s-in, bootstrap_servers: "%s", starting_offsets: earliest,
                        schema: {id: bigint}}
                transforms:
                  t:
                    type: sql
                    from: src
                    sql: "SELECT CAST(CASE WHEN id >= 0 THEN '${SLUICE_TEST_SECRET}' ELSE '1' END AS BIGINT) AS v FROM src"
                sinks:
                  out:
                    type: kafka
                    from: t
                    topic: %s-out
                    bootstrap_servers: "%s"
                    properties: {sasl.jaas.config: "${SLUICE_TEST_SECRET}"}
                """.formatted(name, name, servers, name, servers));
        Cli applied = cli("apply", "-f", file.toString(), "--server", url);
        assertEquals(0, applied.exit(), applied.err());
        produceIds(servers, name + "-in", 0, 10);
        JsonNode status = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            status = JSON.readTree(
                    cli("status", name, "--server", url, "-o", "json").out());
            if (status.path("state").asText().equals("failed")) {
                break;
            }
            Thread.sleep(100);
        }
        assertEquals("failed", status.path("state").asText(), status.toString());
        String error = status.path("last_error").path("message").asText();
        assertTrue(error.contains("${SLUICE_TEST_SECRET}"), error);
        String logs = cli("logs", name, "--server", url).out();
        assertTrue(logs.contains("${SLUICE_TEST_SECRET}"), logs);
        String table = cli("status", name, "--server", url).out();
        for (String text : List.of(status.toString(), logs, table, Files.readString(log))) {
            assertFalse(text.contains(secret), "the secret leaked: " + text);
        }
    }

    @Test
    void killedServiceResumesRunningAndKeepsPausedPaused() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String running = "run-" + suffix;
        String paused = "pause-" + suffix;
        KafkaTestSupport.createTopics(servers, 3, running + "-in", running + "-out", paused + "-in", paused + "-out");
        Path state = dir.resolve("state");
        Path log = dir.resolve("service.log");
        String url = startService(state, log);
        assertEquals(
                0,
                cli(
                                "apply",
                                "-f",
                                pipeline(running, running + "-in", running + "-out", "SELECT id FROM src")
                                        .toString(),
                                "--server",
                                url)
                        .exit());
        assertEquals(
                0,
                cli(
                                "apply",
                                "-f",
                                pipeline(paused, paused + "-in", paused + "-out", "SELECT id FROM src")
                                        .toString(),
                                "--server",
                                url)
                        .exit());
        assertEquals(0, cli("pause", paused, "--server", url).exit());

        produceIds(servers, running + "-in", 0, 3000);
        produceIds(servers, paused + "-in", 0, 100);
        try (KafkaTestSupport.OutputCounter counter = new KafkaTestSupport.OutputCounter(servers, running + "-out")) {
            counter.awaitMoreThan(0, Duration.ofSeconds(60));
        }
        services.getLast().destroyForcibly().waitFor();
        produceIds(servers, running + "-in", 3000, 4000);

        url = startService(state, log);
        assertEquals(range(0, 4000), ids(awaitIds(servers, running + "-out", 4000)), "lost after kill -9");
        assertEquals(
                "running",
                JSON.readTree(cli("status", running, "--server", url, "-o", "json")
                                .out())
                        .path("state")
                        .asText());
        assertEquals(
                "paused",
                JSON.readTree(cli("status", paused, "--server", url, "-o", "json")
                                .out())
                        .path("state")
                        .asText());
        assertEquals(0, KafkaTestSupport.endOffsets(servers, paused + "-out"), "the paused pipeline ran");
    }
}
