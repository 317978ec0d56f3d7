package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin source's position survives kill -9: its snapshot at each finalized checkpoint is in
 * the state DB and goes back to the plugin's restore, so each restarted run continues where the
 * last checkpoint was. The file sink and the SQL transform's dead letter continue their files
 * from the same checkpoint (cut back to the lengths recorded with it), so after the kills the
 * output holds every good id exactly once, in order, and the dead letter every bad one.
 */
class PluginSourceRestartTest {

    // About 10 s of output at 200 rows per 10 ms: each run is killed well before the end, also on a busy machine.
    private static final int COUNT = 200_000;
    /** Every this many ids, one the SQL fails on (id % BAD_EVERY == 7): its dead letter. */
    private static final int BAD_EVERY = 1_000;

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void positionsAreRestoredAfterKill9AndTheFileHoldsEveryIdOnce() throws Exception {
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
                transforms:
                  checked:
                    type: sql
                    sql: SELECT id FROM seq WHERE CAST(CASE WHEN id %% %d = 7 THEN 'bad' ELSE '1' END AS BIGINT) = 1
                    on_error: dead_letter
                sinks:
                  out: {type: file, from: checked, path: out.jsonl}
                """.formatted(PluginPipelineTest.RUST, COUNT, BAD_EVERY));
        Path out = dir.resolve("out.jsonl");
        long before = 0;
        for (int kill = 0; kill < 3; kill++) {
            Process run = start(file, kill);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // Kill once this run wrote output past at least one checkpoint (200 ms apart).
            while (lines(out) < before + 3_000 && run.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            Thread.sleep(500);
            assertTrue(
                    run.isAlive(),
                    "run " + kill + " ended before it was killed: " + Files.readString(dir.resolve("err" + kill)));
            run.destroyForcibly().waitFor();
            long after = lines(out);
            assertTrue(after > before, "run " + kill + " continued the file: " + before + " lines, then " + after);
            before = after;
        }
        Process last = start(file, 3);
        assertTrue(last.waitFor(120, TimeUnit.SECONDS), "the last run did not finish");
        assertEquals(0, last.exitValue(), Files.readString(dir.resolve("err3")));
        List<Long> good = new ArrayList<>();
        List<Long> bad = new ArrayList<>();
        for (long id = 0; id < COUNT; id++) {
            (id % BAD_EVERY == 7 ? bad : good).add(id);
        }
        assertEquals(good, ids(Files.readAllLines(out), "id"), "one line per good id: none lost, none twice, none cut");
        List<String> dead = Files.readAllLines(dir.resolve("checked.dead-letter.jsonl"));
        assertEquals(bad, ids(dead, "record"), "one dead letter per bad id");
    }

    /** The ids of JSON lines, or of the rows in their {@code record} field (a dead letter's). */
    private static List<Long> ids(List<String> lines, String field) throws IOException {
        List<Long> ids = new ArrayList<>();
        for (String line : lines) {
            JsonNode node = JSON.readTree(line);
            ids.add((field.equals("id") ? node : JSON.readTree(node.get(field).asText()))
                    .get("id")
                    .asLong());
        }
        return ids;
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
}
