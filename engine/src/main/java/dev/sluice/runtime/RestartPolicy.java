package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblems;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Durations;
import dev.sluice.config.PipelineSpec;
import java.time.Duration;
import java.util.Map;

/**
 * The pipeline's top-level {@code restart:} block: how often a service restarts a pipeline that
 * failed while running ({@code max_attempts}, default 3; 0 never), waiting {@code backoff}
 * (default 5s, doubling each attempt up to {@link #MAX_BACKOFF}) between attempts. A run that
 * reaches a checkpoint again resets the count. A plain {@code sluice run} never restarts.
 */
public record RestartPolicy(int maxAttempts, Duration backoff) {

    public static final String BLOCK = "restart";
    public static final String MAX_ATTEMPTS = "max_attempts";
    public static final String BACKOFF = "backoff";

    public static final RestartPolicy DEFAULT = new RestartPolicy(3, Duration.ofSeconds(5));
    /** The longest wait between two attempts, however many there were. */
    public static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

    /** The wait before attempt {@code attempt} (1-based): backoff × 2^(attempt−1), capped. */
    public Duration delayBefore(int attempt) {
        Duration delay = backoff;
        for (int i = 1; i < attempt && delay.compareTo(MAX_BACKOFF) < 0; i++) {
            delay = delay.multipliedBy(2);
        }
        return delay.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : delay;
    }

    static RestartPolicy of(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get(BLOCK);
        if (block == null || block.isNull()) {
            return DEFAULT;
        }
        if (!block.isMap()) {
            throw new ConfigException(
                    block.location(), "restart: expected a map such as {max_attempts: 3, backoff: 5s}");
        }
        int maxAttempts = DEFAULT.maxAttempts;
        Duration backoff = DEFAULT.backoff;
        ConfigProblems problems = new ConfigProblems();
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            String key = entry.getKey();
            ConfigValue value = entry.getValue();
            if (key.equals(MAX_ATTEMPTS)) {
                if (value.value() instanceof Long number && number >= 0 && number <= 1_000_000) {
                    maxAttempts = number.intValue();
                } else {
                    problems.add(
                            value.location(),
                            null,
                            "restart.max_attempts must be a whole number from 0 to 1000000, got " + value.describe());
                }
            } else if (key.equals(BACKOFF)) {
                try {
                    backoff = Durations.parse(String.valueOf(value.toPlain()));
                    if (backoff.isNegative()) {
                        problems.add(value.location(), null, "restart.backoff must not be negative");
                    }
                } catch (IllegalArgumentException e) {
                    problems.add(value.location(), null, "restart.backoff: " + e.getMessage());
                }
            } else {
                problems.add(
                        block.keyLocation(key),
                        null,
                        "unknown key 'restart." + key + "'; known: max_attempts, backoff");
            }
        }
        problems.throwIfAny();
        return new RestartPolicy(maxAttempts, backoff);
    }
}
