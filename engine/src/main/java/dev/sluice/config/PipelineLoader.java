package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a pipeline file and checks its structure: the top-level keys, that each block maps node
 * names to nodes, that every node has a {@code type}, that {@code from} names nodes, and that node
 * names are unique. It knows nothing about particular stage types (that is {@link StageTypes}' job)
 * nor whether {@code from} names exist (the engine resolves the graph).
 *
 * <p>All structural problems in a file are reported together in one {@link ConfigException};
 * only a YAML syntax error stops the reading at once.
 */
public final class PipelineLoader {

    /** The top-level {@code plugins:} block (read by {@code pluginhost.PluginSettings}). */
    public static final String PLUGINS = "plugins";

    /**
     * The top-level keys a pipeline file may have, in the order messages list them. Pipeline-wide
     * settings are added here as the engine grows (e.g. {@code checkpoint}); any other key is an error,
     * so that a misspelt block is not silently ignored.
     */
    public static final List<String> TOP_LEVEL_KEYS = List.of(
            "name",
            "checkpoint",
            "restart",
            "delivery",
            "inspect",
            "tables",
            PathPolicy.KEY,
            PLUGINS,
            "sources",
            "transforms",
            "sinks");

    static final String TYPE = "type";
    static final String FROM = "from";
    private static final String NAME = "name";

    private PipelineLoader() {}

    /**
     * Reads and checks the pipeline file at {@code file} (UTF-8).
     *
     * @throws ConfigException if the file cannot be read or has structural problems
     */
    public static PipelineSpec load(Path file) {
        return parse(read(file), file);
    }

    /**
     * The text of the pipeline file at {@code file} (UTF-8).
     *
     * @throws ConfigException if it cannot be read
     */
    public static String read(Path file) {
        String yaml;
        try {
            yaml = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException(Location.of(file), "pipeline file not found");
        } catch (AccessDeniedException e) {
            throw new ConfigException(Location.of(file), "cannot read pipeline file: permission denied");
        } catch (CharacterCodingException e) {
            throw new ConfigException(Location.of(file), "cannot read pipeline file: it is not valid UTF-8 text");
        } catch (IOException e) {
            String detail = Files.isDirectory(file) ? "it is a directory" : String.valueOf(e.getMessage());
            throw new ConfigException(Location.of(file), "cannot read pipeline file: " + detail);
        }
        return yaml;
    }

    /**
     * The top-level entry {@code key} of pipeline YAML, read without any other check (for blocks
     * needed before the file is checked, such as the preprocessors that rewrite it); null when
     * it is absent or the text is no YAML map (parsing it reports that).
     */
    public static ConfigValue rawTopLevel(String yaml, Path file, String key) {
        ConfigValue root = rawTree(yaml, file);
        return root != null && root.isMap() ? root.asMap().get(key) : null;
    }

    /** The whole YAML tree of pipeline text, read without any check; null when it is not YAML. */
    public static ConfigValue rawTree(String yaml, Path file) {
        ConfigProblems ignored = new ConfigProblems();
        String text = yaml.startsWith("\uFEFF") ? yaml.substring(1) : yaml;
        try {
            return YamlTreeReader.read(text, file, new ReaderProblems(ignored));
        } catch (ConfigException e) {
            return null;
        }
    }

    /**
     * Checks pipeline YAML given as text; {@code file} is used for locations, the default name and
     * resolving relative paths, and need not exist.
     *
     * @throws ConfigException if the text is not valid YAML or has structural problems
     */
    public static PipelineSpec parse(String yaml, Path file) {
        ConfigProblems problems = new ConfigProblems();
        // A byte order mark is invisible in editors; drop it rather than report it.
        String text = yaml.startsWith("\uFEFF") ? yaml.substring(1) : yaml;
        ConfigValue root = YamlTreeReader.read(text, file, new ReaderProblems(problems));
        if (root == null) {
            throw new ConfigException(
                    Location.of(file),
                    "pipeline file is empty; expected a map with " + String.join(", ", TOP_LEVEL_KEYS));
        }
        if (!root.isMap()) {
            problems.add(
                    root.location(),
                    null,
                    "the top level must be a map with " + String.join(", ", TOP_LEVEL_KEYS) + ", got "
                            + root.describe());
            problems.throwIfAny();
        }
        Map<String, ConfigValue> top = root.asMap();
        for (String key : top.keySet()) {
            if (!TOP_LEVEL_KEYS.contains(key)) {
                problems.add(
                        root.keyLocation(key),
                        null,
                        Suggestions.unknown(
                                "unknown top-level key '" + key + "'", key, TOP_LEVEL_KEYS, "top-level keys"));
            }
        }
        String name = pipelineName(top.get(NAME), file, problems);
        PathPolicy paths = PathPolicy.read(top.get(PathPolicy.KEY), file, problems);
        Map<NodeKind, Map<String, NodeSpec>> nodes = new HashMap<>();
        Map<String, NodeSpec> byName = new HashMap<>();
        for (NodeKind kind : NodeKind.values()) {
            Map<String, NodeSpec> block = readBlock(kind, top.get(kind.blockName()), paths, problems);
            block.values().forEach(node -> checkUnique(node, byName, problems));
            nodes.put(kind, block);
        }
        problems.throwIfAny();
        return new PipelineSpec(
                file,
                name,
                nodes.get(NodeKind.SOURCE),
                nodes.get(NodeKind.TRANSFORM),
                nodes.get(NodeKind.SINK),
                top,
                paths);
    }

    private static String pipelineName(ConfigValue value, Path file, ConfigProblems problems) {
        if (value != null && value.value() instanceof String name && !name.isBlank()) {
            return name;
        }
        if (value != null) {
            problems.add(value.location(), null, "'name' must be a non-empty string, got " + value.describe());
        }
        String fileName =
                file.getFileName() == null ? "pipeline" : file.getFileName().toString();
        int dot = fileName.lastIndexOf('.');
        return dot > 0 ? fileName.substring(0, dot) : fileName;
    }

    private static Map<String, NodeSpec> readBlock(
            NodeKind kind, ConfigValue block, PathPolicy paths, ConfigProblems problems) {
        Map<String, NodeSpec> nodes = new LinkedHashMap<>();
        // An empty block ("sinks:" with nothing under it) means no nodes of that kind.
        if (block == null || block.isNull()) {
            return nodes;
        }
        if (!block.isMap()) {
            problems.add(
                    block.location(),
                    null,
                    "'" + kind.blockName() + "' must be a map of node names to " + kind.word() + " definitions, got "
                            + block.describe());
            return nodes;
        }
        block.asMap().forEach((name, body) -> {
            NodeSpec node = NodeReader.read(kind, name, block.keyLocation(name), body, paths, problems);
            if (node != null) {
                nodes.put(name, node);
            }
        });
        return nodes;
    }

    private static void checkUnique(NodeSpec node, Map<String, NodeSpec> byName, ConfigProblems problems) {
        NodeSpec first = byName.putIfAbsent(node.name(), node);
        if (first != null) {
            problems.add(node.location(), node.name(), duplicateNodeReason(first.kind(), first.location()));
        }
    }

    static String duplicateNodeReason(NodeKind firstKind, Location first) {
        return "name already used by the " + firstKind.word() + " at line " + first.line()
                + "; node names must be unique across sources, transforms and sinks";
    }

    /** Attributes reader problems to the node whose subtree they are in. */
    private record ReaderProblems(ConfigProblems problems) implements YamlTreeReader.Problems {

        @Override
        public void duplicateKey(List<String> path, String key, Location location, Location first) {
            if (path.size() == 1 && NodeKind.fromBlockName(path.getFirst()).isPresent()) {
                NodeKind kind = NodeKind.fromBlockName(path.getFirst()).orElseThrow();
                problems.add(location, key, duplicateNodeReason(kind, first));
            } else {
                problems.add(
                        location, nodeOf(path), "duplicate key '" + key + "'; first defined at line " + first.line());
            }
        }

        @Override
        public void problem(List<String> path, Location location, String reason) {
            problems.add(location, nodeOf(path), reason);
        }

        private static String nodeOf(List<String> path) {
            boolean inNode =
                    path.size() >= 2 && NodeKind.fromBlockName(path.getFirst()).isPresent();
            return inNode ? path.get(1) : null;
        }
    }
}
