package dev.sluice.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which directory holds a pipeline's state, from a pipeline file or name. */
class StateDirectoriesTest {

    @TempDir
    Path dir;

    @Test
    void theNameComesFromTheYamlOrItsFileNameOrIsGivenAsIs() throws IOException {
        Path named = Files.writeString(dir.resolve("file-name.yaml"), "name: orders\nsources: {}\n");
        Path unnamed = Files.writeString(dir.resolve("billing.yml"), "sources: {}\n");
        assertEquals("orders", StateDirectories.pipelineName(named.toString()));
        assertEquals("billing", StateDirectories.pipelineName(unnamed.toString()));
        assertEquals("payments", StateDirectories.pipelineName("payments"));
        var missing = assertThrows(
                ConfigException.class,
                () -> StateDirectories.pipelineName(dir.resolve("typo.yaml").toString()));
        assertTrue(missing.getMessage().contains("pipeline file not found"), missing.getMessage());
    }

    @Test
    void stateDirWinsElseTheDefaultUnderTheWorkingDirectory() {
        assertEquals(dir.resolve("s"), StateDirectories.forPipeline("orders", dir.resolve("x/../s")));
        assertEquals(
                Path.of("").toAbsolutePath().resolve(".sluice/state/orders"),
                StateDirectories.forPipeline("orders", null));
        for (String bad : new String[] {"", "..", "a/b", "a\\b"}) {
            var refused = assertThrows(IllegalArgumentException.class, () -> StateDirectories.forPipeline(bad, null));
            assertTrue(refused.getMessage().contains("--state-dir"), refused.getMessage());
        }
        assertEquals(dir, StateDirectories.forPipeline("a/b", dir), "any name works with --state-dir");
    }
}
