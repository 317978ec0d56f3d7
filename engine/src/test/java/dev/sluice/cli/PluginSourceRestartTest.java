package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin source's position survives kill -9: its snapshot at each finalized checkpoint is in
 * the state DB and goes back to the plugin's restore, so each restarted run continues where the
 * last checkpoint was, and together the runs wrote every id.
 */
class PluginSourceRestartTest {

    // About 10 s of output at 200 rows per 10 ms: each run is killed well before the end, also on a busy machine.
    private static final int COUNT = 200_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void positionsAreRestoredAfterKill9AndNothingIsLost() throws Exception {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.copy(PluginPipelineTest.BUILT.resolve(PluginPipelineTest.RUST), plugins.resolve(PluginPipelineTest.RUST));
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, """
                checkpoint: {interval: 200ms}
                sources:
                  seq:
                    type: plugin
                    path: plugins/%s
                    component: sequence
                    options: {count: %d, rows_per_poll: 200, delay_ms: 10}
                sinks:
                  out: {type: file, from: seq, path: out.jsonl}
                """.formatted(PluginPipelineTest.RUST, COUNT));
        Path out = dir.resolve("out.jsonl");
        List<List<Long>> runs = new ArrayList<>();
        for (int kill = 0; kill < 3; kill++) {
            Process run = start(file, kill);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // Kill once this run wrote output past at least one checkpoint (200 ms apart).
            while (lines(out) < 3_000 && run.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            Thread.sleep(500);
            assertTrue(
                    run.isAlive(),
                    "run " + kill + " ended before it was killed: " + Files.readString(dir.resolve("err" + kill)));
            run.destroyForcibly().waitFor();
            runs.add(ids(out));
            // The next run replaces the file; move this run's output aside so that waiting above sees new rows only.
            Files.move(out, dir.resolve("out" + kill + ".jsonl"), StandardCopyOption.REPLACE_EXISTING);
        }
        Process last = start(file, 3);
        assertTrue(last.waitFor(120, TimeUnit.SECONDS), "the last run did not finish");
        assertEquals(0, last.exitValue(), Files.readString(dir.resolve("err3")));
        runs.add(ids(out));
        TreeSet<Long> all = new TreeSet<>();
        runs.forEach(all::addAll);
        assertEquals(COUNT, all.size(), "every id was written by some run");
        assertEquals(0L, all.first());
        assertEquals(COUNT - 1L, all.last());
        for (int i = 1; i < runs.size(); i++) {
            long first = runs.get(i).get(0);
            long previousLast = runs.get(i - 1).get(runs.get(i - 1).size() - 1);
            assertTrue(first > 0, "run " + i + " restored a position instead of starting over");
            assertTrue(
                    first <= previousLast + 1,
                    "run " + i + " starts at " + first + ", after the " + previousLast
                            + " the previous run wrote: rows would be lost");
        }
    }

    private Process start(Path file, int i) throws IOException {
        return ChildJvm.start(
                dir,
                dir.resolve("stdout" + i),
                dir.resolve("err" + i),
                "run",
                file.toString(),
                "--state-dir",
                dir.resolve("state").toString());
    }

    private static long lines(Path file) throws IOException {
        if (!Files.exists(file)) {
            return 0;
        }
        try (var stream = Files.lines(file)) {
            return stream.count();
        }
    }

    /** The ids of the complete lines of {@code file} (a kill may cut the last one). */
    private static List<Long> ids(Path file) throws IOException {
        List<Long> ids = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            if (line.endsWith("}")) {
                ids.add(JSON.readTree(line).get("id").asLong());
            }
        }
        return ids;
    }
}
