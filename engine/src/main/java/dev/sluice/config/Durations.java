package dev.sluice.config;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and formats the human duration syntax of pipeline files: an amount and a unit
 * ({@code 250us}, {@code 50ms}, {@code 1.5s}, {@code 2m}, {@code 1h}, {@code 1d}), several of them
 * ({@code 1m30s}), a bare whole number of milliseconds ({@code 50}), or ISO-8601 ({@code PT5S}).
 */
public final class Durations {

    /** The units accepted, for messages and docs. */
    public static final String UNITS = "ns, us, ms, s, m, h, d";

    private static final Map<String, Long> NANOS_PER_UNIT = Map.of(
            "ns",
            1L,
            "us",
            1_000L,
            "µs",
            1_000L,
            "ms",
            1_000_000L,
            "s",
            1_000_000_000L,
            "m",
            60_000_000_000L,
            "h",
            3_600_000_000_000L,
            "d",
            86_400_000_000_000L);
    private static final Pattern PART = Pattern.compile("(\\d[\\d_]*(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s|m|h|d)");
    private static final Pattern MILLIS = Pattern.compile("\\d[\\d_]*");
    private static final BigInteger MAX_NANOS = BigInteger.valueOf(Long.MAX_VALUE);

    private Durations() {}

    /**
     * Parses {@code text}.
     *
     * @throws IllegalArgumentException with a message fit for users if it is not a duration,
     *     is negative, is finer than a nanosecond or is too long
     */
    public static Duration parse(String text) {
        String s = text.strip().toLowerCase(Locale.ROOT);
        if (s.startsWith("-")) {
            throw new IllegalArgumentException("durations cannot be negative");
        }
        if (MILLIS.matcher(s).matches()) {
            return fromNanos(new BigDecimal(s.replace("_", "")).multiply(BigDecimal.valueOf(1_000_000L)));
        }
        if (s.startsWith("p")) {
            return parseIso(s);
        }
        Matcher part = PART.matcher(s);
        BigDecimal nanos = BigDecimal.ZERO;
        int end = 0;
        while (part.find() && part.start() == end) {
            BigDecimal amount = new BigDecimal(part.group(1).replace("_", ""));
            nanos = nanos.add(amount.multiply(BigDecimal.valueOf(NANOS_PER_UNIT.get(part.group(2)))));
            end = skipSpaces(s, part.end());
        }
        if (end == 0 || end != s.length()) {
            throw new IllegalArgumentException("not a duration");
        }
        return fromNanos(nanos);
    }

    /** Formats {@code duration} in the syntax {@link #parse} reads, e.g. {@code 1m30s} or {@code 50ms}. */
    public static String format(Duration duration) {
        if (duration.isZero()) {
            return "0ms";
        }
        StringBuilder out = new StringBuilder(duration.isNegative() ? "-" : "");
        long rest = duration.abs().toNanos();
        for (String unit : new String[] {"d", "h", "m", "s", "ms", "us", "ns"}) {
            long perUnit = NANOS_PER_UNIT.get(unit);
            if (rest >= perUnit) {
                out.append(rest / perUnit).append(unit);
                rest %= perUnit;
            }
        }
        return out.toString();
    }

    private static Duration parseIso(String s) {
        try {
            Duration d = Duration.parse(s.toUpperCase(Locale.ROOT));
            if (d.isNegative()) {
                throw new IllegalArgumentException("durations cannot be negative");
            }
            return d;
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not an ISO-8601 duration");
        }
    }

    private static int skipSpaces(String s, int from) {
        int i = from;
        while (i < s.length() && s.charAt(i) == ' ') {
            i++;
        }
        return i;
    }

    private static Duration fromNanos(BigDecimal nanos) {
        BigInteger whole;
        try {
            whole = nanos.toBigIntegerExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("finer than a nanosecond");
        }
        if (whole.compareTo(MAX_NANOS) > 0) {
            throw new IllegalArgumentException("too long");
        }
        return Duration.ofNanos(whole.longValueExact());
    }
}
