package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
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

    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    static CheckpointSettings of(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get("checkpoint");
        if (block == null || block.isNull()) {
            return new CheckpointSettings(DEFAULT_INTERVAL, DEFAULT_TIMEOUT);
        }
        if (!block.isMap()) {
            throw new ConfigException(block.location(), "checkpoint: expected a map such as {interval: 10s, timeout: 60s}");
        }
        Duration interval = DEFAULT_INTERVAL;
        Duration timeout = DEFAULT_TIMEOUT;
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            ConfigValue value = entry.getValue();
            String key = entry.getKey();
            if (!key.equals("interval") && !key.equals("timeout")) {
                throw new ConfigException(block.keyLocation(key), "unknown key 'checkpoint." + key + "'; known: interval, timeout");
            }
            Duration duration;
            try {
                duration = Durations.parse(String.valueOf(value.toPlain()));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(value.location(), "checkpoint." + key + ": " + e.getMessage());
            }
            if (duration.isZero() || duration.isNegative()) {
                throw new ConfigException(value.location(), "checkpoint." + key + " must be positive");
            }
            if (key.equals("interval")) {
                interval = duration;
            } else {
                timeout = duration;
            }
        }
        return new CheckpointSettings(interval, timeout);
    }
}
