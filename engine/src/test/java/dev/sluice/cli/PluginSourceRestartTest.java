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
import java.util.stream.LongStream;
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
        Path out = dir.resolve("out.jsonl");
        Path file = pipeline("out: {type: file, from: checked, path: out.jsonl}");
        killThreeTimesThenFinish(file, () -> lines(out), 3_000);
        assertEquals(
                good(), ids(Files.readAllLines(out), "id"), "one line per good id: none lost, none twice, none cut");
        List<String> dead = Files.readAllLines(dir.resolve("p.checked.dead-letter.jsonl"));
        assertEquals(bad(), ids(dead, "record"), "one dead letter per bad id");
    }

    /**
     * Parquet part files: each kill leaves the part being written unfinished (hidden, no footer),
     * perhaps a part completed after the last finalized checkpoint (hidden, pending) and perhaps
     * one the last checkpoint counted but not yet made visible; the next run deletes the first two
     * and writes their rows again, and makes the third visible, so the directory read back holds
     * every good id once.
     */
    @Test
    void parquetPartFilesHoldEveryIdOnceAfterKill9() throws Exception {
        Path parts = dir.resolve("parts");
        Path file = pipeline("out: {type: file, from: checked, path: parts, format: parquet, parts: true}");
        killThreeTimesThenFinish(file, () -> partCount(parts), 3);
        try (var listing = Files.list(parts)) {
            List<String> names =
                    listing.map(p -> p.getFileName().toString()).sorted().toList();
            assertTrue(
                    names.stream().allMatch(n -> n.matches("part-\\d{8}\\.parquet")), "only complete parts: " + names);
        }
        Path read = dir.resolve("read.yaml");
        Files.writeString(read, """
                sources:
                  parts: {type: file, path: parts}
                sinks:
                  back: {type: file, from: parts, path: back.jsonl}
                """);
        assertEquals(0, Main.execute("run", read.toString()));
        assertEquals(good(), ids(Files.readAllLines(dir.resolve("back.jsonl")), "id"), "one row per good id");
        List<String> dead = Files.readAllLines(dir.resolve("p.checked.dead-letter.jsonl"));
        assertEquals(bad(), ids(dead, "record"), "one dead letter per bad id");
    }

    /**
     * A file source beside a source that resumes went back to its first line at every restart
     * while the sinks went on from the checkpoint: each kill, and even each clean run after the
     * pipeline had finished, wrote the file's rows once more. It now goes on from what the
     * checkpoint had read (its rejected records too). Read 100 records a poll, one poll per 10 ms
     * of the sequence's, so each kill comes in the middle of the file.
     */
    @Test
    void aFileSourceBesideOneThatResumesGoesOnFromItsCheckpoint() throws Exception {
        StringBuilder input = new StringBuilder();
        List<Long> expected = new ArrayList<>();
        for (long n = 0; n < 150_000; n++) {
            input.append(n == 40_000 ? "not json\n" : n == 90_000 ? "\n" : "{\"id\": " + (-n) + "}\n");
            if (n != 40_000 && n != 90_000) {
                expected.add(-n);
            }
        }
        Files.writeString(dir.resolve("in.jsonl"), input);
        Path out = dir.resolve("out.jsonl");
        Path file = pipeline(
                "f: {type: file, path: in.jsonl, schema: {id: bigint}, batch_size: 100, on_error: dead_letter}",
                "out: {type: file, from: checked, path: out.jsonl}\n  fromfile: {type: file, from: f, path: fromfile.jsonl}");
        killThreeTimesThenFinish(file, () -> lines(out), 3_000);
        assertEquals(
                expected, ids(Files.readAllLines(dir.resolve("fromfile.jsonl")), "id"), "each file row once, in order");
        assertEquals(good(), ids(Files.readAllLines(out), "id"));
        List<String> dead = Files.readAllLines(dir.resolve("p.f.dead-letter.jsonl"));
        assertEquals(1, dead.size(), "the malformed line once: " + dead);
        // A run after the pipeline finished reads nothing of either source again.
        Process again = start(file, 4);
        assertTrue(again.waitFor(120, TimeUnit.SECONDS), "the run after the end did not finish");
        assertEquals(0, again.exitValue(), Files.readString(dir.resolve("err4")));
        assertEquals(expected.size(), lines(dir.resolve("fromfile.jsonl")), "no file row twice");
    }

    /**
     * A resumed file source skips by count, so it goes on only where the files are the ones the
     * checkpoint saw: a file added before the one it was reading, or that one rewritten, was
     * skipped past without a word (rows lost); refused now. A file that only grew goes on.
     */
    @Test
    void aResumedFileSourceRefusesFilesThatAreNotTheOnesItRead() throws Exception {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.copy(PluginPipelineTest.BUILT.resolve(PluginPipelineTest.RUST), plugins.resolve(PluginPipelineTest.RUST));
        Path in = Files.createDirectories(dir.resolve("in"));
        Files.writeString(in.resolve("b.csv"), "id\n1\n2\n");
        Path file = dir.resolve("files.yaml");
        Files.writeString(file, """
                sources:
                  seq: {type: plugin, path: plugins/%s, component: sequence, options: {count: 5}}
                  f: {type: file, path: in, schema: {id: bigint}}
                sinks:
                  numbers: {type: blackhole, from: seq}
                  o: {type: file, from: f, path: o.jsonl}
                """.formatted(PluginPipelineTest.RUST));
        String state = dir.resolve("files-state").toString();
        InProcessCli.Result first = InProcessCli.sluice("run", file.toString(), "--state-dir", state);
        assertEquals(0, first.code(), first.stderr());

        Files.writeString(in.resolve("a.csv"), "id\n0\n");
        InProcessCli.Result added = InProcessCli.sluice("run", file.toString(), "--state-dir", state);
        assertEquals(Main.EXIT_CONFIG, added.code(), added.stderr());
        assertTrue(added.stderr().contains("before it changed since (one added, removed or grown"), added.stderr());
        Files.delete(in.resolve("a.csv"));

        Files.writeString(in.resolve("b.csv"), "id\n7\n8\n");
        InProcessCli.Result rewritten = InProcessCli.sluice("run", file.toString(), "--state-dir", state);
        assertEquals(Main.EXIT_CONFIG, rewritten.code(), rewritten.stderr());
        assertTrue(rewritten.stderr().contains("that file was rewritten or replaced since"), rewritten.stderr());

        Files.writeString(in.resolve("b.csv"), "id\n1\n2\n3\n");
        InProcessCli.Result grown = InProcessCli.sluice("run", file.toString(), "--state-dir", state);
        assertEquals(0, grown.code(), grown.stderr());
        assertEquals(List.of(1L, 2L, 3L), ids(Files.readAllLines(dir.resolve("o.jsonl")), "id"), "the new row once");
    }

    /**
     * A generator beside a source that resumes emitted its whole sequence again at every run,
     * into a sink that went on: now it goes on after what it had emitted, as a file source does.
     */
    @Test
    void aGeneratorBesideOneThatResumesGoesOnToo() throws Exception {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.copy(PluginPipelineTest.BUILT.resolve(PluginPipelineTest.RUST), plugins.resolve(PluginPipelineTest.RUST));
        Path file = dir.resolve("generated.yaml");
        Files.writeString(file, """
                sources:
                  seq: {type: plugin, path: plugins/%s, component: sequence, options: {count: 5}}
                  bids: {type: generator, entity: bid, count: 3000, batch_size: 100}
                sinks:
                  numbers: {type: blackhole, from: seq}
                  o: {type: file, from: bids, path: bids.jsonl}
                """.formatted(PluginPipelineTest.RUST));
        String state = dir.resolve("generated-state").toString();
        for (int run = 0; run < 2; run++) {
            InProcessCli.Result result = InProcessCli.sluice("run", file.toString(), "--state-dir", state);
            assertEquals(0, result.code(), result.stderr());
            List<String> lines = Files.readAllLines(dir.resolve("bids.jsonl"));
            assertEquals(3000 * 46 / 50, lines.size(), "run " + run + ": each bid once");
            assertEquals(lines.size(), new java.util.HashSet<>(lines).size(), "run " + run + ": no line twice");
        }
    }

    private Path pipeline(String sink) throws IOException {
        return pipeline("", sink);
    }

    private Path pipeline(String moreSources, String sink) throws IOException {
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
                  %s
                transforms:
                  checked:
                    type: sql
                    sql: SELECT id FROM seq WHERE CAST(CASE WHEN id %% %d = 7 THEN 'bad' ELSE '1' END AS BIGINT) = 1
                    on_error: dead_letter
                sinks:
                  %s
                """.formatted(PluginPipelineTest.RUST, COUNT, moreSources, BAD_EVERY, sink));
        return file;
    }

    /** How far the output got: lines, or part files. */
    private interface Progress {
        long get() throws IOException;
    }

    /**
     * Runs the pipeline three times, each killed (kill -9) once its output grew by {@code step}
     * (past at least one checkpoint, 200 ms apart), then once to the end.
     */
    private void killThreeTimesThenFinish(Path file, Progress progress, long step) throws Exception {
        long before = 0;
        for (int kill = 0; kill < 3; kill++) {
            Process run = start(file, kill);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (progress.get() < before + step && run.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            Thread.sleep(500);
            assertTrue(
                    run.isAlive(),
                    "run " + kill + " ended before it was killed: " + Files.readString(dir.resolve("err" + kill)));
            run.destroyForcibly().waitFor();
            long after = progress.get();
            assertTrue(after > before, "run " + kill + " continued the output: " + before + ", then " + after);
            before = after;
        }
        Process last = start(file, 3);
        assertTrue(last.waitFor(120, TimeUnit.SECONDS), "the last run did not finish");
        assertEquals(0, last.exitValue(), Files.readString(dir.resolve("err3")));
    }

    private static List<Long> good() {
        return LongStream.range(0, COUNT)
                .filter(id -> id % BAD_EVERY != 7)
                .boxed()
                .toList();
    }

    private static List<Long> bad() {
        return LongStream.range(0, COUNT)
                .filter(id -> id % BAD_EVERY == 7)
                .boxed()
                .toList();
    }

    private static long partCount(Path parts) throws IOException {
        if (!Files.isDirectory(parts)) {
            return 0;
        }
        try (var listing = Files.list(parts)) {
            return listing.filter(p -> p.getFileName().toString().startsWith("part-"))
                    .count();
        }
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
