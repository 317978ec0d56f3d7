package dev.sluice.plugin.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A node's settings as the engine hands them to {@link dev.sluice.plugin.StageType#create}: checked
 * against the type's {@link ConfigDef}, converted, validated and completed with defaults, read
 * through typed getters.
 *
 * <p>Getters take the key as defined; asking for an undefined key or with the wrong type's getter is
 * a programming error ({@link IllegalArgumentException}). Object getters return null when the key
 * has no value and no default; primitive getters then throw {@link IllegalStateException}, so use
 * the {@code getOptional...} variants for optional keys without default.
 */
public interface Settings {

    /** Whether {@code key} was set in the pipeline file (as opposed to defaulted or absent). */
    boolean has(String key);

    /** The converted value of {@code key}, or its default, or null. */
    Object get(String key);

    /** Every key that has a value (set or defaulted) with its converted value, in definition order. */
    Map<String, Object> values();

    /** A STRING or ENUM value; null if none. */
    String getString(String key);

    /** An INT value. */
    int getInt(String key);

    /** An INT or LONG value. */
    long getLong(String key);

    /** An INT, LONG or DOUBLE value. */
    double getDouble(String key);

    /** A BOOLEAN value. */
    boolean getBoolean(String key);

    /** An INT value, if there is one. */
    OptionalInt getOptionalInt(String key);

    /** An INT or LONG value, if there is one. */
    OptionalLong getOptionalLong(String key);

    /** An INT, LONG or DOUBLE value, if there is one. */
    OptionalDouble getOptionalDouble(String key);

    /** A BOOLEAN value, if there is one. */
    Optional<Boolean> getOptionalBoolean(String key);

    /** A DURATION value; null if none. */
    Duration getDuration(String key);

    /** A LIST value; empty if none. */
    List<String> getList(String key);

    /** A MAP value, in the order written; empty if none. */
    Map<String, String> getMap(String key);

    /** A SECTIONS value: each section's settings by name, in the order written; empty if none. */
    Map<String, ? extends Settings> getSections(String key);

    /** A PATH value, absolute and resolved against the pipeline file's directory; null if none. */
    Path getPath(String key);

    /**
     * A JSON value as plain Java values: {@code Map<String, Object>} (in the order written),
     * {@code List<Object>}, {@code String}, {@code Long}/{@code Double}, {@code Boolean} or null.
     */
    Object getJson(String key);

    /**
     * An ENUM (or STRING) value as a constant of {@code type}, matched by name ignoring case, with
     * '-' read as '_' (so {@code at-least-once} gives {@code AT_LEAST_ONCE}); null if none.
     *
     * @throws IllegalStateException if no constant matches (the definition and the enum disagree)
     */
    <E extends Enum<E>> E getEnum(String key, Class<E> type);

    /**
     * A problem with the value of {@code key} found after parsing, to throw: the engine reports it
     * at the line where that value was written (or at the node, or section, if it was not set).
     * For problems found in {@code open}, throwing {@link dev.sluice.plugin.InvalidSettingException}
     * does the same.
     */
    RuntimeException problem(String key, String reason);
}
