package dev.sluice.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The launcher's start-up cache (see {@code ./sluice}): an AOT cache on Java 25+, a dynamic
 * class-data-sharing archive before. The JVM writes it when a {@code run} exits and none exists
 * yet, with the classes that run loaded (and on 25+ the JIT's profiles); later runs map it
 * instead of loading them one by one. A run that stopped before its first record (a
 * configuration error, an empty topic) never loaded the data path's classes, so its archive
 * would slow every later start: it leaves a {@code .partial} marker, and the launcher then
 * discards that archive and records a new one. So does a run whose JVM could not map the cache it
 * was given (one cut short by a kill while it was written): the JVM ignores such an AOT cache
 * without writing a new one.
 */
final class ClassDataArchive {

    /** Set by the launcher to the cache file a {@code run} uses or creates. */
    static final String ENVIRONMENT = "SLUICE_CDS_ARCHIVE";

    private final Path archive;
    /** Whether this JVM writes the archive at exit (none existed when it started). */
    private final boolean recording;
    /** Whether this JVM maps shared classes (the archive, when one existed at its start). */
    private final boolean mapped;

    private ClassDataArchive(Path archive, boolean recording, boolean mapped) {
        this.archive = archive;
        this.recording = recording;
        this.mapped = mapped;
    }

    static ClassDataArchive fromEnvironment() {
        String path = System.getenv(ENVIRONMENT);
        // The JVM says "sharing" in java.vm.info when it mapped a class archive or AOT cache.
        return of(
                path == null || path.isBlank() ? null : Path.of(path),
                System.getProperty("java.vm.info", "").contains("sharing"));
    }

    /**
     * The archive at {@code archive}, or none (null: not started by the launcher); {@code mapped}:
     * whether this JVM maps shared classes.
     */
    static ClassDataArchive of(Path archive, boolean mapped) {
        return new ClassDataArchive(archive, archive != null && !Files.exists(archive), mapped);
    }

    /**
     * Whether this JVM maps an AOT cache (Java 25+) that an earlier run of the same command line
     * recorded: the cache then holds that run's JIT profiles, the FFM glue's among them.
     */
    boolean mapsAotCache() {
        return archive != null
                && !recording
                && mapped
                && archive.getFileName().toString().endsWith(".aot");
    }

    /**
     * Called as the run ends: marks the archive this JVM is about to write as partial unless
     * records flowed, and one it was given but could not map as partial too. When it writes one,
     * the heap is collected first: the JVM copies the
     * classes' metadata for the archive while the heap the run grew is still committed, and
     * that copy on top of it was the process's peak (a 3 M-record Kafka run: ~330 MiB while
     * running, ~410 MiB while writing; G1 returns the free heap after a full collection).
     */
    void runEnded(boolean recordsFlowed) {
        if (archive == null) {
            return;
        }
        if (!recording) {
            if (!mapped) {
                markPartial("the JVM could not map it\n");
            }
            return;
        }
        if (recordsFlowed) {
            System.gc();
            return;
        }
        markPartial("recorded by a run that processed no record\n");
    }

    private void markPartial(String why) {
        try {
            Files.writeString(archive.resolveSibling(archive.getFileName() + ".partial"), why);
        } catch (IOException e) {
            // Only start-up time is at stake; the next run re-creates the archive either way.
        }
    }
}
