package dev.sluice.plugin.config;

/**
 * The type of a node setting, which decides how its YAML value is converted (by the engine, against a {@link ConfigDef})
 * and which {@link Settings} getter reads it.
 */
public enum ConfigType {
    /** Any single value, as text: {@link Settings#getString}. */
    STRING("string"),
    /** A whole number within int range; underscores and exponents allowed ({@code 1_000}, {@code 1e3}): {@link Settings#getInt}. */
    INT("int"),
    /** A whole number; underscores and exponents allowed ({@code 1_000_000}, {@code 1e6}): {@link Settings#getLong}. */
    LONG("long"),
    /** A number: {@link Settings#getDouble}. */
    DOUBLE("double"),
    /** {@code true} or {@code false}: {@link Settings#getBoolean}. */
    BOOLEAN("boolean"),
    /** A duration such as {@code 50ms}, {@code 1s}, {@code 2m}, {@code 1h} or a bare number of milliseconds: {@link Settings#getDuration}. */
    DURATION("duration"),
    /** A YAML list of single values, or a comma-separated string: {@link Settings#getList}. */
    LIST("list"),
    /** A YAML map of single values: {@link Settings#getMap}. */
    MAP("map"),
    /** One of a fixed set of strings: {@link Settings#getString} or {@link Settings#getEnum}. */
    ENUM("enum"),
    /** A file system path, resolved against the pipeline file's directory: {@link Settings#getPath}. */
    PATH("path"),
    /**
     * Any YAML value (map, list, scalar), kept with its structure and types for code that takes
     * JSON (a native plugin's {@code options}): {@link Settings#getJson}.
     */
    JSON("any value (passed on as JSON)"),
    /**
     * A map of named sections, each a map of settings checked against a nested {@link ConfigDef}
     * (declared with {@link ConfigDef#defineSections}): {@link Settings#getSections}.
     */
    SECTIONS("map of named sections");

    private final String displayName;

    ConfigType(String displayName) {
        this.displayName = displayName;
    }

    /** The name used in messages and docs, e.g. {@code duration}. */
    public String displayName() {
        return displayName;
    }
}
