package dev.sluice.config;

import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigKey;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Validator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Checks and converts a node's settings against its type's {@link ConfigDef} (the SPI's declaration)
 * into a {@link ParsedConfig}: the engine's side of the config-spec API, which knows where each
 * value was written ({@link ConfigValue}) and which directories a path may name ({@link PathPolicy}).
 */
public final class SettingsParser {

    private SettingsParser() {}

    /**
     * Checks a definition as a whole: every default converts to its key's type and passes its
     * validator. Called when a stage type is registered, so that a mistake in a type's definition
     * fails at startup rather than when a user happens to rely on the default.
     *
     * @throws IllegalArgumentException naming the key and its bad default
     */
    public static ConfigDef check(ConfigDef def) {
        for (ConfigKey key : def.keys()) {
            if (key.type() == ConfigType.SECTIONS) {
                check(key.sections());
            } else if (key.defaultValue() != null) {
                defaultOf(key);
            }
        }
        return def;
    }

    /**
     * The default of {@code key} converted to its type's Java class (e.g. a {@code Duration}); null if
     * none. A PATH default stays as written (a {@code String}): it is resolved per pipeline file.
     *
     * @throws IllegalArgumentException if the default does not convert or does not pass the validator
     */
    public static Object defaultOf(ConfigKey key) {
        Object declared = key.defaultValue();
        if (declared == null) {
            return null;
        }
        Object converted;
        try {
            converted = ValueConverter.convert(
                    key.type(), key.allowedValues(), new ConfigValue(yamlForm(declared), null), null, null);
            if (key.type() == ConfigType.PATH) {
                Path.of((String)
                        converted); // fail now on a malformed path (InvalidPathException); it is resolved per file
                // later
            }
        } catch (ValueConverter.Failure | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "key '" + key.name() + "': bad default " + declared + ": " + e.getMessage(), e);
        }
        Validator validator = key.validator();
        if (validator != null && !validator.accepts(converted)) {
            throw new IllegalArgumentException(
                    "key '" + key.name() + "': default " + declared + " " + validator.requirement());
        }
        return converted;
    }

    /**
     * Checks and converts the settings of {@code node} against {@code def}: every key must be
     * defined, required keys present, and values convertible and valid.
     *
     * @throws ConfigException listing every problem found in the node's settings
     */
    public static ParsedConfig parse(ConfigDef def, NodeSpec node) {
        ConfigProblems problems = new ConfigProblems();
        String owner = node.kind().word() + " type '" + node.type() + "'";
        ParsedConfig parsed =
                parseSettings(def, node, node.settings(), node::locationOf, node.location(), owner, problems);
        problems.throwIfAny();
        return parsed;
    }

    /**
     * Checks a block of settings that belongs to no node (a dynamic table's backend block) against
     * {@code def}; {@code owner} names it in messages. Its definition may have no PATH keys.
     *
     * @throws ConfigException listing every problem found in the block
     */
    public static ParsedConfig parseBlock(ConfigDef def, ConfigValue block, String owner) {
        ConfigProblems problems = new ConfigProblems();
        ParsedConfig parsed =
                parseSettings(def, null, block.asMap(), block::keyLocation, block.location(), owner, problems);
        problems.throwIfAny();
        return parsed;
    }

    private static String nameOf(NodeSpec node) {
        return node == null ? null : node.name();
    }

    /** Checks one map of settings (a node's, a section's, or a block's) against {@code def}. */
    private static ParsedConfig parseSettings(
            ConfigDef def,
            NodeSpec node,
            Map<String, ConfigValue> settings,
            Function<String, Location> keyLocation,
            Location where,
            String owner,
            ConfigProblems problems) {
        List<String> known = def.keys().stream().map(ConfigKey::name).sorted().toList();
        for (Map.Entry<String, ConfigValue> setting : settings.entrySet()) {
            String key = setting.getKey();
            if (def.key(key).isEmpty()) {
                String message = known.isEmpty()
                        ? "unknown key '" + key + "': " + owner + " takes no settings"
                        : Suggestions.unknown("unknown key '" + key + "' for " + owner, key, known, "keys");
                problems.add(keyLocation.apply(key), nameOf(node), message);
            }
        }
        Path baseDir = node == null ? null : baseDir(node);
        Map<String, Object> explicit = new LinkedHashMap<>();
        Map<String, Object> effective = new LinkedHashMap<>();
        for (ConfigKey key : def.keys()) {
            ConfigValue value = settings.get(key.name());
            if (value == null) {
                if (key.required()) {
                    problems.add(where, nameOf(node), "missing required key '" + key.name() + "' for " + owner);
                } else if (key.defaultValue() != null) {
                    try {
                        effective.put(key.name(), resolveDefault(key, baseDir, node == null ? null : node.paths()));
                    } catch (ValueConverter.Failure e) {
                        problems.add(where, nameOf(node), "default of key '" + key.name() + "': " + e.getMessage());
                    }
                }
                continue;
            }
            if (key.type() == ConfigType.SECTIONS) {
                Map<String, ParsedConfig> sections = parseSections(key, value, node, problems);
                explicit.put(key.name(), sections);
                effective.put(key.name(), sections);
                continue;
            }
            try {
                Object converted = ValueConverter.convert(
                        key.type(), key.allowedValues(), value, baseDir, node == null ? null : node.paths());
                if (key.validator() != null && !key.validator().accepts(converted)) {
                    problems.add(
                            value.location(),
                            nameOf(node),
                            "key '" + key.name() + "' " + key.validator().requirement() + ", got " + value.describe());
                } else {
                    explicit.put(key.name(), converted);
                    effective.put(key.name(), converted);
                }
            } catch (ValueConverter.Failure e) {
                problems.add(e.location(), nameOf(node), "key '" + key.name() + "': " + e.getMessage());
            }
        }
        return new ParsedConfig(node, def, settings, where, explicit, effective);
    }

    private static Map<String, ParsedConfig> parseSections(
            ConfigKey key, ConfigValue value, NodeSpec node, ConfigProblems problems) {
        Map<String, ParsedConfig> sections = new LinkedHashMap<>();
        if (!value.isMap()) {
            problems.add(
                    value.location(),
                    nameOf(node),
                    "key '" + key.name() + "': expected a map of named sections "
                            + "(name: {setting: value, ...}), got " + value.describe());
            return sections;
        }
        for (Map.Entry<String, ConfigValue> entry : value.asMap().entrySet()) {
            ConfigValue section = entry.getValue();
            String owner = "'" + key.name() + "." + entry.getKey() + "'";
            if (!section.isMap()) {
                problems.add(
                        section.location() != null ? section.location() : value.location(),
                        nameOf(node),
                        "key " + owner + ": expected a map of settings, got " + section.describe());
                continue;
            }
            Location where = section.location() != null ? section.location() : value.location();
            sections.put(
                    entry.getKey(),
                    parseSettings(key.sections(), node, section.asMap(), section::keyLocation, where, owner, problems));
        }
        return Collections.unmodifiableMap(sections);
    }

    /** A Java default as the YAML value that means the same, so it goes through the same conversion. */
    private static Object yamlForm(Object value) {
        return switch (value) {
            case Integer i -> i.longValue();
            case Short s -> s.longValue();
            case Byte b -> b.longValue();
            case Float f -> f.doubleValue();
            case Duration d -> Durations.format(d);
            case Path p -> p.toString();
            case Enum<?> e -> e.name();
            case List<?> list -> {
                List<ConfigValue> elements = new ArrayList<>();
                list.forEach(e -> elements.add(new ConfigValue(yamlForm(e), null)));
                yield elements;
            }
            case Map<?, ?> map -> {
                Map<String, ConfigValue> entries = new LinkedHashMap<>();
                map.forEach((k, v) -> entries.put(String.valueOf(k), new ConfigValue(yamlForm(v), null)));
                yield entries;
            }
            default -> value;
        };
    }

    private static Object resolveDefault(ConfigKey key, Path baseDir, PathPolicy paths) throws ValueConverter.Failure {
        Object converted = defaultOf(key);
        if (key.type() != ConfigType.PATH) {
            return converted;
        }
        String text = (String) converted;
        return ValueConverter.allowedPath(text, new ConfigValue(text, null), baseDir, paths);
    }

    /** Relative PATH values are relative to the directory of the pipeline file. */
    private static Path baseDir(NodeSpec node) {
        Path parent = node.location().file().toAbsolutePath().getParent();
        return parent != null ? parent : node.location().file().toAbsolutePath();
    }
}
