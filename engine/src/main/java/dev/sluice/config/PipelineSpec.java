package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pipeline file after its structure has been checked: its nodes by kind, each in the order
 * written, plus the raw top-level entries for settings that concern the pipeline as a whole.
 * Node types and graph edges are not checked yet; see {@link StageTypes} for the former.
 *
 * @param file the pipeline file
 * @param name the {@code name} key, or the file name without its extension
 * @param sources sources by name
 * @param transforms transforms by name
 * @param sinks sinks by name
 * @param topLevel every top-level entry as written (including {@code sources} and the other
 *     blocks), for pipeline-wide settings such as a future {@code checkpoint}
 * @param paths the directories its files must stay inside ({@code paths.allowed_dirs})
 */
public record PipelineSpec(
        Path file,
        String name,
        Map<String, NodeSpec> sources,
        Map<String, NodeSpec> transforms,
        Map<String, NodeSpec> sinks,
        Map<String, ConfigValue> topLevel,
        PathPolicy paths) {

    /** Checks the file and name are given and makes the maps immutable, keeping their order. */
    public PipelineSpec {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(paths, "paths");
        sources = ordered(sources);
        transforms = ordered(transforms);
        sinks = ordered(sinks);
        topLevel = ordered(topLevel);
    }

    /** The node called {@code name} of any kind, or null if there is none. */
    public NodeSpec node(String name) {
        for (Map<String, NodeSpec> nodes : List.of(sources, transforms, sinks)) {
            NodeSpec node = nodes.get(name);
            if (node != null) {
                return node;
            }
        }
        return null;
    }

    /** The nodes of one kind, by name, in the order written. */
    public Map<String, NodeSpec> nodes(NodeKind kind) {
        return switch (kind) {
            case SOURCE -> sources;
            case TRANSFORM -> transforms;
            case SINK -> sinks;
        };
    }

    /** All nodes: sources, then transforms, then sinks, each in the order written. */
    public List<NodeSpec> allNodes() {
        List<NodeSpec> all = new ArrayList<>(sources.values());
        all.addAll(transforms.values());
        all.addAll(sinks.values());
        return List.copyOf(all);
    }

    private static <V> Map<String, V> ordered(Map<String, V> map) {
        return Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(map)));
    }
}
