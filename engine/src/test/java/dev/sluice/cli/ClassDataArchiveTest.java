package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which runs leave the launcher's CDS archive marked partial (to be recorded again), and which
 * map an AOT cache whose profiles replace the FFM warm-up.
 */
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
    void onlyAMappedAotCacheOfAnEarlierRunSkipsTheFfmWarmUp() throws IOException {
        Path aot = Files.writeString(dir.resolve("sluice.aot"), "a recorded cache");
        Path jsa = Files.writeString(dir.resolve("sluice.jsa"), "a recorded archive");
        assertTrue(ClassDataArchive.of(aot, true).mapsAotCache());
        assertFalse(ClassDataArchive.of(aot, false).mapsAotCache(), "a cache the JVM could not map");
        assertFalse(ClassDataArchive.of(jsa, true).mapsAotCache(), "a CDS archive holds no JIT profiles");
        assertFalse(ClassDataArchive.of(dir.resolve("new.aot"), false).mapsAotCache(), "the recording run");
        assertFalse(ClassDataArchive.of(null, true).mapsAotCache(), "not started by the launcher");
        // Unless -Dsluice.ffm.warmUpRounds says otherwise (this JVM's tests do not set it).
        assertEquals(0, Warmup.ffmWarmUpRounds(true));
        assertEquals(Warmup.FFM_WARM_UP_ROUNDS, Warmup.ffmWarmUpRounds(false));
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
