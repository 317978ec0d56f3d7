package dev.sluice.plugin.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A check on a setting's converted value beyond its type, such as "must be positive". The
 * requirement text appears in error messages ({@code key 'count': must be positive, got -5}) and in
 * the generated docs, so it should read as a predicate starting with "must".
 *
 * @param requirement what a valid value must be, e.g. {@code must be positive}
 * @param test accepts the converted value ({@code Integer}, {@code Long}, {@code Double},
 *     {@code Duration}, {@code String}, {@code List}, {@code Map} or {@code Path}, by the key's type)
 */
public record Validator(String requirement, Predicate<Object> test) {

    /** Checks both parts are given. */
    public Validator {
        Objects.requireNonNull(requirement, "requirement");
        Objects.requireNonNull(test, "test");
    }

    /** A validator from a requirement and a test on the converted value. */
    public static Validator of(String requirement, Predicate<Object> test) {
        return new Validator(requirement, test);
    }

    /** Numbers greater than zero, and durations longer than zero. */
    public static Validator positive() {
        return new Validator("must be positive", v -> signum(v) > 0);
    }

    /** Numbers and durations that are zero or more. */
    public static Validator nonNegative() {
        return new Validator("must not be negative", v -> signum(v) >= 0);
    }

    /** Numbers from {@code min} to {@code max}, both included. */
    public static Validator between(long min, long max) {
        return new Validator(
                "must be between " + min + " and " + max,
                v -> v instanceof Number n && n.doubleValue() >= min && n.doubleValue() <= max);
    }

    /** Strings that are not blank, and lists, maps and paths that are not empty. */
    public static Validator nonEmpty() {
        return new Validator("must not be empty", v -> switch (v) {
            case String s -> !s.isBlank();
            case Collection<?> c -> !c.isEmpty();
            case Map<?, ?> m -> !m.isEmpty();
            case Path p -> !p.toString().isEmpty();
            default -> false;
        });
    }

    /** Whether {@code value} passes. */
    public boolean accepts(Object value) {
        return test.test(value);
    }

    /** A validator that requires both this one and {@code other}. */
    public Validator and(Validator other) {
        return new Validator(
                requirement + " and " + other.requirement.replaceFirst("^must ", ""),
                v -> accepts(v) && other.accepts(v));
    }

    private static int signum(Object value) {
        return switch (value) {
            case Integer i -> Integer.signum(i);
            case Long l -> Long.signum(l);
            case Number n -> (int) Math.signum(n.doubleValue());
            case Duration d -> d.isNegative() ? -1 : d.isZero() ? 0 : 1;
            default -> throw new IllegalArgumentException("not a number or duration: " + value);
        };
    }
}
