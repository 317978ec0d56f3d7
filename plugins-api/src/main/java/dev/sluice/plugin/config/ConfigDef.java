package dev.sluice.plugin.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The settings a stage type accepts, in the spirit of Kafka Connect's {@code ConfigDef}: each key's
 * type, default, whether it is required, its doc and optional allowed values or {@link Validator}.
 * Built once per stage type, fluently, with each key's name as a constant next to it:
 *
 * <pre>{@code
 * static final String ENTITY = "entity";
 * static final String COUNT = "count";
 * static final ConfigDef CONFIG = new ConfigDef()
 *     .defineEnum(ENTITY, List.of("bid", "auction", "person"), null, true, "Which events to generate.")
 *     .define(COUNT, ConfigType.LONG, 100_000L, false, "How many events.", Validator.positive());
 * }</pre>
 *
 * <p>When each part is used: the engine checks the definition (defaults convert to the key's type and
 * pass its validator) when the stage type is registered, at startup; it checks and converts a node's
 * settings against it when a pipeline is loaded, before {@link dev.sluice.plugin.StageType#create} is
 * called with the resulting {@link Settings}; and it generates the configuration reference from
 * {@link #keys()}. Structural mistakes (a key defined twice, a required key with a default) fail
 * here, when the key is declared.
 */
public final class ConfigDef {

    /** Keys every node has, read by the engine itself; a stage type cannot define them. */
    public static final Set<String> RESERVED_KEYS = Set.of("type", "from");

    private final Map<String, ConfigKey> keys = new LinkedHashMap<>();

    /** A definition with no keys yet; add them with {@code define}. */
    public ConfigDef() {}

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
     * @throws IllegalArgumentException if the key is already defined, is reserved ({@link #RESERVED_KEYS}),
     *     is required yet has a default, or is an ENUM (use {@link #defineEnum})
     */
    public ConfigDef define(
            String key, ConfigType type, Object defaultValue, boolean required, String doc, Validator validator) {
        if (type == ConfigType.ENUM) {
            throw new IllegalArgumentException("key '" + key + "': use defineEnum to give the allowed values");
        }
        if (type == ConfigType.SECTIONS) {
            throw new IllegalArgumentException(
                    "key '" + key + "': use defineSections to give the sections' definition");
        }
        return add(key, type, defaultValue, required, doc, List.of(), validator, null);
    }

    /**
     * Defines a key whose value must be one of {@code allowedValues} (compared exactly).
     *
     * @throws IllegalArgumentException as for {@link #define(String, ConfigType, Object, boolean, String,
     *     Validator)}, or if there are no allowed values
     */
    public ConfigDef defineEnum(
            String key, List<String> allowedValues, String defaultValue, boolean required, String doc) {
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

    private ConfigDef add(
            String key,
            ConfigType type,
            Object defaultValue,
            boolean required,
            String doc,
            List<String> allowed,
            Validator validator,
            ConfigDef sections) {
        if (keys.containsKey(key)) {
            throw new IllegalArgumentException("key '" + key + "' is already defined");
        }
        if (RESERVED_KEYS.contains(key)) {
            throw new IllegalArgumentException("key '" + key + "' is reserved for every node");
        }
        if (required && defaultValue != null) {
            throw new IllegalArgumentException("key '" + key + "' is required, so it cannot have a default");
        }
        keys.put(key, new ConfigKey(key, type, defaultValue, required, doc, allowed, validator, sections));
        return this;
    }

    @Override
    public String toString() {
        return "ConfigDef" + Collections.unmodifiableCollection(keys.values());
    }
}
