package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.NodeSpec;
import dev.sluice.config.ParsedConfig;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.SettingsParser;
import dev.sluice.config.StageTypes;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Graph building: a pipeline file's nodes with their stage types and checked settings, joined by
 * edges from each input to its reader, in topological order. What makes a graph wrong is
 * {@link GraphValidation}'s business; opening the stages is {@link Pipeline}'s.
 */
final class PipelineGraph {

    private PipelineGraph() {}

    /**
     * Links the {@link #configure configured} nodes by their inputs and orders them topologically,
     * after {@link GraphValidation} found nothing wrong with them.
     *
     * @throws ConfigException naming file, line, node and reason for every problem found
     */
    static List<PipelineNode> link(Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>(GraphValidation.inputs(nodes));
        connect(nodes);
        // An input name that is wrong leaves its intended upstream unread: say that only when all names resolve.
        if (problems.isEmpty()) {
            problems.addAll(GraphValidation.unread(nodes));
        }
        problems.addAll(GraphValidation.cycles(nodes));
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
        List<PipelineNode> order = topologicalOrder(nodes);
        GraphValidation.checkLanes(order);
        return order;
    }

    /**
     * Each node of {@code spec} with its stage type, settings parsed against the type's definition,
     * and input names; by name, in file order.
     *
     * @throws ConfigException with the problems of every node, not only the first bad one
     */
    static Map<String, PipelineNode> configure(PipelineSpec spec, StageTypes types) {
        // The SQL names dynamic tables like upstream nodes; they are not inputs.
        java.util.Set<String> tables = DynamicTables.names(spec);
        List<ConfigException> problems = new ArrayList<>();
        Map<String, PipelineNode> nodes = new LinkedHashMap<>();
        for (NodeSpec node : spec.allNodes()) {
            try {
                StageType type = types.typeOf(node);
                type.prepare();
                ParsedConfig config = SettingsParser.parse(type.config(), node);
                List<String> inputs = inputsOf(node, type, config).stream()
                        .filter(input -> !tables.contains(input))
                        .toList();
                nodes.put(node.name(), new PipelineNode(node, type, config, inputs));
            } catch (ConfigException e) {
                problems.addAll(e.problems());
            }
        }
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
        return nodes;
    }

    private static List<String> inputsOf(NodeSpec node, StageType type, ParsedConfig config) {
        try {
            return type.inputs(node.from(), config);
        } catch (InvalidSettingException e) {
            throw Pipeline.at(node, e.key(), e.getMessage());
        }
    }

    /** An edge from each input that names a producing node to its reader; other inputs are validation's problems. */
    private static void connect(Map<String, PipelineNode> nodes) {
        for (PipelineNode node : nodes.values()) {
            if (node.kind() == NodeKind.SOURCE) {
                continue;
            }
            for (int i = 0; i < node.inputs.size(); i++) {
                PipelineNode upstream = nodes.get(node.inputs.get(i));
                if (upstream != null && GraphValidation.produces(upstream)) {
                    upstream.downstream.add(new PipelineNode.Edge(node, i));
                }
            }
        }
    }

    private static List<PipelineNode> topologicalOrder(Map<String, PipelineNode> nodes) {
        Map<PipelineNode, Integer> pending = new HashMap<>();
        Deque<PipelineNode> ready = new ArrayDeque<>();
        for (PipelineNode node : nodes.values()) {
            pending.put(node, node.inputs.size());
            if (node.inputs.isEmpty()) {
                ready.add(node);
            }
        }
        List<PipelineNode> order = new ArrayList<>();
        while (!ready.isEmpty()) {
            PipelineNode node = ready.poll();
            order.add(node);
            for (PipelineNode.Edge edge : node.downstream) {
                if (pending.merge(edge.to(), -1, Integer::sum) == 0) {
                    ready.add(edge.to());
                }
            }
        }
        if (order.size() < nodes.size()) {
            throw new IllegalStateException(
                    "cycles are reported before ordering: " + nodes.keySet() + " ordered as " + order);
        }
        return order;
    }
}
