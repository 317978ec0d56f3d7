package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblems;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Durations;
import dev.sluice.config.PipelineSpec;
import java.time.Duration;
import java.util.Map;

/**
 * The pipeline's top-level {@code checkpoint:} block: {@code interval} (default 10s) between
 * epochs and {@code timeout} (default 60s) for sinks to make an epoch durable; an epoch that
 * times out is given up and retried at the next interval. Bounded runs also take a final
 * checkpoint at the end, and every run one on stop.
 */
public record CheckpointSettings(Duration interval, Duration timeout) {

    /** The top-level block, and its keys (documented in ConfigDocs' pipeline settings). */
    public static final String BLOCK = "checkpoint";

    public static final String INTERVAL = "interval";
    public static final String TIMEOUT = "timeout";

    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    static CheckpointSettings of(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get(BLOCK);
        if (block == null || block.isNull()) {
            return new CheckpointSettings(DEFAULT_INTERVAL, DEFAULT_TIMEOUT);
        }
        if (!block.isMap()) {
            throw new ConfigException(
                    block.location(), "checkpoint: expected a map such as {interval: 10s, timeout: 60s}");
        }
        Duration interval = DEFAULT_INTERVAL;
        Duration timeout = DEFAULT_TIMEOUT;
        ConfigProblems problems = new ConfigProblems(); // every bad key at once, not the first
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            ConfigValue value = entry.getValue();
            String key = entry.getKey();
            if (!key.equals(INTERVAL) && !key.equals(TIMEOUT)) {
                problems.add(
                        block.keyLocation(key), null, "unknown key 'checkpoint." + key + "'; known: interval, timeout");
                continue;
            }
            Duration duration;
            try {
                duration = Durations.parse(String.valueOf(value.toPlain()));
            } catch (IllegalArgumentException e) {
                problems.add(value.location(), null, "checkpoint." + key + ": " + e.getMessage());
                continue;
            }
            if (duration.isZero() || duration.isNegative()) {
                problems.add(value.location(), null, "checkpoint." + key + " must be positive");
            } else if (key.equals(INTERVAL)) {
                interval = duration;
            } else {
                timeout = duration;
            }
        }
        problems.throwIfAny();
        return new CheckpointSettings(interval, timeout);
    }
}
