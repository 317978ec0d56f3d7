package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SuggestionsTest {

    @Test
    void distanceCountsSwapsAsOneEdit() {
        assertEquals(0, Suggestions.distance("kafka", "kafka"));
        assertEquals(1, Suggestions.distance("kafak", "kafka"));
        assertEquals(1, Suggestions.distance("batchsize", "batch_size"));
        assertEquals(3, Suggestions.distance("abc", "xyz"));
        assertEquals(4, Suggestions.distance("", "file"));
    }

    @Test
    void suggestsOnlyPlausibleTypos() {
        List<String> types = List.of("file", "generator", "kafka", "stdout");
        assertEquals(Optional.of("kafka"), Suggestions.closest("kafak", types));
        assertEquals(Optional.of("file"), Suggestions.closest("fil", types));
        assertEquals(Optional.of("generator"), Suggestions.closest("Generater", types));
        assertEquals(Optional.of("stdout"), Suggestions.closest("std-out", types));
        assertEquals(Optional.empty(), Suggestions.closest("postgres", types));
        assertEquals(
                Optional.empty(),
                Suggestions.closest("fi", List.of("file", "from")),
                "two edits is too many for a four-letter name");
        assertEquals(Optional.of("ab"), Suggestions.closest("a", List.of("ac", "ab")), "ties go alphabetically");
        assertEquals(Optional.empty(), Suggestions.closest("c", List.of("a", "b")), "one-letter names get no guess");
    }
}
