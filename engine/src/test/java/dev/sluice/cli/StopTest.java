package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a run ends on SIGTERM, and the exit codes scripts and orchestrators see. */
class StopTest {

    @TempDir
    Path dir;

    @Test
    void aCleanStopOnSigtermExitsZeroAfterTheFinalCheckpoint() throws Exception {
        Path pipeline = dir.resolve("endless.yaml");
        Files.writeString(pipeline, """
                checkpoint: {interval: 200ms}
                sources:
                  bids: {type: generator, entity: bid, rate: 20000}
                sinks:
                  out: {type: file, from: bids, path: out.jsonl}
                """);
        Path out = dir.resolve("out.jsonl");
        Path stderr = dir.resolve("stderr");
        Process run = ChildJvm.start(
                dir,
                dir.resolve("stdout"),
                stderr,
                "run",
                pipeline.toString(),
                "--state-dir",
                dir.resolve("state").toString());
        // Running (not still starting) once a checkpoint has flushed rows into the file.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while ((!Files.exists(out) || Files.size(out) == 0) && run.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(run.isAlive(), () -> "the run ended early: " + read(stderr));
        run.destroy(); // SIGTERM
        assertTrue(run.waitFor(60, TimeUnit.SECONDS), "no exit within 60 s of SIGTERM");
        String err = read(stderr);
        assertEquals(0, run.exitValue(), err);
        assertTrue(err.contains("[endless] stopped: in "), err);
        assertTrue(err.matches("(?s).*checkpoints: [1-9]\\d* completed.*"), err);
        // The final checkpoint flushed the file: it ends with a whole row.
        String written = Files.readString(out);
        assertTrue(
                written.endsWith("}\n"), () -> "last bytes: " + written.substring(Math.max(0, written.length() - 80)));
    }

    @Test
    void noCommandPrintsTheUsageAndFails() {
        java.io.PrintStream original = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        int code;
        try {
            code = Main.execute();
        } finally {
            System.setErr(original);
        }
        assertEquals(2, code);
        assertTrue(err.toString().contains("Usage: sluice"), err.toString());
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(" + e + ")";
        }
    }
}
