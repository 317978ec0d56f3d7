package dev.sluice.runtime;

import dev.sluice.config.ConfigDef;
import dev.sluice.config.ConfigType;
import dev.sluice.config.Validator;
import java.util.List;

/** Settings every source has: batching, and what to do with records it cannot decode. */
public final class SourceSettings {

    public static final String BATCH_SIZE = "batch_size";
    public static final String BATCH_FLUSH_INTERVAL = "batch_flush_interval";
    public static final String DEAD_LETTER = "dead_letter";

    private SourceSettings() {}

    /** Adds {@code batch_size} and {@code batch_flush_interval} to {@code def}. */
    public static ConfigDef batching(ConfigDef def) {
        return def
                .define(BATCH_SIZE, ConfigType.INT, 8192, false,
                        "Most rows in one batch. Larger batches amortise the per-batch cost; smaller ones cut latency.",
                        Validator.positive())
                .define(BATCH_FLUSH_INTERVAL, ConfigType.DURATION, "50ms", false,
                        "Longest a partly filled batch waits for more rows before it is sent on.");
    }

    /** Adds {@code on_error} and {@code dead_letter} to {@code def}. */
    public static ConfigDef errorHandling(ConfigDef def) {
        return def
                .defineEnum(ErrorPolicy.KEY, List.of("dead_letter", "skip", "fail"), "dead_letter", false,
                        "What to do with a record that cannot be decoded: write it with the error to the dead letter, "
                                + "skip it (counted), or fail the run.")
                .define(DEAD_LETTER, ConfigType.PATH, null, false,
                        "The dead-letter file (JSON lines). Default: <node>.dead-letter.jsonl next to the first file "
                                + "sink's output, else next to the pipeline file.");
    }
}
