package dev.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code sluice inspect} shows, apart from how it is drawn: the nodes as tabs with their
 * counts, the sampled rows of the selected node as pretty JSON (newest first, filtered by the
 * search), a scroll position, and a pause that freezes the view while snapshots keep arriving.
 * The event reader calls {@link #accept}; the UI thread everything else (both synchronized).
 */
final class InspectModel {

    /** Rows kept per node; older ones drop off. */
    static final int KEEP_ROWS = 200;

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());

    /** A node's latest counts and its rows, newest last. */
    private static final class NodeView {
        JsonNode counts;
        final List<JsonNode> rows = new ArrayList<>();
    }

    private final Map<String, NodeView> nodes = new LinkedHashMap<>();
    private JsonNode snapshot;
    private String waiting;
    private int selected;
    private int scroll;
    private String search = "";
    private List<String> frozen;

    /** A snapshot event: counts replace the old ones, rows are appended. */
    synchronized void accept(JsonNode next) {
        snapshot = next;
        waiting = null;
        for (JsonNode node : next.path("nodes")) {
            NodeView view = nodes.computeIfAbsent(node.path("name").asText(), k -> new NodeView());
            view.counts = node;
            node.path("samples").forEach(view.rows::add);
            if (view.rows.size() > KEEP_ROWS) {
                view.rows.subList(0, view.rows.size() - KEEP_ROWS).clear();
            }
        }
    }

    /** A waiting event: the pipeline is not running (yet). */
    synchronized void waiting(String message) {
        waiting = message;
    }

    synchronized List<String> tabs() {
        return List.copyOf(nodes.keySet());
    }

    synchronized int selected() {
        return selected;
    }

    synchronized void moveTab(int by) {
        if (!nodes.isEmpty()) {
            selected = Math.floorMod(selected + by, nodes.size());
            scroll = 0;
            if (frozen != null) {
                frozen = lines();
            }
        }
    }

    synchronized void scroll(int by) {
        scroll = Math.max(0, Math.min(scroll + by, Math.max(0, currentLines().size() - 1)));
    }

    synchronized void search(String text) {
        search = text == null ? "" : text;
        scroll = 0;
        if (frozen != null) {
            frozen = lines();
        }
    }

    synchronized String searchText() {
        return search;
    }

    synchronized void togglePause() {
        frozen = frozen == null ? lines() : null;
    }

    synchronized boolean paused() {
        return frozen != null;
    }

    /** The content lines from the scroll position on. */
    synchronized List<String> visibleLines() {
        List<String> all = currentLines();
        return all.subList(Math.min(scroll, all.size()), all.size());
    }

    private List<String> currentLines() {
        return frozen != null ? frozen : lines();
    }

    /** The selected node's rows, newest first, as a header line and pretty JSON each. */
    private List<String> lines() {
        List<String> lines = new ArrayList<>();
        if (nodes.isEmpty()) {
            return lines;
        }
        NodeView node = new ArrayList<>(nodes.values()).get(selected);
        String needle = search.toLowerCase(Locale.ROOT);
        for (int i = node.rows.size() - 1; i >= 0; i--) {
            JsonNode sample = node.rows.get(i);
            String pretty = sample.path("row").toPrettyString();
            if (!needle.isEmpty() && !pretty.toLowerCase(Locale.ROOT).contains(needle)) {
                continue;
            }
            lines.add("#" + sample.path("seq").asLong() + "  "
                    + TIME.format(Instant.ofEpochMilli(sample.path("at").asLong())));
            lines.addAll(pretty.lines().toList());
        }
        if (lines.isEmpty()) {
            lines.add(needle.isEmpty() ? "(no rows sampled yet)" : "(no sampled row contains '" + search + "')");
        }
        return lines;
    }

    /** A tab's label: name, kind and its row count. */
    synchronized String tabLabel(String name) {
        JsonNode counts = nodes.get(name).counts;
        boolean sink = counts.path("kind").asText().equals("sink");
        return String.format(
                Locale.ROOT,
                "%s %s %,d",
                name,
                counts.path("kind").asText(),
                sink ? counts.path("rows_in").asLong() : counts.path("rows_out").asLong());
    }

    /** The status line: totals, the selected node's rate, last-record age, lag. */
    synchronized String status(long nowMillis) {
        if (waiting != null) {
            return waiting;
        }
        if (snapshot == null) {
            return "connecting…";
        }
        StringBuilder line = new StringBuilder(String.format(
                Locale.ROOT,
                "in %,d · out %,d",
                snapshot.path("records_in").asLong(),
                snapshot.path("records_out").asLong()));
        if (!nodes.isEmpty()) {
            JsonNode counts = new ArrayList<>(nodes.values()).get(selected).counts;
            if (counts.path("rows_per_second").isNumber()) {
                line.append(String.format(
                        Locale.ROOT,
                        " · %,d rows/s",
                        counts.path("rows_per_second").asLong()));
            }
            if (counts.has("lag")) {
                line.append(String.format(
                        Locale.ROOT, " · lag %,d", counts.path("lag").asLong()));
            }
        }
        long newest = 0;
        for (NodeView node : nodes.values()) {
            newest = Math.max(newest, node.counts.path("last_batch_millis").asLong(0));
        }
        line.append(
                newest == 0
                        ? " · no record yet"
                        : String.format(Locale.ROOT, " · last record %.1f s ago", (nowMillis - newest) / 1000.0));
        return line.toString();
    }
}
