package dev.sluice.runtime;

import java.util.Locale;

/** What a node does with a record it cannot process (its {@code on_error} setting). */
public enum ErrorPolicy {
    /** Stop the run with the record's error. */
    FAIL,
    /** Count it and go on. */
    SKIP,
    /** Write it, with the error, to the node's dead-letter destination, count it and go on. */
    DEAD_LETTER;

    public static final String KEY = "on_error";

    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ErrorPolicy parse(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
