package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblems;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Durations;
import dev.sluice.config.PipelineSpec;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The pipeline's top-level {@code inspect:} block: how many rows of each node's output the
 * inspector samples per window ({@code sample_rows}, default 15; 0 turns sampling off), the
 * window ({@code sample_window}, default 30s), and columns whose values it shows as
 * {@code ****} ({@code mask_columns}, by name, at any depth of a row).
 */
public record InspectSettings(int sampleRows, Duration sampleWindow, Set<String> maskColumns) {

    public static final String BLOCK = "inspect";
    public static final String SAMPLE_ROWS = "sample_rows";
    public static final String SAMPLE_WINDOW = "sample_window";
    public static final String MASK_COLUMNS = "mask_columns";

    public static final InspectSettings DEFAULT = new InspectSettings(15, Duration.ofSeconds(30), Set.of());
    /** More rows than anyone reads in a terminal, and a bound on what a window may cost. */
    static final int MAX_SAMPLE_ROWS = 1000;

    static InspectSettings of(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get(BLOCK);
        if (block == null || block.isNull()) {
            return DEFAULT;
        }
        if (!block.isMap()) {
            throw new ConfigException(
                    block.location(),
                    "inspect: expected a map such as {sample_rows: 15, sample_window: 30s, mask_columns: [email]}");
        }
        int rows = DEFAULT.sampleRows;
        Duration window = DEFAULT.sampleWindow;
        Set<String> mask = new LinkedHashSet<>();
        ConfigProblems problems = new ConfigProblems();
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            String key = entry.getKey();
            ConfigValue value = entry.getValue();
            switch (key) {
                case SAMPLE_ROWS -> {
                    if (value.value() instanceof Long number && number >= 0 && number <= MAX_SAMPLE_ROWS) {
                        rows = number.intValue();
                    } else {
                        problems.add(
                                value.location(),
                                null,
                                "inspect.sample_rows must be a whole number from 0 to " + MAX_SAMPLE_ROWS + ", got "
                                        + value.describe());
                    }
                }
                case SAMPLE_WINDOW -> {
                    try {
                        window = Durations.parse(String.valueOf(value.toPlain()));
                        if (window.toMillis() < 100) {
                            problems.add(value.location(), null, "inspect.sample_window must be at least 100ms");
                        }
                    } catch (IllegalArgumentException e) {
                        problems.add(value.location(), null, "inspect.sample_window: " + e.getMessage());
                    }
                }
                case MASK_COLUMNS -> {
                    if (value.isList() && value.asList().stream().allMatch(v -> v.value() instanceof String)) {
                        value.asList().forEach(v -> mask.add((String) v.value()));
                    } else {
                        problems.add(
                                value.location(),
                                null,
                                "inspect.mask_columns must be a list of column names, got " + value.describe());
                    }
                }
                default ->
                    problems.add(
                            block.keyLocation(key),
                            null,
                            "unknown key 'inspect." + key + "'; known: sample_rows, sample_window, mask_columns");
            }
        }
        problems.throwIfAny();
        return new InspectSettings(rows, window, Set.copyOf(mask));
    }
}
