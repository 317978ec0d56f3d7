package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Checks the structure of one node (a map with a string {@code type} and a valid {@code from}). */
final class NodeReader {

    private NodeReader() {}

    /** The node, or null after adding its problems to {@code problems}. */
    static NodeSpec read(
            NodeKind kind,
            String name,
            Location location,
            ConfigValue body,
            PathPolicy paths,
            ConfigProblems problems) {
        if (name.isBlank()) {
            problems.add(location, null, "a " + kind.word() + " needs a non-empty name");
            return null;
        }
        if (!body.isMap()) {
            problems.add(
                    body.isNull() ? location : body.location(),
                    name,
                    "expected a map with at least 'type', got " + body.describe());
            return null;
        }
        int before = problems.list().size();
        Map<String, ConfigValue> entries = body.asMap();
        ConfigValue type = entries.get(PipelineLoader.TYPE);
        if (type == null) {
            problems.add(location, name, "missing 'type'");
        } else if (!(type.value() instanceof String s) || s.isBlank()) {
            problems.add(type.location(), name, "'type' must be a non-empty string, got " + type.describe());
        }
        Map<String, Location> from = readFrom(kind, name, location, body, problems);
        return problems.list().size() == before ? new NodeSpec(kind, name, location, body, from, paths) : null;
    }

    private static Map<String, Location> readFrom(
            NodeKind kind, String name, Location location, ConfigValue body, ConfigProblems problems) {
        Map<String, Location> inputs = new LinkedHashMap<>();
        ConfigValue from = body.asMap().get(PipelineLoader.FROM);
        if (from == null) {
            // Sinks always read from something; whether a transform needs 'from' depends on its type.
            if (kind == NodeKind.SINK) {
                problems.add(location, name, "missing 'from': a sink must name the node(s) it reads from");
            }
            return inputs;
        }
        if (kind == NodeKind.SOURCE) {
            problems.add(
                    body.keyLocation(PipelineLoader.FROM),
                    name,
                    "a source does not take 'from'; sources read from outside the pipeline");
            return inputs;
        }
        List<ConfigValue> names = from.isList() ? from.asList() : List.of(from);
        if (names.isEmpty()) {
            problems.add(from.location(), name, "'from' must name at least one node");
        }
        for (ConfigValue input : names) {
            if (!(input.value() instanceof String s) || s.isBlank()) {
                String what = from.isList()
                        ? "'from' entries must be node names"
                        : "'from' must be a node name or a list of node names";
                problems.add(input.location(), name, what + ", got " + input.describe());
            } else if (inputs.putIfAbsent(s, input.location()) != null) {
                problems.add(input.location(), name, "'from' lists '" + s + "' twice");
            }
        }
        return inputs;
    }
}
