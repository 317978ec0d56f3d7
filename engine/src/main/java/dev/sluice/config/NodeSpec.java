package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One node of a pipeline file as written, before anything is known about its type: its kind, name,
 * {@code type}, {@code from} inputs and remaining settings, each with its location. The structure
 * has been checked by {@link PipelineLoader}; the settings are checked against the type's
 * {@link ConfigDef}.
 */
public final class NodeSpec {

    private final NodeKind kind;
    private final String name;
    private final Location location;
    private final ConfigValue body;
    private final String type;
    private final List<String> from;
    private final Map<String, Location> fromLocations;
    private final Map<String, ConfigValue> settings;
    private final PathPolicy paths;

    /**
     * Made by {@link PipelineLoader} once the structure is known to be valid.
     *
     * @param body the node's map, holding at least a string {@code type}
     * @param fromLocations the inputs named by {@code from}, in order, with the location of each name
     * @param paths the pipeline's allowed directories, which every PATH setting of the node must stay inside
     */
    NodeSpec(
            NodeKind kind,
            String name,
            Location location,
            ConfigValue body,
            Map<String, Location> fromLocations,
            PathPolicy paths) {
        this.kind = kind;
        this.name = name;
        this.location = location;
        this.body = body;
        this.type = (String) body.asMap().get(PipelineLoader.TYPE).value();
        this.fromLocations = Collections.unmodifiableMap(new LinkedHashMap<>(fromLocations));
        this.from = List.copyOf(fromLocations.keySet());
        Map<String, ConfigValue> rest = new LinkedHashMap<>(body.asMap());
        rest.remove(PipelineLoader.TYPE);
        rest.remove(PipelineLoader.FROM);
        this.settings = Collections.unmodifiableMap(rest);
        this.paths = paths;
    }

    /** The directories this node's files must stay inside (the pipeline's {@code paths.allowed_dirs}). */
    public PathPolicy paths() {
        return paths;
    }

    /** Whether this is a source, transform or sink. */
    public NodeKind kind() {
        return kind;
    }

    /** The node's name, its key in the block (names may contain dots, e.g. {@code raw.transactions}). */
    public String name() {
        return name;
    }

    /** The node's {@code type}, e.g. {@code generator}. */
    public String type() {
        return type;
    }

    /** Where the node's name was written. */
    public Location location() {
        return location;
    }

    /** Where the value of {@code type} was written, for "unknown type" errors. */
    public Location typeLocation() {
        return body.asMap().get(PipelineLoader.TYPE).location();
    }

    /** The names listed in {@code from}, in order; empty if the node has no {@code from}. */
    public List<String> from() {
        return from;
    }

    /**
     * Where the input {@code name} was written in {@code from}, for "no such node" errors; the node's
     * location if {@code from} does not list it.
     */
    public Location fromLocation(String name) {
        return fromLocations.getOrDefault(name, location);
    }

    /** All keys except {@code type} and {@code from}, in the order written. */
    public Map<String, ConfigValue> settings() {
        return settings;
    }

    /**
     * Where {@code key} (any key of the node, including {@code type} and {@code from}) was written;
     * the node's location if the key is absent.
     */
    public Location locationOf(String key) {
        return body.asMap().containsKey(key) ? body.keyLocation(key) : location;
    }

    /** E.g. {@code source 'bid' (generator)}. */
    @Override
    public String toString() {
        return kind.word() + " '" + name + "' (" + type + ")";
    }
}
