package dev.sluice.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The settings a node type accepts, in the spirit of Kafka's {@code ConfigDef}: each key's type,
 * default, whether it is required, its doc and optional allowed values or {@link Validator}.
 * Built once per node type, fluently:
 *
 * <pre>{@code
 * new ConfigDef()
 *     .defineEnum("entity", List.of("bid", "auction", "person"), null, true, "Which events to generate.")
 *     .define("count", ConfigType.LONG, 100_000L, false, "How many events.", Validator.positive())
 *     .define("batch_flush_interval", ConfigType.DURATION, "50ms", false, "Longest wait before a partial batch is sent.");
 * }</pre>
 *
 * {@link #parse(NodeSpec)} checks a node's settings against the definitions and converts them;
 * {@link #keys()} feeds {@link ConfigDocs}. Definitions are checked when declared (a default must
 * convert to the type and pass the validator), so mistakes in a type's definition fail at startup
 * rather than when a user happens to rely on the default.
 */
public final class ConfigDef {

    private final Map<String, ConfigKey> keys = new LinkedHashMap<>();

    /** A definition with no keys yet; add them with {@code define}. */
    public ConfigDef() {
    }

    /**
     * Defines a key without extra validation.
     *
     * @param defaultValue the value when absent, or null for none; given either as YAML would give it
     *     (e.g. {@code "50ms"}) or as the Java value (e.g. {@code Duration.ofMillis(50)}, {@code 8192})
     * @param required whether the key must be set; a required key cannot have a default
     * @throws IllegalArgumentException if the definition is inconsistent (see {@link #define(String,
     *     ConfigType, Object, boolean, String, Validator)})
     */
    public ConfigDef define(String key, ConfigType type, Object defaultValue, boolean required, String doc) {
        return define(key, type, defaultValue, required, doc, null);
    }

    /**
     * Defines a key whose converted value must also pass {@code validator}.
     *
     * @param validator the extra check, or null for none
     * @throws IllegalArgumentException if the key is already defined, is {@code type} or {@code from},
     *     is required yet has a default, is an ENUM (use {@link #defineEnum}), or has a default that
     *     does not convert or does not pass the validator
     */
    public ConfigDef define(String key, ConfigType type, Object defaultValue, boolean required, String doc,
            Validator validator) {
        if (type == ConfigType.ENUM) {
            throw new IllegalArgumentException("key '" + key + "': use defineEnum to give the allowed values");
        }
        return add(key, type, defaultValue, required, doc, List.of(), validator, null);
    }

    /**
     * Defines a key whose value must be one of {@code allowedValues} (compared exactly).
     *
     * @throws IllegalArgumentException as for {@link #define(String, ConfigType, Object, boolean, String,
     *     Validator)}, or if there are no allowed values
     */
    public ConfigDef defineEnum(String key, List<String> allowedValues, String defaultValue, boolean required,
            String doc) {
        if (allowedValues.isEmpty()) {
            throw new IllegalArgumentException("key '" + key + "': an enum needs allowed values");
        }
        return add(key, ConfigType.ENUM, defaultValue, required, doc, allowedValues, null, null);
    }

    /**
     * Defines a key whose value maps names to sections, each checked against {@code sectionDef} as
     * a node's settings are (unknown keys, types, defaults), e.g. a SQL transform's side tables:
     * {@code tables: {rates: {path: rates.csv, header: false}}}.
     */
    public ConfigDef defineSections(String key, ConfigDef sectionDef, String doc) {
        if (sectionDef.keys.values().stream().anyMatch(k -> k.type() == ConfigType.SECTIONS)) {
            throw new IllegalArgumentException("key '" + key + "': sections cannot nest further sections");
        }
        return add(key, ConfigType.SECTIONS, null, false, doc, List.of(), null, sectionDef);
    }

    /** The definitions in the order they were declared. */
    public List<ConfigKey> keys() {
        return List.copyOf(keys.values());
    }

    /** The definition of {@code name}, if declared. */
    public Optional<ConfigKey> key(String name) {
        return Optional.ofNullable(keys.get(name));
    }

    /**
     * Checks and converts the settings of {@code node}: every key must be defined, required keys
     * present, and values convertible and valid.
     *
     * @throws ConfigException listing every problem found in the node's settings
     */
    public ParsedConfig parse(NodeSpec node) {
        ConfigProblems problems = new ConfigProblems();
        String owner = node.kind().word() + " type '" + node.type() + "'";
        ParsedConfig parsed = parseSettings(node, node.settings(), node::locationOf, node.location(), owner, problems);
        problems.throwIfAny();
        return parsed;
    }

    /** Checks one map of settings (a node's, or a section's) against these definitions. */
    private ParsedConfig parseSettings(NodeSpec node, Map<String, ConfigValue> settings,
            Function<String, Location> keyLocation, Location where, String owner, ConfigProblems problems) {
        List<String> known = keys.keySet().stream().sorted().toList();
        for (Map.Entry<String, ConfigValue> setting : settings.entrySet()) {
            String key = setting.getKey();
            if (!keys.containsKey(key)) {
                String message = known.isEmpty()
                        ? "unknown key '" + key + "': " + owner + " takes no settings"
                        : Suggestions.unknown("unknown key '" + key + "' for " + owner, key, known, "keys");
                problems.add(keyLocation.apply(key), node.name(), message);
            }
        }
        Path baseDir = baseDir(node);
        Map<String, Object> explicit = new LinkedHashMap<>();
        Map<String, Object> effective = new LinkedHashMap<>();
        for (ConfigKey key : keys.values()) {
            ConfigValue value = settings.get(key.name());
            if (value == null) {
                if (key.required()) {
                    problems.add(where, node.name(), "missing required key '" + key.name() + "' for " + owner);
                } else if (key.defaultValue() != null) {
                    try {
                        effective.put(key.name(), resolveDefault(key, baseDir, node.paths()));
                    } catch (ValueConverter.Failure e) {
                        problems.add(where, node.name(), "default of key '" + key.name() + "': " + e.getMessage());
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
                Object converted = ValueConverter.convert(key.type(), key.allowedValues(), value, baseDir, node.paths());
                if (key.validator() != null && !key.validator().accepts(converted)) {
                    problems.add(value.location(), node.name(),
                            "key '" + key.name() + "' " + key.validator().requirement() + ", got " + value.describe());
                } else {
                    explicit.put(key.name(), converted);
                    effective.put(key.name(), converted);
                }
            } catch (ValueConverter.Failure e) {
                problems.add(e.location(), node.name(), "key '" + key.name() + "': " + e.getMessage());
            }
        }
        return new ParsedConfig(node, this, settings, where, explicit, effective);
    }

    private static Map<String, ParsedConfig> parseSections(ConfigKey key, ConfigValue value, NodeSpec node,
            ConfigProblems problems) {
        Map<String, ParsedConfig> sections = new LinkedHashMap<>();
        if (!value.isMap()) {
            problems.add(value.location(), node.name(), "key '" + key.name() + "': expected a map of named sections "
                    + "(name: {setting: value, ...}), got " + value.describe());
            return sections;
        }
        for (Map.Entry<String, ConfigValue> entry : value.asMap().entrySet()) {
            ConfigValue section = entry.getValue();
            String owner = "'" + key.name() + "." + entry.getKey() + "'";
            if (!section.isMap()) {
                problems.add(section.location() != null ? section.location() : value.location(), node.name(),
                        "key " + owner + ": expected a map of settings, got " + section.describe());
                continue;
            }
            Location where = section.location() != null ? section.location() : value.location();
            sections.put(entry.getKey(),
                    key.sections().parseSettings(node, section.asMap(), section::keyLocation, where, owner, problems));
        }
        return Collections.unmodifiableMap(sections);
    }

    private ConfigDef add(String key, ConfigType type, Object defaultValue, boolean required, String doc,
            List<String> allowed, Validator validator, ConfigDef sections) {
        if (keys.containsKey(key)) {
            throw new IllegalArgumentException("key '" + key + "' is already defined");
        }
        if (key.equals(PipelineLoader.TYPE) || key.equals(PipelineLoader.FROM)) {
            throw new IllegalArgumentException("key '" + key + "' is reserved for every node");
        }
        if (required && defaultValue != null) {
            throw new IllegalArgumentException("key '" + key + "' is required, so it cannot have a default");
        }
        Object converted = defaultValue == null ? null : convertDefault(key, type, defaultValue, allowed, validator);
        keys.put(key, new ConfigKey(key, type, converted, required, doc, allowed, validator, sections));
        return this;
    }

    private static Object convertDefault(String key, ConfigType type, Object defaultValue, List<String> allowed,
            Validator validator) {
        Object converted;
        try {
            converted = ValueConverter.convert(type, allowed, new ConfigValue(yamlForm(defaultValue), null), null, null);
            if (type == ConfigType.PATH) {
                Path.of((String) converted); // fail now on a malformed path (InvalidPathException); it is resolved per file later
            }
        } catch (ValueConverter.Failure | IllegalArgumentException e) {
            throw new IllegalArgumentException("key '" + key + "': bad default " + defaultValue + ": " + e.getMessage(), e);
        }
        if (validator != null && !validator.accepts(converted)) {
            throw new IllegalArgumentException(
                    "key '" + key + "': default " + defaultValue + " " + validator.requirement());
        }
        return converted;
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
        if (key.type() != ConfigType.PATH) {
            return key.defaultValue();
        }
        String text = (String) key.defaultValue();
        return ValueConverter.allowedPath(text, new ConfigValue(text, null), baseDir, paths);
    }

    /** Relative PATH values are relative to the directory of the pipeline file. */
    private static Path baseDir(NodeSpec node) {
        Path parent = node.location().file().toAbsolutePath().getParent();
        return parent != null ? parent : node.location().file().toAbsolutePath();
    }

    @Override
    public String toString() {
        return "ConfigDef" + Collections.unmodifiableCollection(keys.values());
    }
}
