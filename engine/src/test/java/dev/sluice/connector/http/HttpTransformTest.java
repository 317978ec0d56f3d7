package dev.sluice.connector.http;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The http transform (an external handler) against a real HTTP server (the JDK's) on 127.0.0.1. */
class HttpTransformTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger concurrent = new AtomicInteger();
    private final AtomicInteger maxConcurrent = new AtomicInteger();
    /** The handler: a request's rows → status and body. */
    private volatile Function<ArrayNode, Answer> handler;

    record Answer(int status, String body) {}

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/handle", this::handle);
        server.setExecutor(threads);
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
        threads.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        requests.incrementAndGet();
        maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
        try (exchange) {
            ArrayNode rows = (ArrayNode) JSON.readTree(exchange.getRequestBody());
            Answer answer = handler.apply(rows);
            byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer.status(), bytes.length == 0 ? -1 : bytes.length);
            exchange.getResponseBody().write(bytes);
        } finally {
            concurrent.decrementAndGet();
        }
    }

    private String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/handle";
    }

    private Path input(int rows) throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int id = 0; id < rows; id++) {
            lines.append("{\"id\": ")
                    .append(id)
                    .append(", \"name\": \"n")
                    .append(id)
                    .append("é\"}\n");
        }
        return Files.writeString(dir.resolve("in.jsonl"), lines.toString());
    }

    private Path pipeline(String transformSettings) throws IOException {
        return Files.writeString(dir.resolve("p.yaml"), """
                sources:
                  events: {type: file, path: in.jsonl, batch_size: 1000}
                transforms:
                  enriched:
                    type: http
                    from: events
                    url: "%s"
                    schema: {id: bigint, name_length: int, doubled: bigint, echo: string}
                %s
                sinks:
                  out: {type: file, from: enriched, path: out.jsonl}
                """.formatted(
                        url(), transformSettings.indent(4).stripTrailing()));
    }

    /** What the test's handler answers for one row: nothing for every 7th id, two rows for every 11th. */
    private static List<ObjectNode> enrich(JsonNode row) {
        long id = row.get("id").asLong();
        if (id % 7 == 0) {
            return List.of();
        }
        List<ObjectNode> out = new ArrayList<>();
        for (int copy = 0; copy < (id % 11 == 0 ? 2 : 1); copy++) {
            out.add(JSON.createObjectNode()
                    .put("id", id)
                    .put("name_length", row.get("name").asText().length())
                    .put("doubled", 2 * id)
                    // Multi-byte characters: rows are cut out of the answer by byte offsets.
                    .put("echo", row.get("name").asText() + " → ✓")
                    .put("not_declared", "left out"));
        }
        return out;
    }

    private static Answer enrichAll(ArrayNode rows) {
        ArrayNode out = JSON.createArrayNode();
        rows.forEach(row -> out.addAll(enrich(row)));
        return new Answer(200, out.toString());
    }

    @Test
    void answeredRowsComeOutInRequestOrderWhateverOrderTheAnswersCameIn() throws Exception {
        input(2500);
        handler = rows -> {
            try {
                Thread.sleep(ThreadLocalRandom.current().nextInt(20)); // answers overtake each other
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return enrichAll(rows);
        };
        Result run = sluice("run", pipeline("batch_size: 40\nmax_in_flight: 4").toString());
        assertEquals(0, run.code(), run.stderr());

        List<String> expected = new ArrayList<>();
        for (int id = 0; id < 2500; id++) {
            for (ObjectNode row : enrich(JSON.createObjectNode().put("id", id).put("name", "n" + id + "é"))) {
                row.remove("not_declared");
                expected.add(row.toString());
            }
        }
        assertEquals(expected, Files.readAllLines(dir.resolve("out.jsonl")));
        // 1000-row batches in requests of 40: 25 + 25 + 13 requests.
        assertEquals(63, requests.get());
        assertTrue(maxConcurrent.get() > 1, "requests of a batch overlap: " + maxConcurrent.get());
    }

    @Test
    void refusedAndMalformedAnswersSendTheirRowsToOnErrorAndLoseNothing() throws Exception {
        input(30);
        handler = rows -> {
            long first = rows.get(0).get("id").asLong();
            if (first == 5) {
                return new Answer(400, "no such thing");
            }
            if (first == 15) {
                return new Answer(200, "{\"id\": 15}");
            }
            if (first == 20) {
                return new Answer(200, "[{\"id\": 20, \"name_length\": 3, \"doubled\": 40}, {\"id\": \"twenty-one\"}]");
            }
            return enrichAll(rows);
        };
        Result run = sluice(
                "run",
                pipeline("batch_size: 5\non_error: dead_letter\ndead_letter: dead.jsonl")
                        .toString());
        assertEquals(0, run.code(), run.stderr());

        List<String> ids = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("out.jsonl"))) {
            ids.add(JSON.readTree(line).get("id").asText());
        }
        assertEquals(List.of("1", "2", "3", "4", "10", "11", "11", "12", "13", "20", "25", "26", "27", "29"), ids);
        List<String> dead = Files.readAllLines(dir.resolve("dead.jsonl"));
        assertEquals(11, dead.size(), String.join("\n", dead));
        String all = String.join("\n", dead);
        assertTrue(all.contains("(request 1, rows 5..9) answered 400: no such thing (not retried)"), all);
        assertTrue(all.contains("(request 3, rows 15..19) was answered with something other than a JSON array"), all);
        assertTrue(all.contains("row 1 of the answer to POST " + url() + " (request 4, rows 20..24)"), all);
    }

    @Test
    void aServerErrorIsRetriedAndARefusalFailsTheRunByDefault() throws Exception {
        input(10);
        AtomicInteger calls = new AtomicInteger();
        handler = rows -> calls.getAndIncrement() == 0 ? new Answer(503, "busy") : enrichAll(rows);
        Result retried = sluice("run", pipeline("retry_backoff: 10ms").toString());
        assertEquals(0, retried.code(), retried.stderr());
        assertEquals(8, Files.readAllLines(dir.resolve("out.jsonl")).size()); // 0 and 7 answered with no row
        assertEquals(2, calls.get());

        handler = rows -> new Answer(422, "unprocessable");
        Result refused = sluice("run", pipeline("").toString());
        assertEquals(1, refused.code(), refused.stderr());
        assertTrue(refused.stderr().contains("answered 422: unprocessable (not retried)"), refused.stderr());
    }

    @Test
    void validationNeedsASchemaAndAnHttpUrlAndCallsNothing() throws Exception {
        input(3);
        handler = HttpTransformTest::enrichAll;
        Files.writeString(dir.resolve("no-schema.yaml"), """
                sources:
                  events: {type: file, path: in.jsonl}
                transforms:
                  enriched: {type: http, from: events, url: "%s"}
                sinks:
                  out: {type: stdout, from: enriched}
                """.formatted(url()));
        Result noSchema = sluice("validate", dir.resolve("no-schema.yaml").toString());
        assertEquals(2, noSchema.code(), noSchema.stderr());
        assertTrue(noSchema.stderr().contains("schema"), noSchema.stderr());

        Files.writeString(dir.resolve("bad-url.yaml"), """
                sources:
                  events: {type: file, path: in.jsonl}
                transforms:
                  enriched: {type: http, from: events, url: "ftp://example.org/x", schema: {id: bigint}}
                sinks:
                  out: {type: stdout, from: enriched}
                """);
        Result badUrl = sluice("validate", dir.resolve("bad-url.yaml").toString());
        assertEquals(2, badUrl.code(), badUrl.stderr());
        assertTrue(badUrl.stderr().contains("not an http:// or https:// URL"), badUrl.stderr());

        Result valid = sluice("validate", pipeline("").toString());
        assertEquals(0, valid.code(), valid.stderr());
        assertEquals(0, requests.get(), "validate sends nothing");
    }
}
