package dev.sluice.config;

/**
 * The type of a node setting, which decides how its YAML value is converted (see {@link ConfigDef})
 * and which {@link ParsedConfig} getter reads it.
 */
public enum ConfigType {
    /** Any single value, as text: {@link ParsedConfig#getString}. */
    STRING("string"),
    /** A whole number within int range; underscores and exponents allowed ({@code 1_000}, {@code 1e3}): {@link ParsedConfig#getInt}. */
    INT("int"),
    /** A whole number; underscores and exponents allowed ({@code 1_000_000}, {@code 1e6}): {@link ParsedConfig#getLong}. */
    LONG("long"),
    /** A number: {@link ParsedConfig#getDouble}. */
    DOUBLE("double"),
    /** {@code true} or {@code false}: {@link ParsedConfig#getBoolean}. */
    BOOLEAN("boolean"),
    /** A duration such as {@code 50ms}, {@code 1s}, {@code 2m}, {@code 1h} or a bare number of milliseconds: {@link ParsedConfig#getDuration}. */
    DURATION("duration"),
    /** A YAML list of single values, or a comma-separated string: {@link ParsedConfig#getList}. */
    LIST("list"),
    /** A YAML map of single values: {@link ParsedConfig#getMap}. */
    MAP("map"),
    /** One of a fixed set of strings: {@link ParsedConfig#getString} or {@link ParsedConfig#getEnum}. */
    ENUM("enum"),
    /** A file system path, resolved against the pipeline file's directory: {@link ParsedConfig#getPath}. */
    PATH("path"),
    /**
     * A map of named sections, each a map of settings checked against a nested {@link ConfigDef}
     * (declared with {@link ConfigDef#defineSections}): {@link ParsedConfig#getSections}.
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
