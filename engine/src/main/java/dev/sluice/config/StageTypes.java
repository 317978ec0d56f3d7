package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.ConfigDef;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The registry of stage types: what each {@code type:} of each node kind means. Filled at startup
 * with every {@link StageType} on the class path ({@link #installed}, via {@link ServiceLoader}: the
 * built-in connectors, the engine's {@code sql} transform, and plugins alike), it checks a pipeline's
 * nodes ({@link #typeOf}, {@link #parseAll}) and feeds the docs ({@link ConfigDocs}). The runtime
 * knows stage types only through it, never by class. Not meant to change while pipelines load.
 */
public final class StageTypes {

    private final Map<NodeKind, Map<String, StageType>> types = new EnumMap<>(NodeKind.class);

    /** An empty registry. */
    public StageTypes() {
        for (NodeKind kind : NodeKind.values()) {
            types.put(kind, new TreeMap<>());
        }
    }

    /**
     * The stage types listed in {@code META-INF/services/dev.sluice.plugin.StageType} of the class path.
     *
     * @throws IllegalStateException if one was built against another SPI version
     * @throws IllegalArgumentException if two share a kind and name, or one has a bad default
     */
    public static StageTypes installed() {
        StageTypes registry = new StageTypes();
        for (StageType type : ServiceLoader.load(StageType.class, StageTypes.class.getClassLoader())) {
            registry.register(type);
        }
        return registry;
    }

    /**
     * Adds a stage type after checking it was built against this engine's SPI version and that its
     * settings' definition is consistent (defaults convert and pass their validators).
     *
     * @throws IllegalStateException if {@code type} was built against another SPI version
     * @throws IllegalArgumentException if its kind already has a type of its name, or a default is bad
     */
    public StageTypes register(StageType type) {
        if (type.spiVersion() != StageType.SPI_VERSION) {
            throw new IllegalStateException("stage type '" + type.name() + "' ("
                    + type.getClass().getName()
                    + ") was built against version " + type.spiVersion() + " of the Sluice stage SPI, but this engine "
                    + "implements version " + StageType.SPI_VERSION + "; rebuild it against this engine's plugins-api");
        }
        Map<String, StageType> ofKind = types.get(type.kind());
        if (ofKind.containsKey(type.name())) {
            throw new IllegalArgumentException(
                    type.kind().word() + " type '" + type.name() + "' is already registered");
        }
        try {
            SettingsParser.check(type.config());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    type.kind().word() + " type '" + type.name() + "': " + e.getMessage(), e);
        }
        ofKind.put(type.name(), type);
        return this;
    }

    /**
     * A registry of these types plus {@code extra} (a pipeline's Java plugins); this one is unchanged.
     *
     * @throws IllegalStateException if one was built against another SPI version
     * @throws IllegalArgumentException if one has the kind and name of another
     */
    public StageTypes with(List<StageType> extra) {
        if (extra.isEmpty()) {
            return this;
        }
        StageTypes copy = new StageTypes();
        types.forEach((kind, ofKind) -> copy.types.get(kind).putAll(ofKind));
        extra.forEach(copy::register);
        return copy;
    }

    /** The registered types of {@code kind}, sorted by name. */
    public List<StageType> types(NodeKind kind) {
        return List.copyOf(types.get(kind).values());
    }

    /**
     * The stage type {@code node} names.
     *
     * @throws ConfigException at the node's {@code type} value, with suggestions, if none is registered
     */
    public StageType typeOf(NodeSpec node) {
        StageType type = types.get(node.kind()).get(node.type());
        if (type == null) {
            String word = node.kind().word();
            throw new ConfigException(
                    node.typeLocation(),
                    node.name(),
                    Suggestions.unknown(
                            "unknown " + word + " type '" + node.type() + "'",
                            node.type(),
                            types.get(node.kind()).keySet(),
                            word + " types"));
        }
        return type;
    }

    /** The settings definition of {@code node}'s type; a ConfigException as {@link #typeOf} if unknown. */
    public ConfigDef defFor(NodeSpec node) {
        return typeOf(node).config();
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
                parsed.put(node.name(), SettingsParser.parse(defFor(node), node));
            } catch (ConfigException e) {
                problems.add(e);
            }
        }
        problems.throwIfAny();
        return parsed;
    }
}
