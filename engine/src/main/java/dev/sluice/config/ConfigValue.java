package dev.sluice.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A value read from a pipeline file together with where it was written, so that checks done long
 * after parsing (by {@link ConfigDef} or the engine) can still point at the right line.
 *
 * <p>{@code value} is one of: {@code String}, {@code Long}, {@code Double}, {@code Boolean},
 * {@code List<ConfigValue>}, {@code Map<String, ConfigValue>} (insertion-ordered), or null for an
 * empty YAML value ({@code key:} or {@code ~}). Lists and maps are immutable and keep the locations
 * of their elements. Integers too large for a {@code long} are kept as their text.
 *
 * @param value the value, as described above
 * @param location where the value starts; null for values that were not read from a file
 */
public record ConfigValue(Object value, Location location) {

    /** Checks the value's type and makes lists and maps immutable. */
    public ConfigValue {
        value = switch (value) {
            case null -> null;
            case String s -> s;
            case Long l -> l;
            case Double d -> d;
            case Boolean b -> b;
            case LocatedMap m -> m;
            case Map<?, ?> m -> LocatedMap.copyOf(m);
            case List<?> l -> copyList(l);
            default ->
                throw new IllegalArgumentException("unsupported configuration value type: "
                        + value.getClass().getName());
        };
    }

    /** Whether the value is empty (null). */
    public boolean isNull() {
        return value == null;
    }

    /** Whether the value is a string, number or boolean. */
    public boolean isScalar() {
        return value instanceof String || value instanceof Number || value instanceof Boolean;
    }

    /** Whether the value is a list. */
    public boolean isList() {
        return value instanceof List;
    }

    /** Whether the value is a map. */
    public boolean isMap() {
        return value instanceof Map;
    }

    /**
     * The elements of a list value.
     *
     * @throws IllegalStateException if the value is not a list
     */
    public List<ConfigValue> asList() {
        if (!(value instanceof List<?> list)) {
            throw new IllegalStateException("not a list: " + describe());
        }
        return list.stream().map(ConfigValue.class::cast).toList();
    }

    /**
     * The entries of a map value, in the order they were written.
     *
     * @throws IllegalStateException if the value is not a map
     */
    public Map<String, ConfigValue> asMap() {
        if (!(value instanceof LocatedMap map)) {
            throw new IllegalStateException("not a map: " + describe());
        }
        return map;
    }

    /**
     * Where {@code key} of this map value was written; falls back to this value's own location when
     * the key is absent or has no recorded location.
     */
    public Location keyLocation(String key) {
        Location keyLocation = value instanceof LocatedMap map ? map.keyLocation(key) : null;
        return keyLocation != null ? keyLocation : location;
    }

    /**
     * The value without locations: scalars as they are, lists as {@code List<Object>}, maps as
     * insertion-ordered {@code Map<String, Object>}. For handing settings to code that knows nothing
     * of locations, such as a connector's client library.
     */
    public Object toPlain() {
        if (value instanceof LocatedMap map) {
            Map<String, Object> plain = new LinkedHashMap<>();
            map.forEach((key, v) -> plain.put(key, v.toPlain()));
            return plain;
        }
        if (value instanceof List<?>) {
            List<Object> plain = new ArrayList<>();
            asList().forEach(v -> plain.add(v.toPlain()));
            return plain;
        }
        return value;
    }

    /** The value as shown in error messages: strings quoted (and shortened), collections by kind. */
    public String describe() {
        return switch (value) {
            case null -> "an empty value";
            case String s -> "'" + (s.length() > 60 ? s.substring(0, 57) + "..." : s) + "'";
            case List<?> _ -> "a list";
            case Map<?, ?> _ -> "a map";
            default -> String.valueOf(value);
        };
    }

    private static List<ConfigValue> copyList(List<?> list) {
        List<ConfigValue> copy = new ArrayList<>(list.size());
        for (Object element : list) {
            if (!(element instanceof ConfigValue configValue)) {
                throw new IllegalArgumentException("a list value must hold ConfigValues");
            }
            copy.add(configValue);
        }
        return List.copyOf(copy);
    }
}
