package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which runs leave the launcher's CDS archive marked partial (to be recorded again). */
class ClassDataArchiveTest {

    @TempDir
    Path dir;

    @Test
    void aRecordingRunWithoutRecordsMarksTheArchivePartial() {
        Path archive = dir.resolve("sluice.jsa");
        ClassDataArchive.of(archive, true).runEnded(false);
        assertTrue(Files.exists(dir.resolve("sluice.jsa.partial")));
    }

    @Test
    void aRecordingRunWithRecordsKeepsTheArchive() {
        Path archive = dir.resolve("sluice.jsa");
        ClassDataArchive.of(archive, true).runEnded(true);
        assertFalse(Files.exists(dir.resolve("sluice.jsa.partial")));
    }

    @Test
    void aRunThatMappedAnExistingArchiveLeavesItAlone() throws IOException {
        Path archive = Files.writeString(dir.resolve("sluice.jsa"), "archived classes");
        ClassDataArchive.of(archive, true).runEnded(false);
        assertFalse(Files.exists(dir.resolve("sluice.jsa.partial")));
    }

    @Test
    void aCacheTheJvmCouldNotMapIsMarkedPartial() throws IOException {
        Path archive = Files.writeString(dir.resolve("sluice.aot"), "a cache cut short while written");
        ClassDataArchive.of(archive, false).runEnded(true);
        assertTrue(Files.exists(dir.resolve("sluice.aot.partial")));
    }

    @Test
    void withoutTheLauncherNothingIsWritten() {
        ClassDataArchive.of(null, false).runEnded(false);
        try (var files = Files.list(dir)) {
            assertFalse(files.findAny().isPresent());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
