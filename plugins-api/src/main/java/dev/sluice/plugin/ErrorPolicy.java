package dev.sluice.plugin;

import java.util.List;
import java.util.Locale;

/**
 * What the engine does with a record a stage rejects ({@link StageContext#reject}): the node's
 * {@link dev.sluice.plugin.config.StandardKeys#ON_ERROR on_error} setting.
 */
public enum ErrorPolicy {
    /** Stop the run with the record's error. */
    FAIL,
    /** Count it and go on. */
    SKIP,
    /** Write it, with the error, to the node's dead-letter destination, count it and go on. */
    DEAD_LETTER;

    /** The values of {@code on_error}, in the order the docs list them. */
    public static final List<String> CONFIG_NAMES = List.of("dead_letter", "skip", "fail");

    /** The policy a pipeline file's value names. */
    public static ErrorPolicy parse(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
