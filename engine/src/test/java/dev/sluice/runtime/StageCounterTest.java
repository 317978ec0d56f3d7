package dev.sluice.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.observe.NodeStats;
import dev.sluice.plugin.Delivery;
import dev.sluice.plugin.StageCounter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a stage may name its own counters (StageContext.counter), and where they count. */
class StageCounterTest {

    private final NodeStats stats = new NodeStats("score", null);

    private NodeContext context() {
        return new NodeContext(
                "score",
                "p",
                null,
                null,
                stats,
                null,
                null,
                Map.of(),
                null,
                List.of(),
                Delivery.AT_LEAST_ONCE,
                Duration.ofSeconds(10),
                null);
    }

    @Test
    void namesOfSluicesOwnOrOfOnePartAndTheNodesTagsAreRefused() {
        for (String name : List.of(
                "requests",
                "node.rows",
                "checkpoints.done",
                "checkpoint.x",
                "source.lag",
                "sink.x",
                "table.rows",
                "Http.requests",
                "http..requests",
                "http.requests_total",
                "http.")) {
            assertThrows(IllegalArgumentException.class, () -> context().counter(name, "", Map.of()), name);
        }
        for (String tag : List.of("pipeline", "node", "Result", "")) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> context().counter("http.requests", "", Map.of(tag, "x")),
                    tag);
        }
    }

    @Test
    void oneNameAndTagsAreOneCountAcrossLanes() {
        StageCounter lane0 = context().counter("http.requests", "Requests", Map.of("result", "ok"));
        StageCounter lane1 = context().counter("http.requests", "Requests", Map.of("result", "ok"));
        StageCounter refused = context().counter("http.requests", "Requests", Map.of("result", "refused"));
        lane0.add(2);
        lane1.increment();
        refused.increment();
        Map<Map<String, String>, Long> counts = new java.util.HashMap<>();
        stats.stageCounts().forEach(c -> counts.put(c.tags(), c.count().sum()));
        assertEquals(Map.of(Map.of("result", "ok"), 3L, Map.of("result", "refused"), 1L), counts);
    }
}
