package dev.sluice.connector.webhook;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.cli.InProcessCli.Result;
import dev.sluice.config.TestEnvironment;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The webhook sink against a real HTTP server (the JDK's) on 127.0.0.1, through whole pipelines. */
class WebhookSinkTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "tok-3f9a-secret-value";

    @TempDir
    Path dir;

    private Receiver receiver;

    @BeforeEach
    void startReceiver() throws IOException {
        receiver = new Receiver();
        TestEnvironment.set(Map.of("WEBHOOK_TEST_TOKEN", TOKEN));
    }

    @AfterEach
    void stopReceiver() {
        receiver.close();
        TestEnvironment.reset();
    }

    // ---- the receiver: a real HTTP server ----------------------------------------------------------

    /** One request as the server got it: header names in lower case. */
    record Received(int index, Map<String, String> headers, String body, long arrivedNanos) {
        JsonNode rows() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String key() {
            return headers.get("idempotency-key");
        }

        long sequence() {
            return Long.parseLong(headers.get("x-sluice-sequence"));
        }
    }

    /** What the server answers: status, headers, and how long it takes first. */
    record Reply(int status, Map<String, String> headers, long delayMillis, String body) {
        static Reply ok() {
            return new Reply(200, Map.of(), 0, "");
        }

        static Reply status(int status) {
            return new Reply(status, Map.of(), 0, "nope");
        }
    }

    static final class Receiver implements AutoCloseable {
        final HttpServer server;
        final ExecutorService threads = Executors.newCachedThreadPool();
        final List<Received> received = Collections.synchronizedList(new ArrayList<>());
        /** System.nanoTime() when each successful answer was about to be written. */
        final List<Long> answeredNanos = Collections.synchronizedList(new ArrayList<>());

        final AtomicInteger concurrent = new AtomicInteger();
        final AtomicInteger maxConcurrent = new AtomicInteger();
        volatile Function<Received, Reply> responder = r -> Reply.ok();

        Receiver() throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/hook", this::handle);
            server.setExecutor(threads);
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
        }

        private void handle(HttpExchange exchange) throws IOException {
            int now = concurrent.incrementAndGet();
            boolean counted = true;
            maxConcurrent.accumulateAndGet(now, Math::max);
            try (exchange) {
                Map<String, String> headers = new TreeMap<>();
                exchange.getRequestHeaders()
                        .forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                Received r;
                synchronized (received) {
                    r = new Received(received.size(), headers, body, System.nanoTime());
                    received.add(r);
                }
                Reply reply = responder.apply(r);
                if (reply.delayMillis() > 0) {
                    Thread.sleep(reply.delayMillis());
                }
                if (reply.status() / 100 == 2) {
                    // Before the answer is written: once the client has it, it is counted here.
                    answeredNanos.add(System.nanoTime());
                }
                reply.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
                byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
                // Done before the answer goes out: once the client has it, it may send the next
                // request, which must not find this one still counted.
                concurrent.decrementAndGet();
                counted = false;
                exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
                if (bytes.length > 0) {
                    exchange.getResponseBody().write(bytes);
                }
                exchange.getResponseBody().close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                if (counted) {
                    concurrent.decrementAndGet();
                }
            }
        }

        List<Received> received() {
            synchronized (received) {
                return List.copyOf(received);
            }
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }

    // ---- pipelines ---------------------------------------------------------------------------------

    private static String row(long id, String name, String op) {
        return "{\"id\": %d, \"name\": %s, \"_op\": \"%s\"}\n"
                .formatted(id, name == null ? "null" : "\"" + name + "\"", op);
    }

    private static String rows(int n) {
        StringBuilder out = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            out.append(row(i, "n" + i, i % 3 == 0 ? "d" : i % 3 == 1 ? "i" : "u"));
        }
        return out.toString();
    }

    /** file (JSON lines: id, name, _op; 2 rows per source batch) → webhook with {@code sinkSettings}. */
    private Path pipeline(String name, String input, String sinkSettings) throws IOException {
        Files.writeString(dir.resolve(name + ".jsonl"), input);
        return Files.writeString(dir.resolve(name + ".yaml"), """
                name: %s
                sources:
                  in:
                    type: file
                    path: %s.jsonl
                    schema: {id: bigint, name: string, _op: string}
                    batch_size: 2
                sinks:
                  hook:
                    type: webhook
                    from: in
                    url: %s
                %s
                """.formatted(
                        name, name, receiver.url(), sinkSettings.indent(4).stripTrailing()));
    }

    private Result run(Path pipeline, String state) {
        return sluice(
                "run", pipeline.toString(), "--state-dir", dir.resolve(state).toString());
    }

    /** Every row the receiver got, in the order of the requests' sequence numbers. */
    private List<JsonNode> rowsInSequence(List<Received> requests) {
        List<JsonNode> out = new ArrayList<>();
        requests.stream()
                .sorted(java.util.Comparator.comparingLong(Received::sequence))
                .forEach(r -> r.rows().forEach(out::add));
        return out;
    }

    private static List<JsonNode> expected(String input) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : input.split("\n")) {
            out.add(JSON.readTree(line));
        }
        return out;
    }

    // ---- tests -------------------------------------------------------------------------------------

    @Test
    void rowsAndOpArriveAsJsonInRequestsOfBatchSizeWithHeaders() throws Exception {
        String input = row(1, "a", "i")
                + row(2, "b \\\"q\\\" é", "u")
                + row(3, null, "d")
                + row(4, "d", "i")
                + row(5, "e", "u")
                + row(6, "f", "d")
                + row(7, "g", "i");
        Path p = pipeline("rows", input, """
                batch_size: 3
                headers:
                  Authorization: "Bearer ${WEBHOOK_TEST_TOKEN}"
                  X-Static: plain
                """);
        Result result = run(p, "state");
        assertEquals(0, result.code(), result.stderr());
        List<Received> got = receiver.received();
        // 7 rows in source batches of 2, cut into requests of 3: 3, 3, 1 (the last at the final checkpoint).
        assertEquals(List.of(3, 3, 1), got.stream().map(r -> r.rows().size()).toList());
        assertEquals(List.of(0L, 1L, 2L), got.stream().map(Received::sequence).toList());
        assertEquals(expected(input), rowsInSequence(got));
        for (Received r : got) {
            assertTrue(r.rows().isArray(), r.body());
            assertEquals("Bearer " + TOKEN, r.headers().get("authorization"));
            assertEquals("plain", r.headers().get("x-static"));
            assertEquals("application/json", r.headers().get("content-type"));
            assertTrue(r.key().matches("[0-9a-f]{64}"), r.key());
        }
        assertEquals(3, new HashSet<>(got.stream().map(Received::key).toList()).size(), "a key per request");
        assertTrue(got.get(0).rows().get(2).get("name").isNull(), "a null is written as null");
        assertFalse(result.stderr().contains(TOKEN), result.stderr());
    }

    @Test
    void aServerErrorIsRetriedWithTheSameBodyAndKeyUntilItSucceeds() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        receiver.responder = r -> calls.incrementAndGet() <= 2 ? Reply.status(500) : Reply.ok();
        Path p = pipeline("retry", rows(4), "batch_size: 10\nretry_backoff: 20ms");
        Result result = run(p, "state");
        assertEquals(0, result.code(), result.stderr());
        List<Received> got = receiver.received();
        assertEquals(3, got.size(), "two 500s, then success");
        for (Received r : got) {
            assertEquals(got.get(0).body(), r.body());
            assertEquals(got.get(0).key(), r.key());
            assertEquals(0, r.sequence());
        }
        assertEquals(expected(rows(4)), rowsInSequence(got.subList(2, 3)));
        assertTrue(
                result.stderr().contains("(request 0, rows 0..3) answered 500: nope; retry 1 of 5 in "),
                result.stderr());
    }

    @Test
    void retryAfterOf429IsHonoured() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        receiver.responder = r ->
                calls.incrementAndGet() == 1 ? new Reply(429, Map.of("Retry-After", "2"), 0, "slow down") : Reply.ok();
        // The backoff alone would retry after 5-10 ms.
        Path p = pipeline("retryafter", rows(2), "retry_backoff: 10ms");
        Result result = run(p, "state");
        assertEquals(0, result.code(), result.stderr());
        List<Received> got = receiver.received();
        assertEquals(2, got.size());
        long waitedMillis = (got.get(1).arrivedNanos() - got.get(0).arrivedNanos()) / 1_000_000;
        assertTrue(waitedMillis >= 2000, "retried after " + waitedMillis + " ms, Retry-After was 2 s");
        assertTrue(waitedMillis < 4000, "retried after " + waitedMillis + " ms, Retry-After was 2 s");
    }

    @Test
    void aRequestStillRefusedAfterItsRetriesFailsTheRunNamingNodeUrlAndStatus() throws Exception {
        receiver.responder = r -> new Reply(503, Map.of(), 0, "down for maintenance, token " + TOKEN);
        Path p = pipeline("fails", rows(3), """
                max_retries: 2
                retry_backoff: 10ms
                headers: {Authorization: "Bearer ${WEBHOOK_TEST_TOKEN}"}
                """);
        String url = receiver.url();
        Result result = run(p, "state");
        assertNotEquals(0, result.code(), result.stderr());
        assertEquals(3, receiver.received().size(), "the first attempt and 2 retries");
        assertTrue(
                result.stderr()
                        .contains("node 'hook': POST " + url + " (request 0, rows 0..2) answered 503: "
                                + "down for maintenance, token ****"),
                result.stderr());
        assertTrue(result.stderr().contains("after 3 attempts (max_retries 2)"), result.stderr());
        assertFalse(result.stderr().contains(TOKEN), result.stderr());

        // A client error is not retried.
        receiver.received.clear();
        receiver.responder = r -> Reply.status(400);
        Result bad = run(pipeline("bad", rows(3), "retry_backoff: 10ms"), "state2");
        assertNotEquals(0, bad.code(), bad.stderr());
        assertEquals(1, receiver.received().size());
        assertTrue(bad.stderr().contains("answered 400: nope (not retried)"), bad.stderr());
    }

    @Test
    void withOnErrorDeadLetterTheRowsOfARefusedRequestGoToTheDeadLetter() throws Exception {
        // Requests holding row 3 are refused; the others succeed.
        receiver.responder = r -> r.body().contains("\"id\":3,") ? Reply.status(422) : Reply.ok();
        Path p = pipeline("dead", rows(6), """
                batch_size: 2
                on_error: dead_letter
                dead_letter: hook.dead-letter.jsonl
                """);
        Result result = run(p, "state");
        assertEquals(0, result.code(), result.stderr());
        List<String> letters = Files.readAllLines(dir.resolve("hook.dead-letter.jsonl"));
        assertEquals(2, letters.size(), String.join("\n", letters));
        List<JsonNode> dead = new ArrayList<>();
        for (String line : letters) {
            JsonNode letter = JSON.readTree(line);
            assertTrue(letter.toString().contains("answered 422"), line);
            assertTrue(letter.toString().contains("rows 2..3"), line);
            dead.add(letter);
        }
        // Rows 3 and 4 (positions 2 and 3) were in the refused request; the rest arrived.
        assertEquals(
                List.of(2L, 3L),
                dead.stream().map(l -> l.get("position").asLong()).toList());
        List<JsonNode> all = expected(rows(6));
        List<Received> ok = receiver.received().stream()
                .filter(r -> !r.body().contains("\"id\":3,"))
                .toList();
        assertEquals(List.of(all.get(0), all.get(1), all.get(4), all.get(5)), rowsInSequence(ok));
    }

    @Test
    void theCheckpointIsAcknowledgedOnlyAfterEveryRequestBeforeItSucceeded() throws Exception {
        receiver.responder = r -> new Reply(200, Map.of(), 400, "");
        Path p = pipeline("barrier", rows(8), "batch_size: 1\nmax_in_flight: 4");
        Result result = run(p, "state");
        long returned = System.nanoTime();
        assertEquals(0, result.code(), result.stderr());
        // The final checkpoint returned after all 8 answers; without waiting, close would have cut them off.
        assertEquals(8, receiver.answeredNanos.size());
        for (long answered : receiver.answeredNanos) {
            assertTrue(answered <= returned);
        }
        assertTrue(receiver.maxConcurrent.get() > 1, "requests overlapped: " + receiver.maxConcurrent.get());
        assertTrue(receiver.maxConcurrent.get() <= 4, "at most max_in_flight: " + receiver.maxConcurrent.get());
        assertEquals(expected(rows(8)), rowsInSequence(receiver.received()));
    }

    @Test
    void withOneRequestInFlightRequestsArriveInOrderEvenWhenOneIsRetried() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        // Request 1 fails twice; with max_in_flight 1 nothing after it may be sent meanwhile.
        receiver.responder = r -> r.sequence() == 1 && calls.incrementAndGet() <= 2
                ? Reply.status(500)
                : new Reply(200, Map.of(), 20, "");
        Path p = pipeline("order", rows(10), "batch_size: 2\nretry_backoff: 30ms");
        Result result = run(p, "state");
        assertEquals(0, result.code(), result.stderr());
        List<Long> sequences =
                receiver.received().stream().map(Received::sequence).toList();
        assertEquals(List.of(0L, 1L, 1L, 1L, 2L, 3L, 4L), sequences);
        assertEquals(1, receiver.maxConcurrent.get());
        List<JsonNode> arrived = new ArrayList<>();
        receiver.received().stream()
                .filter(r -> r.index() != 1 && r.index() != 2)
                .forEach(r -> r.rows().forEach(arrived::add));
        assertEquals(expected(rows(10)), arrived, "in arrival order");
    }

    @Test
    void replayingTheSameInputSendsTheSameIdempotencyKeys() throws Exception {
        String input = rows(25);
        Path p = pipeline("replay", input, "batch_size: 4");
        assertEquals(0, run(p, "state1").code());
        List<String> first = receiver.received().stream().map(Received::key).toList();
        receiver.received.clear();
        // A fresh state directory: the whole input again, as a restart without a checkpoint replays it.
        assertEquals(0, run(p, "state2").code());
        List<String> second = receiver.received().stream().map(Received::key).toList();
        assertEquals(7, first.size());
        assertEquals(first, second);
        assertEquals(7, new HashSet<>(first).size());

        // Another input gives other keys.
        receiver.received.clear();
        assertEquals(
                0,
                run(pipeline("replay", rows(24) + row(25, "other", "i"), "batch_size: 4"), "state3")
                        .code());
        List<String> third = receiver.received().stream().map(Received::key).toList();
        assertEquals(first.subList(0, 6), third.subList(0, 6));
        assertNotEquals(first.get(6), third.get(6));
    }

    @Test
    void validateSendsNothingAndRefusesABadUrlOrHeader() throws Exception {
        Path p = pipeline("validate", rows(3), "");
        Result valid = sluice("validate", p.toString());
        assertEquals(0, valid.code(), valid.stderr());
        assertEquals(0, receiver.received().size());

        Files.writeString(p, Files.readString(p).replace(receiver.url(), "ftp://example.com/x"));
        Result badUrl = sluice("validate", p.toString());
        assertEquals(2, badUrl.code(), badUrl.stderr());
        assertTrue(badUrl.stderr().contains("not an http:// or https:// URL"), badUrl.stderr());

        Result badHeader = sluice(
                "validate",
                pipeline("header", rows(1), "headers: {Idempotency-Key: x}").toString());
        assertEquals(2, badHeader.code(), badHeader.stderr());
        assertTrue(badHeader.stderr().contains("is set by the sink"), badHeader.stderr());
    }
}
