package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Location;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.StandardKeys;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * Validation of a pipeline graph: what {@link PipelineGraph} built may not run. Each check returns
 * (or throws) its problems as {@link ConfigException}s at the place in the file to fix.
 */
final class GraphValidation {

    private GraphValidation() {}

    /** Whether {@code node} emits rows another node can read. */
    static boolean produces(PipelineNode node) {
        return node.kind() != NodeKind.SINK;
    }

    /** Transforms and sinks that read nothing, or name an input that is no source or transform. */
    static List<ConfigException> inputs(Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>();
        for (PipelineNode node : nodes.values()) {
            if (node.kind() == NodeKind.SOURCE) {
                continue;
            }
            if (node.inputs.isEmpty()) {
                problems.add(new ConfigException(
                        node.spec.location(),
                        node.name(),
                        node.kind() == NodeKind.SINK
                                ? "a sink needs `from:` naming the node it reads"
                                : "this transform reads no input"));
            }
            for (String input : node.inputs) {
                PipelineNode upstream = nodes.get(input);
                Location where = locationOfInput(node, input);
                if (upstream == null) {
                    problems.add(new ConfigException(
                            where,
                            node.name(),
                            "reads '" + input
                                    + "', but the pipeline has no source or transform of that name (it has: "
                                    + String.join(", ", producers(nodes)) + ")"));
                } else if (!produces(upstream)) {
                    problems.add(new ConfigException(
                            where, node.name(), "reads '" + input + "', which is a sink; sinks emit nothing"));
                }
            }
        }
        return problems;
    }

    /** Sources and transforms nothing reads (once the edges are in). */
    static List<ConfigException> unread(Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>();
        for (PipelineNode node : nodes.values()) {
            if (produces(node) && node.downstream.isEmpty() && node.tableFeeds.isEmpty()) {
                problems.add(new ConfigException(
                        node.spec.location(),
                        node.name(),
                        "nothing reads this " + node.kind().word()
                                + "; name it in a transform's SQL, a sink's `from:` or a table's `from:`"));
            }
        }
        return problems;
    }

    /**
     * One problem per cycle of the graph (per strongly connected component with an edge inside),
     * naming exactly its nodes in the order the rows flow, e.g. {@code a → b → c → a}, at the place
     * where the first of them names its input.
     */
    static List<ConfigException> cycles(Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>();
        for (List<PipelineNode> component : Cycles.stronglyConnected(nodes.values())) {
            PipelineNode first = component.stream()
                    .min(Comparator.comparing(n -> n.spec.location()))
                    .orElseThrow();
            List<PipelineNode> cycle = Cycles.shortestThrough(first, new HashSet<>(component));
            if (cycle == null) {
                continue; // a single node that does not read itself
            }
            List<String> names =
                    new ArrayList<>(cycle.stream().map(PipelineNode::name).toList());
            names.add(first.name());
            PipelineNode last = cycle.get(cycle.size() - 1);
            problems.add(new ConfigException(
                    locationOfInput(first, last.name()),
                    first.name(),
                    "the pipeline has a cycle: " + String.join(" → ", names) + " (each node reads the one before it); "
                            + "rows cannot flow around a loop"));
        }
        return problems;
    }

    /**
     * How many lanes the nodes ask for: the largest {@code parallelism} of the sources whose type
     * supports lanes. Each lane is a full copy of the pipeline on its own thread.
     */
    static int laneCount(List<PipelineNode> nodes) {
        int lanes = 1;
        for (PipelineNode node : nodes) {
            if (node.kind() == NodeKind.SOURCE
                    && node.type.supportsLanes()
                    && node.type.config().key(StandardKeys.PARALLELISM).isPresent()) {
                lanes = Math.max(lanes, node.config.getInt(StandardKeys.PARALLELISM));
            }
        }
        return lanes;
    }

    /**
     * Lanes copy every node: with more than one, only types that declare they can be copied
     * ({@link StageType#supportsLanes}) qualify.
     *
     * @throws ConfigException at each node whose type cannot run in lanes
     */
    static void checkLanes(List<PipelineNode> order) {
        if (laneCount(order) == 1) {
            return;
        }
        List<ConfigException> problems = new ArrayList<>();
        for (PipelineNode node : order) {
            if (!node.type.supportsLanes()) {
                problems.add(new ConfigException(
                        node.spec.location(),
                        node.name(),
                        "parallelism > 1 runs a copy of every node per " + "lane, which a " + node.type.name() + " "
                                + node.kind().word() + " cannot be"));
            }
        }
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
    }

    private static Location locationOfInput(PipelineNode node, String input) {
        if (node.spec.from().contains(input)) {
            return node.spec.fromLocation(input);
        }
        Location sql = node.spec.locationOf(SqlTransform.Type.SQL);
        return sql != null ? sql : node.spec.location();
    }

    private static List<String> producers(Map<String, PipelineNode> nodes) {
        return nodes.values().stream()
                .filter(GraphValidation::produces)
                .map(PipelineNode::name)
                .toList();
    }
}
