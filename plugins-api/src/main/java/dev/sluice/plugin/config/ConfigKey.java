package dev.sluice.plugin.config;

import java.util.List;
import java.util.Objects;

/**
 * The definition of one setting of a stage type, as declared with {@link ConfigDef#define}: used to
 * check and convert pipeline files, and to generate the reference docs.
 */
public final class ConfigKey {

    private final String name;
    private final ConfigType type;
    private final Object defaultValue;
    private final boolean required;
    private final String doc;
    private final List<String> allowedValues;
    private final Validator validator;
    private final ConfigDef sections;

    ConfigKey(
            String name,
            ConfigType type,
            Object defaultValue,
            boolean required,
            String doc,
            List<String> allowedValues,
            Validator validator,
            ConfigDef sections) {
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
        this.defaultValue = defaultValue;
        this.required = required;
        this.doc = doc == null ? "" : doc;
        this.allowedValues = List.copyOf(allowedValues);
        this.validator = validator;
        this.sections = sections;
    }

    /** The key as written in the pipeline file, e.g. {@code batch_size}. */
    public String name() {
        return name;
    }

    /** How the value is converted and read. */
    public ConfigType type() {
        return type;
    }

    /**
     * The value used when the key is absent, as declared (e.g. {@code "50ms"} or a {@code Duration});
     * null if none. The engine converts it as it converts a value written in a pipeline file.
     */
    public Object defaultValue() {
        return defaultValue;
    }

    /** Whether the key must be set. */
    public boolean required() {
        return required;
    }

    /** What the key means, for the docs; empty if not given. */
    public String doc() {
        return doc;
    }

    /** The allowed values of an ENUM key, in declared order; empty for other types. */
    public List<String> allowedValues() {
        return allowedValues;
    }

    /** The settings of each section of a SECTIONS key; null for other types. */
    public ConfigDef sections() {
        return sections;
    }

    /** The extra check on the value, or null if none. */
    public Validator validator() {
        return validator;
    }

    @Override
    public String toString() {
        return name + " (" + type.displayName() + ")";
    }
}
