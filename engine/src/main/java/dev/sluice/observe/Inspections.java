package dev.sluice.observe;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The running pipelines the inspector can look at (the web page, {@code sluice inspect}): each
 * run registers its graph, counters and sampled rows while it runs, as it registers its meters
 * with {@link Metrics}. The HTTP layer reads this; the runtime never knows who is looking.
 */
public final class Inspections {

    /** A node as the inspector draws it: {@code kind} is source, transform or sink. */
    public record Node(String name, String kind, String type, List<String> inputs) {
        public Node {
            inputs = List.copyOf(inputs);
        }
    }

    /** One run of a pipeline: its nodes in topological order, counters and lag by source and partition. */
    public record View(
            String pipeline, List<Node> nodes, RunStats stats, Supplier<Map<String, Map<String, Long>>> lag) {
        public View {
            nodes = List.copyOf(nodes);
        }
    }

    private static final Map<String, View> RUNNING = new ConcurrentHashMap<>();

    private Inspections() {}

    /** Hides a run again when closed. */
    public interface Registration extends AutoCloseable {
        @Override
        void close();
    }

    /** Makes a run visible; the returned handle hides it again (a later run of the name replaces it). */
    public static Registration register(View view) {
        RUNNING.put(view.pipeline(), view);
        return () -> RUNNING.remove(view.pipeline(), view);
    }

    public static Optional<View> find(String pipeline) {
        return Optional.ofNullable(RUNNING.get(pipeline));
    }

    /** Names of the running pipelines, sorted. */
    public static List<String> names() {
        return RUNNING.keySet().stream().sorted().toList();
    }
}
