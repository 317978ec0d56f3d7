package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two runs writing one file: pipelines of different names (so different state DBs) in one
 * directory, both with {@code path: out.jsonl}. Each truncated the file to its own checkpoint on
 * resume and appended its rows among the other's; now the second run is refused while the first
 * holds the file, and runs once it has stopped.
 */
class OutputLockTest {

    @TempDir
    Path dir;

    @Test
    void aSecondRunWritingTheSameFileIsRefusedWhileTheFirstRuns() throws Exception {
        Files.writeString(dir.resolve("one.yaml"), """
                checkpoint: {interval: 200ms}
                sources:
                  bids: {type: generator, entity: bid, rate: 2000}
                transforms:
                  ones: {type: sql, sql: SELECT auction AS one FROM bids}
                sinks:
                  out: {type: file, from: ones, path: out.jsonl}
                """);
        Files.writeString(dir.resolve("two.yaml"), """
                sources:
                  bids: {type: generator, entity: bid, count: 1000}
                transforms:
                  twos: {type: sql, sql: SELECT bidder AS two FROM bids}
                sinks:
                  out: {type: file, from: twos, path: out.jsonl}
                """);
        Path out = dir.resolve("out.jsonl");
        Process first = ChildJvm.start(dir, dir.resolve("one.out"), dir.resolve("one.err"), "run", "one.yaml");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((!Files.exists(out) || Files.size(out) == 0) && first.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(first.isAlive(), "the first run ended early: " + read("one.err"));

            assertEquals(Main.EXIT_CONFIG, run("two.yaml"), read("two.err"));
            String refusal = read("two.err");
            assertTrue(
                    refusal.contains("node 'out': " + out.toRealPath() + " is being written by another run "
                            + "(pipeline 'one', node 'out', process " + first.pid()),
                    refusal);
            assertTrue(Files.readAllLines(out).stream().allMatch(line -> line.startsWith("{\"one\":")));
        } finally {
            first.destroy(); // SIGTERM: a final checkpoint, then the file is free
            assertTrue(first.waitFor(60, TimeUnit.SECONDS), "no exit within 60 s of SIGTERM");
        }
        assertEquals(0, first.exitValue(), read("one.err"));
        assertEquals(0, run("two.yaml"), read("two.err"));
        List<String> lines = Files.readAllLines(out);
        assertTrue(lines.size() > 0 && lines.stream().allMatch(line -> line.startsWith("{\"two\":")), lines.toString());
    }

    /**
     * Dead letters lock their file at their first line: processes of one pipeline (scaled out on
     * one machine) share its default dead letter's path and run side by side until both write it.
     */
    @Test
    void aSecondRunIsRefusedAtItsFirstLineOfADeadLetterTheFirstWrites() throws Exception {
        String failing = """
                name: %s
                checkpoint: {interval: 200ms}
                sources:
                  bids: {type: generator, entity: bid, %s}
                transforms:
                  cast:
                    type: sql
                    sql: "SELECT CAST(CASE WHEN auction %% 10 = 0 THEN 'x' ELSE '1' END AS BIGINT) AS v FROM bids"
                    on_error: dead_letter
                    dead_letter: failed.jsonl
                sinks:
                  out: {type: file, from: cast, path: %s}
                """;
        Files.writeString(dir.resolve("one.yaml"), failing.formatted("one", "rate: 2000", "one.jsonl"));
        Files.writeString(dir.resolve("two.yaml"), failing.formatted("two", "count: 2000", "two.jsonl"));
        Path deadLetter = dir.resolve("failed.jsonl");
        Process first = ChildJvm.start(dir, dir.resolve("one.out"), dir.resolve("one.err"), "run", "one.yaml");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((!Files.exists(deadLetter) || Files.size(deadLetter) == 0)
                    && first.isAlive()
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(first.isAlive(), "the first run ended early: " + read("one.err"));
            assertEquals(Main.EXIT_FAILED, run("two.yaml"), read("two.err"));
            assertTrue(
                    read("two.err")
                            .contains("cannot write the dead letter " + deadLetter + ": " + deadLetter.toRealPath()
                                    + " is being written by another run (pipeline 'one', node 'cast'"),
                    read("two.err"));
            assertTrue(Files.readAllLines(deadLetter).stream().allMatch(line -> line.contains("\"node\":\"cast\"")));
        } finally {
            first.destroy();
            assertTrue(first.waitFor(60, TimeUnit.SECONDS), "no exit within 60 s of SIGTERM");
        }
        assertEquals(0, first.exitValue(), read("one.err"));
    }

    private int run(String pipeline) throws Exception {
        Process process = ChildJvm.start(dir, dir.resolve("two.out"), dir.resolve("two.err"), "run", pipeline);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "no exit within 120 s");
        return process.exitValue();
    }

    private String read(String file) throws IOException {
        return Files.exists(dir.resolve(file)) ? Files.readString(dir.resolve(file)) : "";
    }
}
