package dev.sluice.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.observe.Inspections;
import dev.sluice.observe.NodeStats;
import dev.sluice.observe.RowSamples;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Live inspection over HTTP, for the service and for {@code run --inspect-port}: the page
 * ({@code inspect.html} beside this class, no build step), a JSON snapshot of a running
 * pipeline (nodes, counters, rates, lag, sampled rows) and the same as server-sent events once a
 * second. It reads {@link Inspections}; a pipeline that is not running is a 404.
 */
final class InspectApi {

    /** How often the event stream sends a snapshot. */
    static final long EVENT_INTERVAL_MILLIS = 1000;

    private static final ObjectMapper JSON = new ObjectMapper();

    private InspectApi() {}

    /** The routes, for {@link ServiceApi#handlers()} and the run's endpoint. */
    static Map<ServiceApi.Route, Handler> handlers() {
        Map<ServiceApi.Route, Handler> routes = new LinkedHashMap<>();
        routes.put(new ServiceApi.Route("get", "/inspect/{name}"), InspectApi::page);
        routes.put(new ServiceApi.Route("get", "/inspect/{name}/state"), InspectApi::state);
        routes.put(new ServiceApi.Route("get", "/inspect/{name}/events"), InspectApi::events);
        return routes;
    }

    private static void page(Context ctx) throws IOException {
        try (InputStream page = InspectApi.class.getResourceAsStream("inspect.html")) {
            if (page == null) {
                throw new IllegalStateException("inspect.html is missing from the JAR");
            }
            ctx.contentType("text/html; charset=utf-8").result(page.readAllBytes());
        }
    }

    private static void state(Context ctx) {
        String name = ctx.pathParam("name");
        Inspections.View view = Inspections.find(name)
                .orElseThrow(() -> new PipelineNotFoundException("no running pipeline '" + name + "'"
                        + (Inspections.names().isEmpty()
                                ? ""
                                : "; running: " + String.join(", ", Inspections.names()))));
        ctx.contentType("application/json")
                .result(new Snapshots().next(view, new HashMap<>()).toPrettyString() + "\n");
    }

    /**
     * Sends a snapshot every second until the client goes away or the server stops: rates against
     * the previous snapshot, and only the sampled rows this client has not been sent. Written
     * straight to the response on the request's own thread (the server's pool, so stopping the
     * server ends it); the first failed write ends the stream quietly.
     */
    private static void events(Context ctx) {
        String name = ctx.pathParam("name");
        ctx.status(200).contentType("text/event-stream; charset=utf-8").header("Cache-Control", "no-cache");
        Snapshots snapshots = new Snapshots();
        Map<String, Long> sentSeq = new HashMap<>();
        try {
            OutputStream out = ctx.res().getOutputStream();
            while (true) {
                Inspections.View view = Inspections.find(name).orElse(null);
                String event;
                if (view == null) {
                    event = "event: waiting\ndata: "
                            + JSON.createObjectNode()
                                    .put("pipeline", name)
                                    .put("message", "pipeline '" + name + "' is not running")
                            + "\n\n";
                    snapshots = new Snapshots();
                    sentSeq.clear();
                } else {
                    event = "event: snapshot\ndata: " + snapshots.next(view, sentSeq) + "\n\n";
                }
                out.write(event.getBytes(StandardCharsets.UTF_8));
                out.flush();
                Thread.sleep(EVENT_INTERVAL_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the server is stopping
        } catch (IOException | RuntimeException e) {
            // The client went away (or the server stopped under us): nothing to report to anyone.
        }
    }

    /** Builds snapshots of one viewer, remembering the last one's counts for the rates. */
    static final class Snapshots {
        private final Map<String, Long> previousOut = new HashMap<>();
        private long previousNanos;
        private Inspections.View previousView;

        /** A snapshot of {@code view}; samples after {@code sentSeq}'s numbers, which it advances. */
        ObjectNode next(Inspections.View view, Map<String, Long> sentSeq) {
            long now = System.nanoTime();
            boolean rates = previousView == view && previousNanos != 0;
            double seconds = (now - previousNanos) / 1e9;
            Map<String, Map<String, Long>> lag = view.lag().get();
            ObjectNode body = JSON.createObjectNode()
                    .put("pipeline", view.pipeline())
                    .put("at", System.currentTimeMillis())
                    .put("records_in", view.stats().recordsIn())
                    .put("records_out", view.stats().recordsOut())
                    .put("run_seconds", Math.round(view.stats().elapsedSeconds() * 10) / 10.0);
            ArrayNode nodes = body.putArray("nodes");
            for (Inspections.Node node : view.nodes()) {
                NodeStats stats = view.stats().node(node.name());
                ObjectNode out = nodes.addObject()
                        .put("name", node.name())
                        .put("kind", node.kind())
                        .put("type", node.type());
                node.inputs().forEach(out.putArray("inputs")::add);
                long rowsOut = node.kind().equals("sink") ? stats.rowsIn() : stats.rowsOut();
                out.put("rows_in", stats.rowsIn())
                        .put("rows_out", stats.rowsOut())
                        .put("rejected", stats.rejected());
                if (rates && seconds > 0) {
                    long before = previousOut.getOrDefault(node.name(), rowsOut);
                    out.put("rows_per_second", Math.round((rowsOut - before) / seconds));
                } else {
                    out.putNull("rows_per_second");
                }
                previousOut.put(node.name(), rowsOut);
                if (stats.lastBatchMillis() > 0) {
                    out.put("last_batch_millis", stats.lastBatchMillis());
                } else {
                    out.putNull("last_batch_millis");
                }
                Map<String, Long> partitions = lag.get(node.name());
                if (partitions != null && !partitions.isEmpty()) {
                    out.put(
                            "lag",
                            partitions.values().stream()
                                    .mapToLong(Long::longValue)
                                    .sum());
                }
                RowSamples samples = stats.samples();
                out.put("sample_rows_per_window", samples.rowsPerWindow());
                ArrayNode rows = out.putArray("samples");
                long after = sentSeq.getOrDefault(node.name(), 0L);
                for (RowSamples.Row row : samples.since(after)) {
                    rows.addObject()
                            .put("seq", row.seq())
                            .put("at", row.atMillis())
                            .set("row", parse(row.json()));
                    after = row.seq();
                }
                sentSeq.put(node.name(), after);
            }
            previousNanos = now;
            previousView = view;
            return body;
        }

        private static JsonNode parse(String json) {
            try {
                return JSON.readTree(json);
            } catch (IOException e) {
                return JSON.getNodeFactory().textNode(json);
            }
        }
    }
}
