package dev.sluice.config;

import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigKey;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A node's settings after {@link SettingsParser#parse}: converted, validated and completed with
 * defaults, read through typed getters. It keeps the {@link NodeSpec} so that later, semantic checks
 * (e.g. "topic does not exist") can still point at the right place with {@link #problem}.
 *
 * <p>Getters take the key as defined; asking for an undefined key or with the wrong type's getter is
 * a programming error ({@link IllegalArgumentException}). Object getters return null when the key
 * has no value and no default; primitive getters then throw {@link IllegalStateException}, so use
 * the {@code getOptional...} variants for optional keys without default.
 */
public final class ParsedConfig implements Settings {

    private final NodeSpec node;
    private final ConfigDef def;
    /** The settings as written: the node's, or a section's (see {@link ConfigType#SECTIONS}). */
    private final Map<String, ConfigValue> settings;

    private final Location location;
    private final Map<String, Object> explicit;
    private final Map<String, Object> effective;

    ParsedConfig(
            NodeSpec node,
            ConfigDef def,
            Map<String, ConfigValue> settings,
            Location location,
            Map<String, Object> explicit,
            Map<String, Object> effective) {
        this.node = node;
        this.def = def;
        this.settings = settings;
        this.location = location;
        this.explicit = Collections.unmodifiableMap(new LinkedHashMap<>(explicit));
        this.effective = Collections.unmodifiableMap(new LinkedHashMap<>(effective));
    }

    /** The node these settings belong to; null for a block of no node (a dynamic table's backend). */
    public NodeSpec node() {
        return node;
    }

    /** Whether {@code key} was set in the pipeline file (as opposed to defaulted or absent). */
    @Override
    public boolean has(String key) {
        definition(key);
        return explicit.containsKey(key);
    }

    /** The converted value of {@code key}, or its default, or null. */
    @Override
    public Object get(String key) {
        definition(key);
        return effective.get(key);
    }

    /** Every key that has a value (set or defaulted) with its converted value, in definition order. */
    @Override
    public Map<String, Object> values() {
        return effective;
    }

    /** A STRING or ENUM value; null if none. */
    @Override
    public String getString(String key) {
        return (String) typed(key, ConfigType.STRING, ConfigType.ENUM);
    }

    /** An INT value. */
    @Override
    public int getInt(String key) {
        return (Integer) required(key, ConfigType.INT);
    }

    /** An INT or LONG value. */
    @Override
    public long getLong(String key) {
        return ((Number) required(key, ConfigType.INT, ConfigType.LONG)).longValue();
    }

    /** An INT, LONG or DOUBLE value. */
    @Override
    public double getDouble(String key) {
        return ((Number) required(key, ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE)).doubleValue();
    }

    /** A BOOLEAN value. */
    @Override
    public boolean getBoolean(String key) {
        return (Boolean) required(key, ConfigType.BOOLEAN);
    }

    /** An INT value, if there is one. */
    @Override
    public OptionalInt getOptionalInt(String key) {
        Object value = typed(key, ConfigType.INT);
        return value == null ? OptionalInt.empty() : OptionalInt.of((Integer) value);
    }

    /** An INT or LONG value, if there is one. */
    @Override
    public OptionalLong getOptionalLong(String key) {
        Object value = typed(key, ConfigType.INT, ConfigType.LONG);
        return value == null ? OptionalLong.empty() : OptionalLong.of(((Number) value).longValue());
    }

    /** An INT, LONG or DOUBLE value, if there is one. */
    @Override
    public OptionalDouble getOptionalDouble(String key) {
        Object value = typed(key, ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE);
        return value == null ? OptionalDouble.empty() : OptionalDouble.of(((Number) value).doubleValue());
    }

    /** A BOOLEAN value, if there is one. */
    @Override
    public Optional<Boolean> getOptionalBoolean(String key) {
        return Optional.ofNullable((Boolean) typed(key, ConfigType.BOOLEAN));
    }

    /** A DURATION value; null if none. */
    @Override
    public Duration getDuration(String key) {
        return (Duration) typed(key, ConfigType.DURATION);
    }

    /** A LIST value; empty if none. */
    @Override
    public List<String> getList(String key) {
        Object value = typed(key, ConfigType.LIST);
        return value == null
                ? List.of()
                : ((List<?>) value).stream().map(String.class::cast).toList();
    }

    /** A MAP value, in the order written; empty if none. */
    @Override
    public Map<String, String> getMap(String key) {
        Object value = typed(key, ConfigType.MAP);
        Map<String, String> map = new LinkedHashMap<>();
        if (value != null) {
            ((Map<?, ?>) value).forEach((k, v) -> map.put((String) k, (String) v));
        }
        return Collections.unmodifiableMap(map);
    }

    /** A SECTIONS value: each section's settings by name, in the order written; empty if none. */
    @SuppressWarnings("unchecked")
    @Override
    public Map<String, ParsedConfig> getSections(String key) {
        Object value = typed(key, ConfigType.SECTIONS);
        return value == null ? Map.of() : (Map<String, ParsedConfig>) value;
    }

    /** Where these settings start: the node, or the section. */
    public Location location() {
        return location;
    }

    /** A PATH value, absolute and resolved against the pipeline file's directory; null if none. */
    @Override
    public Path getPath(String key) {
        return (Path) typed(key, ConfigType.PATH);
    }

    @Override
    public Object getJson(String key) {
        return typed(key, ConfigType.JSON);
    }

    /**
     * An ENUM (or STRING) value as a constant of {@code type}, matched by name ignoring case, with
     * '-' read as '_' (so {@code at-least-once} gives {@code AT_LEAST_ONCE}); null if none.
     *
     * @throws IllegalStateException if no constant matches (the definition and the enum disagree)
     */
    @Override
    public <E extends Enum<E>> E getEnum(String key, Class<E> type) {
        String value = getString(key);
        if (value == null) {
            return null;
        }
        String wanted = value.replace('-', '_').toUpperCase(Locale.ROOT);
        for (E constant : type.getEnumConstants()) {
            if (constant.name().toUpperCase(Locale.ROOT).equals(wanted)) {
                return constant;
            }
        }
        throw new IllegalStateException(
                "value '" + value + "' of key '" + key + "' has no constant in " + type.getName());
    }

    /** Where the value of {@code key} was written; the node's (or section's) location if it was not set. */
    public Location locationOf(String key) {
        definition(key);
        ConfigValue value = settings.get(key);
        return value != null && value.location() != null ? value.location() : location;
    }

    /**
     * A problem with the value of {@code key} found after parsing, located at that value and naming
     * this node, e.g. {@code config.problem("topic", "topic 'bids' does not exist")}.
     */
    @Override
    public ConfigException problem(String key, String reason) {
        return new ConfigException(locationOf(key), node == null ? null : node.name(), reason);
    }

    private Object required(String key, ConfigType... types) {
        Object value = typed(key, types);
        if (value == null) {
            throw new IllegalStateException("key '" + key + "' of " + node + " has no value and no default;"
                    + " read it with a getOptional method or give it a default");
        }
        return value;
    }

    private Object typed(String key, ConfigType... types) {
        ConfigKey definition = definition(key);
        for (ConfigType type : types) {
            if (definition.type() == type) {
                return effective.get(key);
            }
        }
        throw new IllegalArgumentException(
                "key '" + key + "' has type " + definition.type().displayName() + ", not " + types[0].displayName());
    }

    private ConfigKey definition(String key) {
        return def.key(key)
                .orElseThrow(() -> new IllegalArgumentException("key '" + key + "' is not defined for "
                        + (node == null ? "this block" : node.kind().word() + " type '" + node.type() + "'")));
    }
}
