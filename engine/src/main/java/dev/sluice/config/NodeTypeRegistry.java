package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.config.ConfigDef;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The node types the engine knows, by kind, each with the {@link ConfigDef} of its settings and a
 * doc. Used to check a pipeline's nodes ({@link #parseAll}) and to generate docs ({@link ConfigDocs}).
 * Types are registered once at startup; the registry is not meant to change while pipelines load.
 */
public final class NodeTypeRegistry {

    /**
     * One registered node type.
     *
     * @param kind whether it is a source, transform or sink type
     * @param type the name written as {@code type:} in pipeline files
     * @param def the settings it accepts
     * @param doc what it does, for the docs (Markdown)
     */
    public record NodeType(NodeKind kind, String type, ConfigDef def, String doc) {
        /** Checks the parts; a null doc becomes empty. */
        public NodeType {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(def, "def");
            doc = doc == null ? "" : doc;
        }
    }

    private final Map<NodeKind, Map<String, NodeType>> types = new EnumMap<>(NodeKind.class);

    /** An empty registry. */
    public NodeTypeRegistry() {
        for (NodeKind kind : NodeKind.values()) {
            types.put(kind, new TreeMap<>());
        }
    }

    /**
     * Registers a node type.
     *
     * @throws IllegalArgumentException if {@code kind} already has a type called {@code type}
     */
    public NodeTypeRegistry register(NodeKind kind, String type, ConfigDef def, String doc) {
        NodeType nodeType = new NodeType(kind, type, def, doc);
        if (types.get(kind).putIfAbsent(type, nodeType) != null) {
            throw new IllegalArgumentException(kind.word() + " type '" + type + "' is already registered");
        }
        return this;
    }

    /** The type {@code type} of {@code kind}, if registered. */
    public Optional<NodeType> find(NodeKind kind, String type) {
        return Optional.ofNullable(types.get(kind).get(type));
    }

    /** The registered types of {@code kind}, sorted by name. */
    public List<NodeType> types(NodeKind kind) {
        return List.copyOf(types.get(kind).values());
    }

    /**
     * The settings definition for {@code node}'s type.
     *
     * @throws ConfigException at the node's {@code type} value if the type is not registered
     */
    public ConfigDef defFor(NodeSpec node) {
        NodeType nodeType = types.get(node.kind()).get(node.type());
        if (nodeType == null) {
            String word = node.kind().word();
            throw new ConfigException(node.typeLocation(), node.name(), Suggestions.unknown(
                    "unknown " + word + " type '" + node.type() + "'", node.type(),
                    types.get(node.kind()).keySet(), word + " types"));
        }
        return nodeType.def();
    }

    /**
     * Checks and converts one node's settings.
     *
     * @throws ConfigException if the type is unknown or the settings have problems
     */
    public ParsedConfig parse(NodeSpec node) {
        return SettingsParser.parse(defFor(node), node);
    }

    /**
     * Checks and converts the settings of every node of {@code pipeline}.
     *
     * @return each node's settings by node name, in {@link PipelineSpec#allNodes()} order
     * @throws ConfigException listing the problems of all nodes, not only the first bad one
     */
    public Map<String, ParsedConfig> parseAll(PipelineSpec pipeline) {
        ConfigProblems problems = new ConfigProblems();
        Map<String, ParsedConfig> parsed = new LinkedHashMap<>();
        for (NodeSpec node : pipeline.allNodes()) {
            try {
                parsed.put(node.name(), parse(node));
            } catch (ConfigException e) {
                problems.add(e);
            }
        }
        problems.throwIfAny();
        return parsed;
    }
}
