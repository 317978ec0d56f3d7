package dev.sluice.plugin;

import java.util.List;
import java.util.Locale;

/**
 * The pipeline's delivery guarantee: its top-level {@code delivery:} setting, which every stage
 * sees through {@link StageContext#delivery()}.
 */
public enum Delivery {
    /**
     * Every input record's output reaches the sinks at least once: after a crash the records since
     * the last finalized checkpoint are replayed, and idempotent sinks make the final state exact.
     */
    AT_LEAST_ONCE,
    /**
     * Every input record's output becomes visible exactly once: each checkpoint epoch is one
     * atomic commit of the sinks' writes together with the sources' positions. Only pipelines whose
     * sources and sinks all declare {@link StageType#supportsExactlyOnce()} may ask for it.
     */
    EXACTLY_ONCE;

    /** The values of {@code delivery:}, default first. */
    public static final List<String> CONFIG_NAMES = List.of("at_least_once", "exactly_once");

    /** The guarantee a pipeline file's value names. */
    public static Delivery parse(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }

    /** The value a pipeline file writes for it. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
