package dev.sluice.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.ChildJvm;
import dev.sluice.config.StageTypes;
import dev.sluice.state.StateStore;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /metrics} scraped and parsed (Prometheus text format) against runs with known counts:
 * a file of 1 000 good and 3 bad lines through a filter that keeps half, under {@code serve};
 * and {@code run --metrics-port} in a child JVM.
 */
class MetricsTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** A sample line: name{labels} value. */
    private static final Pattern SAMPLE = Pattern.compile("^([a-z_]+)\\{([^}]*)} (\\S+)$", Pattern.MULTILINE);

    @TempDir
    Path dir;

    private static String get(String url) throws Exception {
        HttpResponse<String> response =
                HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
        return response.body();
    }

    /**
     * {@link #get} against a child JVM's endpoint, retrying a failed connect while the child lives
     * and the deadline allows: on a loaded 2-core machine the JDK client's first connect has failed
     * once (its retry then reports only a ClosedChannelException). A dead child fails with its log.
     */
    private static String getFromChild(String url, Process child, Path log, long deadline) throws Exception {
        while (true) {
            try {
                return get(url);
            } catch (java.net.ConnectException e) {
                if (!child.isAlive() || System.nanoTime() > deadline) {
                    throw new AssertionError(
                            "cannot connect to " + url + " (child alive: " + child.isAlive() + "); its log:\n"
                                    + Files.readString(log),
                            e);
                }
                Thread.sleep(200);
            }
        }
    }

    /** The value of metric {@code name} whose labels include every one of {@code labels}; null if none. */
    private static Double sample(String text, String name, Map<String, String> labels) {
        Matcher line = SAMPLE.matcher(text);
        while (line.find()) {
            if (!line.group(1).equals(name)) {
                continue;
            }
            if (labelsOf(line.group(2)).entrySet().containsAll(labels.entrySet())) {
                return Double.parseDouble(line.group(3));
            }
        }
        return null;
    }

    /** The labels of a sample, {@code a="x",b="y"} → {a: x, b: y}. */
    private static Map<String, String> labelsOf(String labels) {
        Map<String, String> found = new HashMap<>();
        for (String pair : labels.split(",")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                found.put(pair.substring(0, eq), pair.substring(eq + 1).replace("\"", ""));
            }
        }
        return found;
    }

    /** The sum of metric {@code name} over the samples whose labels include {@code labels}. */
    private static double sum(String text, String name, Map<String, String> labels) {
        double total = 0;
        Matcher line = SAMPLE.matcher(text);
        while (line.find()) {
            if (line.group(1).equals(name)) {
                if (labelsOf(line.group(2)).entrySet().containsAll(labels.entrySet())) {
                    total += Double.parseDouble(line.group(3));
                }
            }
        }
        return total;
    }

    /**
     * A stage's own counters (StageContext.counter): the http transform counts its requests by
     * how they ended and its retries, against a real handler (the JDK's HttpServer) that answers
     * the first request 503 once and refuses the one holding id 150.
     */
    @Test
    void anHttpTransformCountsItsRequestsAndRetries() throws Exception {
        StringBuilder rows = new StringBuilder();
        for (int id = 0; id < 250; id++) {
            rows.append("{\"id\": ").append(id).append("}\n");
        }
        Files.writeString(dir.resolve("ids.jsonl"), rows);
        java.util.concurrent.atomic.AtomicInteger seen = new java.util.concurrent.atomic.AtomicInteger();
        com.sun.net.httpserver.HttpServer handler =
                com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        handler.createContext("/score", exchange -> {
            try (exchange) {
                String body =
                        new String(exchange.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                int status = seen.getAndIncrement() == 0 ? 503 : body.contains("{\"id\":150}") ? 400 : 200;
                byte[] answer = (status == 200 ? body : "no").getBytes(java.nio.charset.StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(status, answer.length);
                exchange.getResponseBody().write(answer);
            }
        });
        handler.start();
        PipelineService service =
                new PipelineService(StateStore.open(dir.resolve("state")), StageTypes.installed(), dir, System.err);
        ServiceApi api = ServiceApi.start(service, "127.0.0.1", 0, null);
        try {
            service.boot();
            service.apply("scored", """
                    sources:
                      src: {type: file, path: ids.jsonl, schema: {id: bigint}, batch_size: 1000}
                    transforms:
                      score:
                        type: http
                        from: src
                        url: http://127.0.0.1:%d/score
                        batch_size: 100
                        max_in_flight: 1
                        retry_backoff: 10ms
                        schema: {id: bigint}
                        on_error: dead_letter
                    sinks:
                      out: {type: blackhole, from: score}
                    """.formatted(handler.getAddress().getPort()));
            awaitCompleted(service, "scored");
            String text = get("http://127.0.0.1:" + api.port() + "/metrics");
            Map<String, String> score = Map.of("pipeline", "scored", "node", "score");
            assertEquals(2.0, sample(text, "sluice_http_requests_total", with(score, "result", "ok")), text);
            assertEquals(1.0, sample(text, "sluice_http_requests_total", with(score, "result", "refused")), text);
            assertEquals(0.0, sample(text, "sluice_http_requests_total", with(score, "result", "failed")), text);
            assertEquals(1.0, sample(text, "sluice_http_retries_total", score), text);
            assertEquals(100.0, sample(text, "sluice_node_rejected_total", score), "the refused request's rows");
        } finally {
            api.close();
            service.close();
            handler.stop(0);
        }
    }

    /** Waits up to 60 s for a bounded pipeline to complete, and asserts it did. */
    private static void awaitCompleted(PipelineService service, String name) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!service.status(name).state().equals("completed") && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals("completed", service.status(name).state());
    }

    private static Map<String, String> with(Map<String, String> labels, String key, String value) {
        Map<String, String> more = new HashMap<>(labels);
        more.put(key, value);
        return more;
    }

    @Test
    void serveExportsEveryNodesCountsCheckpointsAndTheJvm() throws Exception {
        List<String> lines = new ArrayList<>();
        for (int id = 0; id < 1000; id++) {
            lines.add("{\"id\": " + id + "}");
            if (id % 400 == 7) {
                lines.add("not json " + id);
            }
        }
        Files.write(dir.resolve("ids.jsonl"), lines);
        assertEquals(1003, lines.size());
        PipelineService service =
                new PipelineService(StateStore.open(dir.resolve("state")), StageTypes.installed(), dir, System.err);
        ServiceApi api = ServiceApi.start(service, "127.0.0.1", 0, null);
        try {
            service.boot();
            service.apply("counted", """
                    sources:
                      src: {type: file, path: ids.jsonl, schema: {id: bigint}, batch_size: 100}
                    transforms:
                      even: {type: sql, from: src, sql: "SELECT id FROM src WHERE id % 2 = 0 AND dynamic_contains('seen', id)"}
                    tables:
                      seen: {type: dynamic, from: src, schema: {id: bigint}, key: id}
                    sinks:
                      out: {type: blackhole, from: even}
                    """);
            awaitCompleted(service, "counted");
            String text = get("http://127.0.0.1:" + api.port() + "/metrics");
            Map<String, String> src = Map.of("pipeline", "counted", "node", "src");
            Map<String, String> even = Map.of("pipeline", "counted", "node", "even");
            Map<String, String> out = Map.of("pipeline", "counted", "node", "out");
            assertEquals(1000.0, sample(text, "sluice_node_rows_out_total", src), text);
            assertEquals(3.0, sample(text, "sluice_node_rejected_total", src));
            assertEquals(1000.0, sample(text, "sluice_node_rows_in_total", even));
            assertEquals(500.0, sample(text, "sluice_node_rows_out_total", even));
            assertEquals(500.0, sample(text, "sluice_node_rows_in_total", out));
            assertTrue(sample(text, "sluice_node_batches_out_total", src) >= 10, "1 000 rows in batches of 100");
            // The dynamic table holds every id (each batch is in it before `even` tests it).
            Map<String, String> seen = Map.of("pipeline", "counted", "table", "seen");
            assertEquals(1000.0, sample(text, "sluice_table_rows", seen), text);
            assertTrue(sample(text, "sluice_table_size_bytes", seen) >= 8000, "1 000 bigint keys: " + text);
            assertTrue(sample(text, "sluice_checkpoints_completed_total", Map.of("pipeline", "counted")) >= 1);
            assertEquals(0.0, sample(text, "sluice_checkpoints_failed_total", Map.of("pipeline", "counted")));
            // Every epoch begun was finalized (one lane, nothing failed or timed out).
            assertEquals(
                    sample(text, "sluice_checkpoints_completed_total", Map.of("pipeline", "counted")),
                    sample(text, "sluice_checkpoints_started_total", Map.of("pipeline", "counted")),
                    text);
            // Summed over the heap's pools: one of them (G1's eden) is empty right after a collection.
            assertTrue(sum(text, "jvm_memory_used_bytes", Map.of("area", "heap")) > 0, "JVM metrics");
            // Event-to-sink latency of the sink (a file source's rows: from when they were read).
            Map<String, String> outP99 = Map.of("pipeline", "counted", "node", "out", "quantile", "0.99");
            Double p99 = sample(text, "sluice_sink_latency_seconds", outP99);
            assertTrue(
                    p99 != null && p99 >= 0 && p99 < 30, "p99 latency of a file read just now: " + p99 + "\n" + text);
            assertTrue(
                    sample(
                                    text,
                                    "sluice_sink_latency_seconds",
                                    Map.of("pipeline", "counted", "node", "out", "quantile", "1.0"))
                            >= p99,
                    text);
            assertEquals(null, sample(text, "sluice_sink_latency_seconds", even), "only sinks have a latency");
            // Rows per batch (the file source reads batches of 100, the filter keeps half) and own time.
            assertEquals(
                    100.0,
                    sample(
                            text,
                            "sluice_node_batch_rows",
                            Map.of("pipeline", "counted", "node", "src", "quantile", "0.5")),
                    text);
            assertEquals(
                    50.0,
                    sample(
                            text,
                            "sluice_node_batch_rows",
                            Map.of("pipeline", "counted", "node", "out", "quantile", "1.0")),
                    text);
            assertTrue(sample(text, "sluice_node_processing_seconds_total", even) > 0, text);
            // The source waits on everything after it; the sink on nothing.
            assertTrue(sample(text, "sluice_node_downstream_seconds_total", src) > 0, text);
            assertEquals(0.0, sample(text, "sluice_node_downstream_seconds_total", out), text);
            assertTrue(
                    Pattern.compile("^sluice_native_handles [0-9.E]+$", Pattern.MULTILINE)
                            .matcher(text)
                            .find(),
                    text);

            everyMetricOfTheGrafanaDashboardIsExported(text);

            // A deleted pipeline leaves no meters behind.
            service.delete("counted");
            String after = get("http://127.0.0.1:" + api.port() + "/metrics");
            assertEquals(null, sample(after, "sluice_node_rows_out_total", src), after);
        } finally {
            api.close();
            service.close();
        }
    }

    /**
     * deploy/grafana/sluice-dashboard.json queries only metrics the engine exports: every metric
     * name in its PromQL appears in {@code scrape} (the Kafka lag gauge, which only a Kafka source
     * has, is scraped by ServiceKafkaTest).
     */
    private static void everyMetricOfTheGrafanaDashboardIsExported(String scrape) throws Exception {
        Path dashboard =
                Path.of(System.getProperty("sluice.repo.root", "..")).resolve("deploy/grafana/sluice-dashboard.json");
        com.fasterxml.jackson.databind.JsonNode panels = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(dashboard.toFile())
                .get("panels");
        java.util.Set<String> referenced = new java.util.TreeSet<>();
        Pattern metric = Pattern.compile("\\b((?:sluice|jvm|process)_[a-z_]+)\\b");
        for (var panel : panels) {
            for (var target : panel.get("targets")) {
                Matcher m = metric.matcher(target.get("expr").asText());
                while (m.find()) {
                    referenced.add(m.group(1));
                }
            }
        }
        assertTrue(referenced.size() >= 15, "the dashboard's metrics: " + referenced);
        referenced.remove("sluice_source_lag_records");
        for (String name : referenced) {
            assertTrue(
                    Pattern.compile("^" + name + "[ {]", Pattern.MULTILINE)
                            .matcher(scrape)
                            .find(),
                    "the dashboard queries " + name + ", which /metrics does not export");
        }
    }

    /**
     * With {@code OTEL_EXPORTER_OTLP_ENDPOINT} set, a run pushes its meters over OTLP/HTTP: a
     * receiver in this test decodes the protobuf requests; the source's final row count and the
     * JVM's meters arrive, tagged with pipeline and node.
     */
    @Test
    void aRunPushesItsMetricsOverOtlp() throws Exception {
        java.util.concurrent.ConcurrentLinkedQueue<
                        io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest>
                received = new java.util.concurrent.ConcurrentLinkedQueue<>();
        com.sun.net.httpserver.HttpServer receiver =
                com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/v1/metrics", exchange -> {
            try (exchange) {
                received.add(io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest.parseFrom(
                        exchange.getRequestBody().readAllBytes()));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        receiver.start();
        try {
            Path pipeline = dir.resolve("otlp.yaml");
            Files.writeString(pipeline, """
                    name: pushed
                    sources:
                      gen: {type: generator, entity: bid, count: 20000, rate: 10000, batch_size: 500}
                    sinks:
                      out: {type: blackhole, from: gen}
                    """);
            ProcessBuilder builder = new ProcessBuilder(ChildJvm.command(
                            "256m",
                            "run",
                            pipeline.toString(),
                            "--state-dir",
                            dir.resolve("state").toString()))
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("otlp.log").toFile());
            builder.environment()
                    .put(
                            "OTEL_EXPORTER_OTLP_ENDPOINT",
                            "http://127.0.0.1:" + receiver.getAddress().getPort());
            builder.environment().put("OTEL_METRIC_EXPORT_INTERVAL", "500");
            Process run = builder.start();
            assertTrue(run.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the run ended");
            assertEquals(0, run.exitValue(), Files.readString(dir.resolve("otlp.log")));
        } finally {
            receiver.stop(0);
        }
        double lastRowsOut = -1;
        int pushes = 0;
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (var request : received) {
            pushes++;
            for (var resource : request.getResourceMetricsList()) {
                for (var scope : resource.getScopeMetricsList()) {
                    for (var metric : scope.getMetricsList()) {
                        names.add(metric.getName());
                        if (!metric.getName().equals("sluice.node.rows.out")) {
                            continue;
                        }
                        for (var point : metric.getSum().getDataPointsList()) {
                            Map<String, String> attributes = new HashMap<>();
                            point.getAttributesList()
                                    .forEach(a -> attributes.put(
                                            a.getKey(), a.getValue().getStringValue()));
                            if (attributes.equals(Map.of("pipeline", "pushed", "node", "gen"))) {
                                lastRowsOut = point.getAsDouble();
                            }
                        }
                    }
                }
            }
        }
        assertTrue(pushes >= 2, "pushes: " + pushes);
        // 18 400 bids: the generator's count is of all events, and 46 in 50 are bids.
        assertEquals(18_400.0, lastRowsOut, "the source's rows in the last push; metrics seen: " + names);
        assertTrue(names.contains("jvm.memory.used") && names.contains("sluice.sink.latency"), names.toString());
    }

    @Test
    void runServesItsMetricsOnTheMetricsPort() throws Exception {
        Path pipeline = dir.resolve("gen.yaml");
        Files.writeString(pipeline, """
                sources:
                  bids: {type: generator, entity: bid, rate: 2000, batch_size: 100}
                sinks:
                  out: {type: blackhole, from: bids}
                """);
        Path log = dir.resolve("run.log");
        List<String> command = ChildJvm.command(
                "256m",
                "run",
                pipeline.toString(),
                "--state-dir",
                dir.resolve("state").toString(),
                "--metrics-port",
                "0");
        Process run = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .directory(new File(dir.toString()))
                .start();
        try {
            Pattern at = Pattern.compile("metrics at (http://\\S+)");
            String url = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (url == null && System.nanoTime() < deadline && run.isAlive()) {
                Matcher found = at.matcher(Files.readString(log));
                url = found.find() ? found.group(1) : null;
                Thread.sleep(50);
            }
            assertTrue(url != null, Files.readString(log));
            Map<String, String> bids = Map.of("pipeline", "gen", "node", "bids");
            double first = 0;
            while (first == 0 && System.nanoTime() < deadline) {
                Double value = sample(getFromChild(url, run, log, deadline), "sluice_node_rows_out_total", bids);
                first = value == null ? 0 : value;
                Thread.sleep(100);
            }
            assertTrue(first > 0, "no rows counted");
            Thread.sleep(1500);
            assertTrue(
                    sample(getFromChild(url, run, log, deadline), "sluice_node_rows_out_total", bids) > first,
                    "the counter does not move");
        } finally {
            run.destroyForcibly().waitFor();
        }
    }
}
