package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void parsesUnitsCombinationsAndBareMilliseconds() {
        Map<String, Duration> cases = Map.ofEntries(
                Map.entry("50ms", Duration.ofMillis(50)),
                Map.entry("1s", Duration.ofSeconds(1)),
                Map.entry("2m", Duration.ofMinutes(2)),
                Map.entry("1h", Duration.ofHours(1)),
                Map.entry("1d", Duration.ofDays(1)),
                Map.entry("250us", Duration.ofNanos(250_000)),
                Map.entry("250µs", Duration.ofNanos(250_000)),
                Map.entry("7ns", Duration.ofNanos(7)),
                Map.entry("0.5s", Duration.ofMillis(500)),
                Map.entry("1h 30m", Duration.ofMinutes(90)),
                Map.entry("1m30s", Duration.ofSeconds(90)),
                Map.entry(" 10 s ", Duration.ofSeconds(10)),
                Map.entry("1_000", Duration.ofSeconds(1)),
                Map.entry("0", Duration.ZERO),
                Map.entry("PT1M", Duration.ofMinutes(1)),
                Map.entry("5MS", Duration.ofMillis(5)));
        cases.forEach((text, expected) -> assertEquals(expected, Durations.parse(text), text));
    }

    @Test
    void rejectsWhatIsNotADuration() {
        Map<String, String> cases = Map.of(
                "", "not a duration",
                "5 sec", "not a duration",
                "1.5", "not a duration",
                "s", "not a duration",
                "-1s", "durations cannot be negative",
                "1.5ns", "finer than a nanosecond",
                "1000000d", "too long",
                "P1X", "not an ISO-8601 duration");
        cases.forEach((text, reason) -> assertEquals(
                reason,
                assertThrows(IllegalArgumentException.class, () -> Durations.parse(text), text)
                        .getMessage(),
                text));
    }

    @Test
    void formatsInTheSyntaxItParses() {
        assertEquals("50ms", Durations.format(Duration.ofMillis(50)));
        assertEquals("1m30s", Durations.format(Duration.ofSeconds(90)));
        assertEquals("1d2h", Durations.format(Duration.ofHours(26)));
        assertEquals("1s500ms", Durations.format(Duration.ofMillis(1500)));
        assertEquals("0ms", Durations.format(Duration.ZERO));
        for (Duration d :
                List.of(Duration.ofNanos(1_234_567_891L), Duration.ofDays(3).plusMillis(1))) {
            assertEquals(d, Durations.parse(Durations.format(d)));
        }
    }
}
