package dev.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.StageTypes;
import dev.sluice.observe.Inspections;
import dev.sluice.state.StateStore;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live inspection over HTTP against a pipeline the service runs: the snapshot holds every node
 * with counts and the rows each node emitted (checked against what the node does: a filter's
 * rows all pass it, masked columns show {@code ****}), the sample cap holds, the event stream
 * sends rates and only new rows, and a pipeline that is not running is a 404.
 */
class InspectTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Bids at 2 000 events/s, a filter, a projection and a sink; rows sampled every 2 s window. */
    static final String PIPELINE = """
            inspect: {sample_rows: 6, sample_window: 2s, mask_columns: [url]}
            sources:
              bids: {type: generator, entity: bid, rate: 2000, batch_size: 200}
            transforms:
              pricey:
                type: sql
                from: bids
                sql: "SELECT auction, bidder, price, url FROM bids WHERE price % 2 = 0"
            sinks:
              out: {type: blackhole, from: pricey}
            """;

    @TempDir
    Path dir;

    private PipelineService service;
    private ServiceApi api;

    @AfterEach
    void stop() {
        if (api != null) {
            api.close();
        }
        if (service != null) {
            service.close();
        }
    }

    /** Starts a service running {@link #PIPELINE} as {@code name}; {@code token} may be null. */
    String start(String name, String token) throws Exception {
        service = new PipelineService(StateStore.open(dir.resolve("state")), StageTypes.installed(), dir, System.err);
        api = ServiceApi.start(service, "127.0.0.1", 0, token);
        service.boot();
        service.apply(name, PIPELINE);
        return "http://127.0.0.1:" + api.port();
    }

    static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The node named {@code name} of a snapshot. */
    static JsonNode node(JsonNode snapshot, String name) {
        for (JsonNode node : snapshot.get("nodes")) {
            if (node.get("name").asText().equals(name)) {
                return node;
            }
        }
        throw new AssertionError("no node " + name + " in " + snapshot);
    }

    @Test
    void theSnapshotShowsEveryNodeWithRowsTheNodeReallyEmitted() throws Exception {
        String base = start("bids", null);
        JsonNode snapshot = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        // Wait until every node has sampled rows.
        while (System.nanoTime() < deadline) {
            HttpResponse<String> response = get(base + "/inspect/bids/state");
            if (response.statusCode() == 200) {
                snapshot = JSON.readTree(response.body());
                boolean all = true;
                for (JsonNode node : snapshot.get("nodes")) {
                    all &= node.get("samples").size() > 0;
                }
                if (all) {
                    break;
                }
            }
            Thread.sleep(200);
        }
        assertNotNull(snapshot, "the pipeline never ran");
        assertEquals(List.of("bids", "pricey", "out"), names(snapshot));
        assertEquals("source", node(snapshot, "bids").get("kind").asText());
        assertEquals("generator", node(snapshot, "bids").get("type").asText());
        assertEquals(List.of("bids"), texts(node(snapshot, "pricey").get("inputs")));
        assertEquals("sink", node(snapshot, "out").get("kind").asText());
        assertTrue(node(snapshot, "bids").get("rows_out").asLong() > 0);

        // The source's rows are bids (every Nexmark bid column), url masked.
        for (JsonNode sample : node(snapshot, "bids").get("samples")) {
            JsonNode row = sample.get("row");
            for (String column : List.of("auction", "bidder", "price", "channel", "dateTime", "extra")) {
                assertTrue(row.has(column), column + " in " + row);
            }
            assertEquals("****", row.get("url").asText(), "masked: " + row);
        }
        // The filter's rows passed it and have its projection; the sink received the same shape.
        for (String node : List.of("pricey", "out")) {
            for (JsonNode sample : node(snapshot, node).get("samples")) {
                JsonNode row = sample.get("row");
                assertEquals(List.of("auction", "bidder", "price", "url"), fieldNames(row), node + ": " + row);
                assertEquals(0, row.get("price").asLong() % 2, node + " row passed the filter: " + row);
                assertEquals("****", row.get("url").asText());
            }
        }

        // The cap: 6 rows per 2 s window at most, however many batches went by (10 per second).
        Thread.sleep(4500);
        JsonNode later = JSON.readTree(get(base + "/inspect/bids/state").body());
        for (JsonNode node : later.get("nodes")) {
            assertTrue(node.get("samples").size() <= 6, "kept at most sample_rows rows: " + node);
        }
        double seconds = later.get("run_seconds").asDouble();
        long reserved = Inspections.find("bids")
                .orElseThrow()
                .stats()
                .node("bids")
                .samples()
                .reserved();
        long windows = (long) Math.ceil(seconds / 2.0) + 1; // windows the run has touched
        assertTrue(reserved > 0 && reserved <= 6 * windows, reserved + " rows sampled over " + seconds + " s");

        // Not running: 404 naming what runs.
        HttpResponse<String> missing = get(base + "/inspect/nope/state");
        assertEquals(404, missing.statusCode());
        assertTrue(missing.body().contains("no running pipeline 'nope'; running: bids"), missing.body());
        // The page is served from the JAR.
        HttpResponse<String> page = get(base + "/inspect/bids");
        assertEquals(200, page.statusCode());
        assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(page.body().contains("/events"));
    }

    @Test
    void theEventStreamSendsRatesAndEachSampledRowOnce() throws Exception {
        String base = start("stream", "t0ken");
        assertEquals(401, get(base + "/inspect/stream/state").statusCode());
        assertEquals(401, get(base + "/inspect/stream/state?token=wrong").statusCode());
        assertEquals(200, waitForState(base + "/inspect/stream/state?token=t0ken"));

        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/inspect/stream/events?token=t0ken"))
                .header("Accept", "text/event-stream")
                .build();
        HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        List<JsonNode> snapshots = new ArrayList<>();
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String event = null;
            String line;
            while (snapshots.size() < 6 && (line = lines.readLine()) != null) {
                if (line.startsWith("event:")) {
                    event = line.substring("event:".length()).strip();
                } else if (line.startsWith("data:") && "snapshot".equals(event)) {
                    snapshots.add(JSON.readTree(line.substring("data:".length()).strip()));
                }
            }
        }
        assertEquals(6, snapshots.size());
        assertTrue(node(snapshots.get(0), "bids").get("rows_per_second").isNull(), "no rate before a second snapshot");
        long rate = node(snapshots.get(5), "bids").get("rows_per_second").asLong();
        // The generator emits about 1 840 bids/s (92 % of 2 000 events); allow a loaded machine.
        assertTrue(rate > 300 && rate < 4000, "bids/s: " + rate);
        Map<String, List<Long>> seqs = new HashMap<>();
        for (JsonNode snapshot : snapshots) {
            for (JsonNode node : snapshot.get("nodes")) {
                for (JsonNode sample : node.get("samples")) {
                    seqs.computeIfAbsent(node.get("name").asText(), k -> new ArrayList<>())
                            .add(sample.get("seq").asLong());
                }
            }
        }
        for (Map.Entry<String, List<Long>> node : seqs.entrySet()) {
            List<Long> sorted = node.getValue().stream().sorted().distinct().toList();
            assertEquals(sorted, node.getValue(), node.getKey() + ": each row once, in order");
        }
        // Two takes of 3 rows per 2 s window, a second apart: rows keep arriving after the first snapshot.
        assertFalse(seqs.getOrDefault("pricey", List.of()).isEmpty());
        assertTrue(
                snapshots.subList(1, 6).stream()
                        .anyMatch(s -> node(s, "pricey").get("samples").size() > 0),
                "new rows after the first snapshot");
    }

    private static int waitForState(String url) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        int status;
        do {
            status = get(url).statusCode();
            if (status == 200) {
                return status;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        return status;
    }

    private static List<String> names(JsonNode snapshot) {
        List<String> names = new ArrayList<>();
        snapshot.get("nodes").forEach(n -> names.add(n.get("name").asText()));
        return names;
    }

    private static List<String> texts(JsonNode array) {
        List<String> texts = new ArrayList<>();
        array.forEach(n -> texts.add(n.asText()));
        return texts;
    }

    private static List<String> fieldNames(JsonNode row) {
        List<String> names = new ArrayList<>();
        row.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
