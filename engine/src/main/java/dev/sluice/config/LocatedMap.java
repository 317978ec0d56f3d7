package dev.sluice.config;

import java.util.AbstractMap;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The immutable, insertion-ordered map behind a {@link ConfigValue} map. Besides each value's
 * location it remembers where each key was written, because "unknown key" errors must point at
 * the key, not at its value.
 */
final class LocatedMap extends AbstractMap<String, ConfigValue> {

    private final Map<String, ConfigValue> values;
    private final Map<String, Location> keyLocations;

    private LocatedMap(Map<String, ConfigValue> values, Map<String, Location> keyLocations) {
        this.values = Collections.unmodifiableMap(values);
        this.keyLocations = keyLocations;
    }

    /** Copies a plain map; keys get no location of their own (see {@link #keyLocation}). */
    static LocatedMap copyOf(Map<?, ?> map) {
        Builder builder = new Builder();
        map.forEach((key, value) -> {
            if (!(key instanceof String name) || !(value instanceof ConfigValue configValue)) {
                throw new IllegalArgumentException("a map value must map strings to ConfigValues");
            }
            builder.put(name, null, configValue);
        });
        return builder.build();
    }

    /** Where {@code key} was written, or null if it is absent or was not read from a file. */
    Location keyLocation(String key) {
        return keyLocations.get(key);
    }

    @Override
    public Set<Entry<String, ConfigValue>> entrySet() {
        return values.entrySet();
    }

    @Override
    public ConfigValue get(Object key) {
        return values.get(key);
    }

    @Override
    public boolean containsKey(Object key) {
        return values.containsKey(key);
    }

    @Override
    public int size() {
        return values.size();
    }

    /** Builds a map entry by entry, refusing duplicate keys. */
    static final class Builder {
        private final Map<String, ConfigValue> values = new LinkedHashMap<>();
        private final Map<String, Location> keyLocations = new LinkedHashMap<>();

        /** Adds an entry unless the key is already present; returns whether it was added. */
        boolean put(String key, Location keyLocation, ConfigValue value) {
            if (values.containsKey(key)) {
                return false;
            }
            values.put(key, value);
            if (keyLocation != null) {
                keyLocations.put(key, keyLocation);
            }
            return true;
        }

        boolean containsKey(String key) {
            return values.containsKey(key);
        }

        Location keyLocation(String key) {
            return keyLocations.get(key);
        }

        LocatedMap build() {
            return new LocatedMap(new LinkedHashMap<>(values), Map.copyOf(keyLocations));
        }
    }
}
