package dev.sluice.config;

import dev.sluice.plugin.config.ConfigType;
import java.io.Serial;
import java.math.BigDecimal;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Converts a {@link ConfigValue} to the Java value of a {@link ConfigType}. Conversion is lenient
 * where the intent is clear (a quoted {@code "8192"} is a fine long, {@code 1e6} is a whole
 * number) and strict where guessing could hide a mistake (no fractions for integers, no yes/no
 * booleans, no unit-less fractional durations).
 */
final class ValueConverter {

    /** A value that does not convert; {@code location} may be nested inside the value. */
    static final class Failure extends Exception {
        @Serial
        private static final long serialVersionUID = 1L;

        private final transient Location location;

        Failure(Location location, String reason) {
            super(reason, null, false, false); // expected user errors: no stack trace needed
            this.location = location;
        }

        Location location() {
            return location;
        }
    }

    private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?");

    private ValueConverter() {}

    /**
     * Converts {@code value} to {@code type}: String, Integer, Long, Double, Boolean, Duration,
     * {@code List<String>}, {@code Map<String, String>} or Path.
     *
     * @param allowed the allowed values of an ENUM, otherwise ignored
     * @param baseDir the directory relative paths are resolved against; null to leave PATHs as text
     * @param paths the directories a PATH must stay inside; null only with a null {@code baseDir}
     */
    static Object convert(ConfigType type, List<String> allowed, ConfigValue value, Path baseDir, PathPolicy paths)
            throws Failure {
        if (value.isNull()) {
            throw failure(value, expected(type, allowed), "");
        }
        return switch (type) {
            case STRING -> text(value, type, allowed);
            case INT -> toInt(value);
            case LONG -> toLong(value, ConfigType.LONG);
            case DOUBLE -> toDouble(value);
            case BOOLEAN -> toBoolean(value);
            case DURATION -> toDuration(value);
            case LIST -> toList(value);
            case MAP -> toMap(value);
            case ENUM -> toEnum(value, allowed);
            case JSON -> value.toPlain();
            case PATH ->
                baseDir == null
                        ? text(value, type, allowed)
                        : allowedPath(text(value, type, allowed), value, baseDir, paths);
            case SECTIONS ->
                throw new IllegalArgumentException("sections are parsed by ConfigDef against their own definitions");
        };
    }

    /**
     * Resolves a PATH against {@code baseDir}: {@code ~} means the user's home directory, relative
     * paths are relative to the pipeline file rather than to wherever the engine was started.
     */
    static Path resolvePath(String text, ConfigValue value, Path baseDir) throws Failure {
        try {
            String expanded = text.equals("~") || text.startsWith("~/")
                    ? System.getProperty("user.home") + text.substring(1)
                    : text;
            return baseDir.resolve(Path.of(expanded)).normalize();
        } catch (InvalidPathException e) {
            throw failure(value, expected(ConfigType.PATH, List.of()), " (" + e.getReason() + ")");
        }
    }

    /** A PATH resolved as {@link #resolvePath} does, refused if it leads outside {@code paths}. */
    static Path allowedPath(String text, ConfigValue value, Path baseDir, PathPolicy paths) throws Failure {
        Path path = resolvePath(text, value, baseDir);
        String refusal = paths.refusal(path);
        if (refusal != null) {
            throw new Failure(value.location(), refusal);
        }
        return path;
    }

    /** What a value of {@code type} looks like, for "expected X, got Y" messages. */
    static String expected(ConfigType type, List<String> allowed) {
        return switch (type) {
            case BOOLEAN -> "boolean (true or false)";
            case DURATION -> "duration (e.g. 50ms, 1s, 2m, 1h)";
            case LIST -> "list of strings";
            case MAP -> "map of strings";
            case ENUM -> "one of " + String.join(", ", allowed);
            default -> type.displayName();
        };
    }

    private static String text(ConfigValue value, ConfigType type, List<String> allowed) throws Failure {
        if (!value.isScalar()) {
            throw failure(value, expected(type, allowed), "");
        }
        return String.valueOf(value.value());
    }

    private static int toInt(ConfigValue value) throws Failure {
        long number = toLong(value, ConfigType.INT);
        if (number < Integer.MIN_VALUE || number > Integer.MAX_VALUE) {
            throw failure(value, "int", " (out of range)");
        }
        return (int) number;
    }

    private static long toLong(ConfigValue value, ConfigType type) throws Failure {
        BigDecimal number = decimal(value);
        if (number == null) {
            throw failure(value, type.displayName(), "");
        }
        if (number.signum() != 0 && number.stripTrailingZeros().scale() > 0) {
            throw failure(value, type.displayName(), " (not a whole number)");
        }
        try {
            return number.longValueExact();
        } catch (ArithmeticException e) {
            throw failure(value, type.displayName(), " (out of range)");
        }
    }

    private static double toDouble(ConfigValue value) throws Failure {
        if (value.value() instanceof Double d) {
            return d;
        }
        BigDecimal number = decimal(value);
        if (number == null) {
            throw failure(value, "double", "");
        }
        return number.doubleValue();
    }

    /** The number in a Long, finite Double or numeric string ({@code 1_000}, {@code 1e6}); else null. */
    private static BigDecimal decimal(ConfigValue value) {
        return switch (value.value()) {
            case Long l -> BigDecimal.valueOf(l);
            case Double d when Double.isFinite(d) -> BigDecimal.valueOf(d);
            case String s -> {
                // Underscores group digits, as in YAML 1.1 and Java literals.
                String digits = s.strip().replace("_", "");
                yield DECIMAL.matcher(digits).matches() ? new BigDecimal(digits) : null;
            }
            default -> null;
        };
    }

    private static boolean toBoolean(ConfigValue value) throws Failure {
        if (value.value() instanceof Boolean b) {
            return b;
        }
        // A quoted "true" is clear enough; YAML 1.1's yes/no/on/off are not accepted, being ambiguous.
        if (value.value() instanceof String s && (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false"))) {
            return Boolean.parseBoolean(s);
        }
        throw failure(value, expected(ConfigType.BOOLEAN, List.of()), "");
    }

    private static Duration toDuration(ConfigValue value) throws Failure {
        String expected = expected(ConfigType.DURATION, List.of());
        switch (value.value()) {
            case Long millis
            when millis >= 0 -> {
                return Duration.ofMillis(millis);
            }
            case Long _ -> throw failure(value, expected, " (durations cannot be negative)");
            case Double d
            when d == Math.rint(d) && d >= 0 && d <= Long.MAX_VALUE -> {
                return Duration.ofMillis((long) d.doubleValue());
            }
            case Double _ ->
                throw failure(
                        value, expected, " (a number without unit means whole milliseconds; add a unit, e.g. 1.5s)");
            case String s -> {
                try {
                    return Durations.parse(s);
                } catch (IllegalArgumentException e) {
                    String detail = e.getMessage().equals("not a duration")
                            ? " (units: " + Durations.UNITS + "; a number without unit means milliseconds)"
                            : " (" + e.getMessage() + ")";
                    throw failure(value, expected, detail);
                }
            }
            default -> throw failure(value, expected, "");
        }
    }

    private static List<String> toList(ConfigValue value) throws Failure {
        if (value.value() instanceof String s) {
            // Kafka-style "a, b, c" is accepted as a shorthand for a YAML list.
            return Arrays.stream(s.split(","))
                    .map(String::strip)
                    .filter(e -> !e.isEmpty())
                    .toList();
        }
        if (value.isScalar()) {
            return List.of(String.valueOf(value.value()));
        }
        if (!value.isList()) {
            throw failure(value, "list of strings", "");
        }
        List<ConfigValue> elements = value.asList();
        List<String> strings = new ArrayList<>(elements.size());
        for (int i = 0; i < elements.size(); i++) {
            ConfigValue element = elements.get(i);
            if (!element.isScalar()) {
                throw new Failure(
                        element.location(),
                        "expected list of strings, but element " + (i + 1) + " is " + element.describe());
            }
            strings.add(String.valueOf(element.value()));
        }
        return Collections.unmodifiableList(strings);
    }

    private static Map<String, String> toMap(ConfigValue value) throws Failure {
        if (!value.isMap()) {
            throw failure(value, "map of strings", "");
        }
        Map<String, String> strings = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigValue> entry : value.asMap().entrySet()) {
            ConfigValue element = entry.getValue();
            if (!element.isScalar()) {
                throw new Failure(
                        element.location(),
                        "expected map of strings, but the value of '" + entry.getKey() + "' is " + element.describe());
            }
            strings.put(entry.getKey(), String.valueOf(element.value()));
        }
        return Collections.unmodifiableMap(strings);
    }

    private static String toEnum(ConfigValue value, List<String> allowed) throws Failure {
        String text = text(value, ConfigType.ENUM, allowed);
        if (!allowed.contains(text)) {
            throw failure(value, expected(ConfigType.ENUM, allowed), Suggestions.didYouMean(text, allowed));
        }
        return text;
    }

    private static Failure failure(ConfigValue value, String expected, String detail) {
        return new Failure(value.location(), "expected " + expected + ", got " + value.describe() + detail);
    }
}
