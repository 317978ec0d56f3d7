package dev.sluice.plugin.config;

import dev.sluice.plugin.ErrorPolicy;

/**
 * Keys with a meaning shared across stage types. The engine itself reads {@link #ON_ERROR},
 * {@link #DEAD_LETTER} and {@link #PARALLELISM} of a node whose type defines them (error handling
 * and lanes are the engine's work); the batching keys are read by the source. Define them with the
 * helpers here so that every type documents and checks them the same way.
 */
public final class StandardKeys {

    /** Most rows in one batch (INT). */
    public static final String BATCH_SIZE = "batch_size";
    /** Longest a partly filled batch waits (DURATION). */
    public static final String BATCH_FLUSH_INTERVAL = "batch_flush_interval";
    /** What the engine does with a rejected record: an {@link ErrorPolicy} by its config name (ENUM). */
    public static final String ON_ERROR = "on_error";
    /** Where the engine writes rejected records when {@link #ON_ERROR} is {@code dead_letter} (PATH). */
    public static final String DEAD_LETTER = "dead_letter";
    /**
     * How many lanes a source asks for (INT); read only for a type whose
     * {@link dev.sluice.plugin.StageType#supportsLanes()} is true.
     */
    public static final String PARALLELISM = "parallelism";

    private StandardKeys() {}

    /** Adds {@code batch_size} and {@code batch_flush_interval} to {@code def}. */
    public static ConfigDef batching(ConfigDef def) {
        return def.define(
                        BATCH_SIZE,
                        ConfigType.INT,
                        8192,
                        false,
                        "Most rows in one batch. Larger batches amortise the per-batch cost; smaller ones cut latency.",
                        Validator.positive())
                .define(
                        BATCH_FLUSH_INTERVAL,
                        ConfigType.DURATION,
                        "50ms",
                        false,
                        "Longest a partly filled batch waits for more rows before it is sent on.");
    }

    /** Adds {@code on_error} (for records that cannot be decoded) and {@code dead_letter} to {@code def}. */
    public static ConfigDef errorHandling(ConfigDef def) {
        return errorHandling(
                def,
                "dead_letter",
                "What to do with a record that cannot be decoded: write it with the error to the dead letter, "
                        + "skip it (counted), or fail the run.");
    }

    /**
     * Adds {@code on_error}, with the type's own default policy and description of what it
     * rejects, and {@code dead_letter} to {@code def}.
     */
    public static ConfigDef errorHandling(ConfigDef def, String defaultPolicy, String onErrorDoc) {
        return def.defineEnum(ON_ERROR, ErrorPolicy.CONFIG_NAMES, defaultPolicy, false, onErrorDoc)
                .define(
                        DEAD_LETTER,
                        ConfigType.PATH,
                        null,
                        false,
                        "The dead-letter file (JSON lines). Default: <pipeline>.<node>.dead-letter.jsonl next to the first file "
                                + "sink's output, else next to the pipeline file.");
    }
}
