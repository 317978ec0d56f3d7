package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigExceptionTest {

    private static final Path FILE = Path.of("pipelines", "q.yaml");

    @Test
    void locationPrintsAsFileLineColumn() {
        assertEquals("pipelines/q.yaml:3:7", new Location(FILE, 3, 7).toString());
        assertEquals("pipelines/q.yaml:3", new Location(FILE, 3, 0).toString());
        assertEquals("pipelines/q.yaml", Location.of(FILE).toString());
    }

    @Test
    void messageLeavesOutWhatIsUnknown() {
        assertEquals(
                "pipelines/q.yaml:3:7: node 'bid': bad",
                new ConfigException(new Location(FILE, 3, 7), "bid", "bad").getMessage());
        assertEquals("pipelines/q.yaml:3:7: bad", new ConfigException(new Location(FILE, 3, 7), "bad").getMessage());
        assertEquals("node 'bid': bad", new ConfigException(null, "bid", "bad").getMessage());
        assertEquals("bad", new ConfigException(null, null, "bad").getMessage());
    }

    @Test
    void reasonIsFoldedIntoOneParagraph() {
        ConfigException e = new ConfigException(null, "n", "first line\n   second line\r\n");
        assertEquals("first line second line", e.reason());
        assertEquals("node 'n': first line second line", e.getMessage());
    }

    @Test
    void combiningFlattensAndSortsByLocation() {
        ConfigException late = new ConfigException(new Location(FILE, 9, 1), "c", "late");
        ConfigException early = new ConfigException(new Location(FILE, 2, 5), "a", "early");
        ConfigException whole = new ConfigException(Location.of(FILE), "whole file");
        ConfigException nowhere = new ConfigException(null, "nowhere");
        assertSame(late, ConfigException.of(List.of(late)));

        ConfigException combined =
                ConfigException.of(List.of(late, ConfigException.of(List.of(early, nowhere)), whole));
        assertEquals(List.of(nowhere, whole, early, late), combined.problems());
        assertEquals("""
                nowhere
                pipelines/q.yaml: whole file
                pipelines/q.yaml:2:5: node 'a': early
                pipelines/q.yaml:9:1: node 'c': late""", combined.getMessage());
        assertEquals("4 problems", combined.reason());
        assertNull(combined.location());
        assertThrows(IllegalArgumentException.class, () -> ConfigException.of(List.of()));
    }

    @Test
    void problemsCollectorThrowsOnlyWhenThereAreProblems() {
        ConfigProblems problems = new ConfigProblems();
        problems.throwIfAny();
        problems.add(new Location(FILE, 1, 1), "x", "one");
        ConfigException e = assertThrows(ConfigException.class, problems::throwIfAny);
        assertEquals("pipelines/q.yaml:1:1: node 'x': one", e.getMessage());
    }
}
