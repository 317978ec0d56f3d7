package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Durations;
import dev.sluice.config.PipelineSpec;
import java.time.Duration;
import java.util.Map;

/**
 * The pipeline's top-level {@code checkpoint:} block: {@code interval} (default 10s) between
 * epochs. Bounded runs also take a final checkpoint at the end, and every run one on stop.
 */
public record CheckpointSettings(Duration interval) {

    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

    static CheckpointSettings of(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get("checkpoint");
        if (block == null || block.isNull()) {
            return new CheckpointSettings(DEFAULT_INTERVAL);
        }
        if (!block.isMap()) {
            throw new ConfigException(block.location(), "checkpoint: expected a map such as {interval: 10s}");
        }
        Duration interval = DEFAULT_INTERVAL;
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            ConfigValue value = entry.getValue();
            if (!entry.getKey().equals("interval")) {
                throw new ConfigException(block.keyLocation(entry.getKey()), "unknown key 'checkpoint." + entry.getKey() + "'; known: interval");
            }
            try {
                interval = Durations.parse(String.valueOf(value.toPlain()));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(value.location(), "checkpoint.interval: " + e.getMessage());
            }
            if (interval.isZero() || interval.isNegative()) {
                throw new ConfigException(value.location(), "checkpoint.interval must be positive");
            }
        }
        return new CheckpointSettings(interval);
    }
}
