package dev.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.Secrets;
import dev.sluice.config.StageTypes;
import dev.sluice.state.StateStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service and its HTTP API in this JVM, over a real state DB and real Jetty, with
 * generator pipelines (no broker needed): every API error case, re-apply, pause and resume,
 * a restarted service, one failing pipeline beside a healthy one, secrets masked, the token.
 * The Kafka lifecycle, kill -9 and the CLI against a child-JVM service are in ServiceKafkaTest.
 */
class ServiceApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    private PipelineService service;
    private ServiceApi api;

    private static String generator(String name, int rate) {
        return """
                name: %s
                checkpoint: {interval: 200ms}
                sources:
                  bids: {type: generator, entity: bid, rate: %d, batch_size: 100}
                sinks:
                  out: {type: blackhole, from: bids}
                """.formatted(name, rate);
    }

    private void startService(String host, String token) {
        service = new PipelineService(StateStore.open(dir.resolve("state")), StageTypes.installed(), dir, System.err);
        api = ServiceApi.start(service, host, 0, token);
        service.boot();
    }

    /** Stops the service (each pipeline takes its final checkpoint) and starts it again on the same state. */
    private void restartService() {
        api.close();
        service.close();
        startService("127.0.0.1", null);
    }

    @AfterEach
    void stop() {
        if (api != null) {
            api.close();
        }
        if (service != null) {
            service.close();
        }
    }

    private record Reply(int status, JsonNode body) {}

    private Reply send(String method, String path, String body, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + path))
                .method(
                        method,
                        body == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(response.statusCode(), JSON.readTree(response.body()));
    }

    private Reply send(String method, String path, String body) throws Exception {
        return send(method, path, body, null);
    }

    private JsonNode awaitStatus(String name, Predicate<JsonNode> condition, String what) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        JsonNode status = null;
        while (System.nanoTime() < deadline) {
            status = send("GET", "/pipelines/" + name, null).body();
            if (condition.test(status)) {
                return status;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("pipeline " + name + " never " + what + "; last status " + status);
    }

    @Test
    void lifecycleReapplyPauseResumeDelete() throws Exception {
        startService("127.0.0.1", null);
        Reply created = send("PUT", "/pipelines/bids", generator("bids", 5000));
        assertEquals(201, created.status(), created.body().toString());
        assertEquals("created", created.body().path("applied").asText());
        JsonNode running = awaitStatus(
                "bids",
                s -> s.path("records_in").asLong() > 500
                        && s.path("last_checkpoint").path("epoch").asLong() > 0,
                "ran and checkpointed");
        assertEquals("running", running.path("state").asText());
        assertEquals(1, running.path("version").asLong());

        // An identical re-apply is a no-op: same version, same run.
        Reply again = send("PUT", "/pipelines/bids", generator("bids", 5000));
        assertEquals(200, again.status());
        assertEquals("unchanged", again.body().path("applied").asText());
        assertEquals(running.path("started_at"), again.body().path("status").path("started_at"));

        // Pause: the final checkpoint, then nothing more flows.
        JsonNode paused = send("POST", "/pipelines/bids/pause", null).body();
        assertEquals("paused", paused.path("state").asText());
        long atPause = paused.path("records_in").asLong();
        Thread.sleep(1000);
        JsonNode stillPaused = send("GET", "/pipelines/bids", null).body();
        assertEquals("paused", stillPaused.path("state").asText());
        assertEquals(atPause, stillPaused.path("records_in").asLong(), "rows flowed while paused");
        assertEquals(0.0, stillPaused.path("rows_per_second").asDouble());
        // Pausing twice is fine.
        assertEquals(200, send("POST", "/pipelines/bids/pause", null).status());

        // A changed definition applied while paused: the new version, still paused.
        Reply changed = send("PUT", "/pipelines/bids", generator("bids", 6000));
        assertEquals(200, changed.status());
        assertEquals("updated", changed.body().path("applied").asText());
        assertEquals(2, changed.body().path("status").path("version").asLong());
        assertEquals("paused", changed.body().path("status").path("state").asText());

        JsonNode resumed = send("POST", "/pipelines/bids/resume", null).body();
        assertNotEquals("paused", resumed.path("state").asText());
        JsonNode flowing = awaitStatus("bids", s -> s.path("records_in").asLong() > 200, "flowed after resume");
        assertEquals("running", flowing.path("state").asText());

        // A changed definition while running: stopped at a checkpoint, restarted as version 3.
        Reply updated = send("PUT", "/pipelines/bids", generator("bids", 7000));
        assertEquals("updated", updated.body().path("applied").asText());
        JsonNode v3 = awaitStatus("bids", s -> s.path("state").asText().equals("running"), "restarted");
        assertEquals(3, v3.path("version").asLong());
        assertNotEquals(flowing.path("started_at"), v3.path("started_at"));

        JsonNode logs = send("GET", "/pipelines/bids/logs", null).body();
        List<String> lines = new ArrayList<>();
        logs.path("lines").forEach(line -> lines.add(line.path("text").asText()));
        assertTrue(lines.contains("paused"), lines.toString());
        assertTrue(lines.contains("running version 3"), lines.toString());
        long next = logs.path("next").asLong();
        assertEquals(
                0,
                send("GET", "/pipelines/bids/logs?since=" + next, null)
                        .body()
                        .path("lines")
                        .size());

        assertEquals(1, send("GET", "/pipelines", null).body().path("pipelines").size());
        Reply deleted = send("DELETE", "/pipelines/bids", null);
        assertEquals(200, deleted.status());
        assertEquals(404, send("GET", "/pipelines/bids", null).status());
        assertEquals(0, send("GET", "/pipelines", null).body().path("pipelines").size());
        try (StateStore state = StateStore.openReadOnly(dir.resolve("state"))) {
            // Another service may hold it read-write: read-only sees the synced rows.
            assertTrue(state.scan("bids").isEmpty(), "positions left after delete");
        }
    }

    /**
     * Relative paths of every pipeline resolve against one base directory: two pipelines must not
     * write one file. The second apply is refused (its files are not touched); its own file, or
     * deleting the first, lets it in. Default dead letters carry the pipeline's name, so two
     * pipelines' nodes of one name do not meet.
     */
    @Test
    void aPipelineWritingAFileAnotherWritesIsRefused() throws Exception {
        startService("127.0.0.1", null);
        String writer = """
                name: %s
                sources:
                  events: {type: generator, entity: bid, rate: 100, batch_size: 10}
                transforms:
                  checked:
                    type: sql
                    sql: SELECT auction FROM events
                    on_error: dead_letter%s
                sinks:
                  out: {type: file, from: checked, path: %s}
                """;
        assertEquals(
                201,
                send("PUT", "/pipelines/first", writer.formatted("first", "", "out/first.jsonl"))
                        .status());
        Reply sameDeadLetter = send(
                "PUT",
                "/pipelines/second",
                writer.formatted(
                        "second", "\n    dead_letter: out/first.checked.dead-letter.jsonl", "out/second.jsonl"));
        assertEquals(422, sameDeadLetter.status(), sameDeadLetter.body().toString());
        String problem = sameDeadLetter.body().path("problems").get(0).asText();
        assertTrue(
                problem.startsWith(dir.resolve("second.yaml") + ": node 'checked' writes "
                                + dir.resolve("out/first.checked.dead-letter.jsonl")
                                + ", which pipeline 'first' (node 'checked') writes too")
                        && problem.contains("give each its own file"),
                problem);
        Reply sameOutput = send("PUT", "/pipelines/second", writer.formatted("second", "", "out/first.jsonl"));
        assertEquals(422, sameOutput.status(), sameOutput.body().toString());
        assertTrue(
                sameOutput
                        .body()
                        .path("problems")
                        .get(0)
                        .asText()
                        .contains("node 'out' writes " + dir.resolve("out/first.jsonl")),
                sameOutput.body().toString());
        assertEquals(404, send("GET", "/pipelines/second", null).status(), "a refused pipeline is not hosted");

        assertEquals(
                201,
                send("PUT", "/pipelines/second", writer.formatted("second", "", "out/second.jsonl"))
                        .status(),
                "own default dead letter");
        assertEquals(
                200,
                send("PUT", "/pipelines/first", writer.formatted("first", "", "out/first-v2.jsonl"))
                        .status(),
                "reapplying checks against the others, not itself");
        send("DELETE", "/pipelines/second", null);
        assertEquals(
                201,
                send("PUT", "/pipelines/third", writer.formatted("third", "", "out/second.jsonl"))
                        .status(),
                "a deleted pipeline's files are free");
    }

    /**
     * A pipeline paused when the service stopped is hosted at the next boot without running, so
     * it had claimed no file: another pipeline writing its file was let in, and resuming the first
     * made both write one file. Now the apply asks the paused pipeline's definition for its files;
     * when that cannot be told (a file it reads is gone just then), the resume checks again and
     * fails the pipeline, naming the file, before it writes.
     */
    @Test
    void aPausedPipelineKeepsItsFilesAcrossARestartOfTheService() throws Exception {
        Files.writeString(dir.resolve("tiers.csv"), "auction,tier\n1,gold\n");
        String first = """
                name: first
                sources:
                  bids: {type: generator, entity: bid, rate: 200, batch_size: 10}
                transforms:
                  tiered:
                    type: sql
                    sql: SELECT b.auction, t.tier FROM bids b LEFT JOIN tiers t ON b.auction = t.auction
                    tables: {tiers: {path: tiers.csv, schema: {auction: bigint, tier: string}}}
                sinks:
                  out: {type: file, from: tiered, path: out/shared.jsonl}
                """;
        String second = """
                name: second
                checkpoint: {interval: 200ms}
                sources:
                  bids: {type: generator, entity: bid, rate: 200, batch_size: 10}
                transforms:
                  ids: {type: sql, sql: SELECT bidder FROM bids}
                sinks:
                  out: {type: file, from: ids, path: out/shared.jsonl}
                """;
        startService("127.0.0.1", null);
        assertEquals(201, send("PUT", "/pipelines/first", first).status());
        awaitStatus("first", s -> s.path("records_out").asLong() > 0, "wrote");
        assertEquals(
                "paused",
                send("POST", "/pipelines/first/pause", null)
                        .body()
                        .path("state")
                        .asText());
        restartService();
        Reply refused = send("PUT", "/pipelines/second", second);
        assertEquals(422, refused.status(), refused.body().toString());
        assertTrue(
                refused.body()
                        .path("problems")
                        .get(0)
                        .asText()
                        .contains("node 'out' writes " + dir.resolve("out/shared.jsonl")
                                + ", which pipeline 'first' (node 'out') writes too"),
                refused.body().toString());

        // Without its side table the first's definition cannot be planned: its files are not known.
        restartService();
        Files.delete(dir.resolve("tiers.csv"));
        assertEquals(201, send("PUT", "/pipelines/second", second).status());
        awaitStatus("second", s -> s.path("last_checkpoint").path("epoch").asLong() > 0, "wrote and checkpointed");
        Files.writeString(dir.resolve("tiers.csv"), "auction,tier\n1,gold\n");
        send("POST", "/pipelines/first/resume", null);
        JsonNode failed = awaitStatus("first", s -> s.path("state").asText().equals("failed"), "failed");
        assertTrue(
                failed.path("last_error").path("message").asText().contains("which pipeline 'second' (node 'out')"),
                failed.toString());
        assertEquals(0, failed.path("restarts").asInt(), "a file another pipeline writes is no reason to retry");
        Thread.sleep(300);
        List<String> written = Files.readAllLines(dir.resolve("out/shared.jsonl"));
        assertTrue(
                !written.isEmpty() && written.stream().allMatch(line -> line.startsWith("{\"bidder\":")),
                "only the second pipeline's rows: " + written.subList(0, Math.min(5, written.size())));
    }

    @Test
    void everyErrorCaseHasItsStatusAndMessage() throws Exception {
        startService("127.0.0.1", null);
        for (String[] request : new String[][] {
            {"GET", "/pipelines/nope"},
            {"POST", "/pipelines/nope/pause"},
            {"POST", "/pipelines/nope/resume"},
            {"DELETE", "/pipelines/nope"},
            {"GET", "/pipelines/nope/logs"}
        }) {
            Reply reply = send(request[0], request[1], null);
            assertEquals(404, reply.status(), String.join(" ", request));
            assertTrue(
                    reply.body().path("error").asText().contains("no pipeline named 'nope'"),
                    reply.body().toString());
        }

        Reply badYaml = send("PUT", "/pipelines/bad", "sources: [unclosed\n");
        assertEquals(422, badYaml.status());
        assertTrue(
                badYaml.body().path("problems").get(0).asText().startsWith(dir.resolve("bad.yaml") + ":"),
                badYaml.body().toString());

        Reply badConfig = send("PUT", "/pipelines/bad", """
                sources:
                  bids: {type: generator, entity: bid, rat: 5}
                sinks:
                  out: {type: blackhole, from: bids}
                """);
        assertEquals(422, badConfig.status());
        String problem = badConfig.body().path("problems").get(0).asText();
        assertTrue(problem.startsWith(dir.resolve("bad.yaml") + ":2:"), problem);
        assertTrue(problem.contains("bids") && problem.contains("rat"), problem);

        Reply badSql = send("PUT", "/pipelines/bad", """
                sources:
                  bids: {type: generator, entity: bid}
                transforms:
                  t: {type: sql, from: bids, sql: "SELECT nosuchcolumn FROM bids"}
                sinks:
                  out: {type: blackhole, from: t}
                """);
        assertEquals(422, badSql.status());
        assertTrue(
                badSql.body().path("problems").toString().contains("nosuchcolumn"),
                badSql.body().toString());
        assertEquals(404, send("GET", "/pipelines/bad", null).status(), "an invalid pipeline was kept");

        Reply otherName = send("PUT", "/pipelines/one", generator("two", 10));
        assertEquals(422, otherName.status());
        assertTrue(otherName.body().path("problems").get(0).asText().contains("named 'two'"));

        Reply badName = send("PUT", "/pipelines/Not.Valid", generator("x", 10));
        assertEquals(422, badName.status());
        assertTrue(badName.body().path("problems").get(0).asText().contains("not a valid pipeline name"));

        // Repeated: answering before the body was read used to reset the connection now and then (broken pipe).
        String tooLargeBody = "#" + "x".repeat(ServiceApi.MAX_BODY_BYTES) + "\n";
        for (int attempt = 0; attempt < 100; attempt++) {
            Reply tooLarge = send("PUT", "/pipelines/big", tooLargeBody);
            assertEquals(413, tooLarge.status(), tooLarge.body().toString());
        }

        Reply badSince = send("GET", "/pipelines/nope/logs?since=abc", null);
        assertEquals(400, badSince.status());
    }

    @Test
    void secretsAreMaskedInErrorsStatusAndLogs() throws Exception {
        startService("127.0.0.1", null);
        String secret = "hunter2-very-secret";
        // The secret is a sasl.jaas.config value; the same text as a bad enum value is echoed by the error.
        String yaml = """
                sources:
                  bids: {type: generator, entity: bid, rate: 100}
                sinks:
                  out:
                    type: kafka
                    from: bids
                    topic: t
                    compression: %s
                    properties: {sasl.jaas.config: "%s"}
                """.formatted(secret, secret);
        Reply reply = send("PUT", "/pipelines/masked", yaml);
        assertEquals(422, reply.status());
        String body = reply.body().toString();
        assertFalse(body.contains(secret), body);
        assertTrue(body.contains(Secrets.MASK), body);

        Secrets secrets = Secrets.of(
                "sources: {k: {type: kafka, properties: {ssl.key.password: abcdefgh, password: zyxwvuts}}}\n"
                        + "sinks: {s: {type: x, token: tok-123456}}\n",
                Path.of("p.yaml"));
        assertEquals("a **** b **** c ****", secrets.apply("a abcdefgh b zyxwvuts c tok-123456"));
    }

    @Test
    void restartedServiceResumesRunningAndKeepsPausedPausedAndCompletedCompleted() throws Exception {
        startService("127.0.0.1", null);
        // A bounded pipeline that completed is not run again by a restart: its file source would
        // start over and write every row again (it did, doubling a webhook's rows).
        Files.writeString(dir.resolve("ids.jsonl"), "{\"id\": 1}\n{\"id\": 2}\n");
        String once = """
                name: once
                sources:
                  ids: {type: file, path: ids.jsonl, schema: {id: bigint}}
                sinks:
                  out: {type: file, from: ids, path: once-out.jsonl}
                """;
        assertEquals(201, send("PUT", "/pipelines/once", once).status());
        awaitStatus("once", s -> s.path("state").asText().equals("completed"), "completed");
        Files.writeString(dir.resolve("once-out.jsonl"), "kept\n"); // a run again would replace it
        assertEquals(
                201,
                send("PUT", "/pipelines/keeps-running", generator("keeps-running", 2000))
                        .status());
        assertEquals(
                201,
                send("PUT", "/pipelines/stays-paused", generator("stays-paused", 2000))
                        .status());
        awaitStatus(
                "keeps-running", s -> s.path("last_checkpoint").path("epoch").asLong() > 0, "checkpointed");
        assertEquals(
                "paused",
                send("POST", "/pipelines/stays-paused/pause", null)
                        .body()
                        .path("state")
                        .asText());
        restartService();
        assertEquals(200, send("GET", "/health/ready", null).status());
        JsonNode running =
                awaitStatus("keeps-running", s -> s.path("records_in").asLong() > 0, "resumed");
        assertEquals("running", running.path("state").asText());
        assertEquals(
                "paused",
                send("GET", "/pipelines/stays-paused", null)
                        .body()
                        .path("state")
                        .asText());
        assertEquals(
                "completed",
                send("GET", "/pipelines/once", null).body().path("state").asText());
        Thread.sleep(500);
        assertEquals(List.of("kept"), Files.readAllLines(dir.resolve("once-out.jsonl")), "not run again");
        // resume runs it again, and a restart during or after that run does what it says.
        send("POST", "/pipelines/once/resume", null);
        awaitStatus(
                "once",
                s -> s.path("state").asText().equals("completed")
                        && s.path("records_out").asLong() == 2,
                "ran again");
        assertEquals(2, Files.readAllLines(dir.resolve("once-out.jsonl")).size());
    }

    @Test
    void aFailingPipelineRestartsThenFailsWhileAnotherKeepsItsRate() throws Exception {
        startService("127.0.0.1", null);
        assertEquals(
                201,
                send("PUT", "/pipelines/healthy", generator("healthy", 3000)).status());
        awaitStatus("healthy", s -> s.path("records_in").asLong() > 0, "started");
        long before = rowsIn("healthy");
        Thread.sleep(2000);
        long alone = rowsIn("healthy") - before;
        // Integer division by zero on the first batch: a run-time failure, after validation passed.
        // Restarts after 0.3, 0.6, 1.2 and 2.4 s keep it failing for about 5 s.
        String failing = """
                restart: {max_attempts: 4, backoff: 300ms}
                sources:
                  bids: {type: generator, entity: bid, rate: 1000}
                transforms:
                  t: {type: sql, from: bids, sql: "SELECT auction / (price - price) AS boom FROM bids"}
                sinks:
                  out: {type: blackhole, from: t}
                """;
        assertEquals(201, send("PUT", "/pipelines/failing", failing).status());
        long during = rowsIn("healthy");
        Thread.sleep(2000);
        long beside = rowsIn("healthy") - during;
        JsonNode failed = awaitStatus("failing", s -> s.path("state").asText().equals("failed"), "failed");
        assertEquals(4, failed.path("restarts").asInt());
        assertTrue(
                failed.path("last_error").path("message").asText().toLowerCase().contains("divide by zero"),
                failed.toString());
        assertEquals(4, failed.path("restart_policy").path("max_attempts").asInt());

        JsonNode healthy = send("GET", "/pipelines/healthy", null).body();
        assertEquals("running", healthy.path("state").asText());
        assertEquals(0, healthy.path("restarts").asInt());
        // The generator is held to 3 000 rows/s: beside the failing one it still gets them.
        assertTrue(beside >= alone * 0.8, "alone " + alone + " rows in 2 s, beside the failing one " + beside);
    }

    @Test
    void aScriptThatNeverEndsFailsItsOwnPipelineOnly() throws Exception {
        startService("127.0.0.1", null);
        assertEquals(
                201,
                send("PUT", "/pipelines/healthy", generator("healthy", 3000)).status());
        awaitStatus("healthy", s -> s.path("records_in").asLong() > 0, "started");
        String runaway = """
                restart: {max_attempts: 1, backoff: 100ms}
                sources:
                  bids: {type: generator, entity: bid, rate: 1000}
                transforms:
                  t:
                    type: script
                    from: bids
                    timeout: 300ms
                    script: "function process(row) { while (true) {} }"
                sinks:
                  out: {type: blackhole, from: t}
                """;
        assertEquals(201, send("PUT", "/pipelines/runaway", runaway).status());
        JsonNode failed = awaitStatus("runaway", s -> s.path("state").asText().equals("failed"), "failed");
        assertTrue(
                failed.path("last_error").path("message").asText().contains("ran longer than timeout (300 ms)"),
                failed.toString());
        JsonNode healthy = send("GET", "/pipelines/healthy", null).body();
        assertEquals("running", healthy.path("state").asText());
        assertEquals(0, healthy.path("restarts").asInt());
    }

    private long rowsIn(String name) throws Exception {
        return send("GET", "/pipelines/" + name, null).body().path("records_in").asLong();
    }

    @Test
    void operationsOnOnePipelineAreSerialized() throws Exception {
        startService("127.0.0.1", null);
        assertEquals(
                201, send("PUT", "/pipelines/busy", generator("busy", 2000)).status());
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Callable<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                String path = i % 3 == 0 ? "/pipelines/busy/pause" : i % 3 == 1 ? "/pipelines/busy/resume" : null;
                int version = i;
                calls.add(() -> path != null
                        ? send("POST", path, null).status()
                        : send("PUT", "/pipelines/busy", generator("busy", 2000 + version))
                                .status());
            }
            for (Future<Integer> result : pool.invokeAll(calls)) {
                assertEquals(200, result.get());
            }
        } finally {
            pool.shutdown();
        }
        send("POST", "/pipelines/busy/resume", null);
        JsonNode status = awaitStatus("busy", s -> s.path("state").asText().equals("running"), "ran at the end");
        assertEquals(5, status.path("version").asLong(), "four changed applies after the first");
    }

    @Test
    void beyondLoopbackEveryRequestNeedsTheToken() throws Exception {
        IllegalArgumentException refused =
                assertThrows(IllegalArgumentException.class, () -> ServiceApi.start(null, "0.0.0.0", 0, null));
        assertTrue(refused.getMessage().contains("--token-file"));

        startService("0.0.0.0", "s3cret-token");
        assertEquals(401, send("GET", "/pipelines", null).status());
        assertEquals(401, send("GET", "/pipelines", null, "wrong").status());
        assertEquals(401, send("PUT", "/pipelines/x", generator("x", 10)).status());
        assertEquals(404, send("GET", "/pipelines/x", null, "s3cret-token").status(), "nothing was applied");
        assertEquals(200, send("GET", "/pipelines", null, "s3cret-token").status());
        assertEquals(200, send("GET", "/health/live", null).status());
        assertEquals(200, send("GET", "/health/ready", null).status());
    }

    @Test
    void theOpenApiDocumentDescribesEveryRouteAndNoOther() throws Exception {
        startService("127.0.0.1", null);
        JsonNode document = send("GET", "/openapi.json", null).body();
        assertEquals("3.1.0", document.path("openapi").asText());
        Set<String> documented = new HashSet<>();
        document.path("paths")
                .properties()
                .forEach(path -> path.getValue().properties().forEach(operation -> {
                    if (!operation.getKey().equals("parameters")) {
                        documented.add(operation.getKey() + " " + path.getKey());
                    }
                }));
        Set<String> served = new HashSet<>();
        new ServiceApi(null, null)
                .handlers()
                .keySet()
                .forEach(route -> served.add(route.method() + " " + route.path()));
        assertEquals(served, documented);
    }
}
