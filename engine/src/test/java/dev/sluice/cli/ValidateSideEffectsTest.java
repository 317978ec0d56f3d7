package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice validate} leaves every destination as it was: existing outputs of each file
 * format keep their bytes, missing ones (and their directories) are not created, nothing is
 * printed on stdout, no dead letter appears. (Kafka: KafkaValidateTest.) A run of the same
 * pipeline afterwards does write all of them, so the pipeline under test really has effects.
 */
class ValidateSideEffectsTest {

    @TempDir
    Path dir;

    private static final String PIPELINE = """
            sources:
              bids:
                type: generator
                entity: bid
                count: 500
              lines:
                type: file
                path: in.jsonl
                schema: {id: bigint}
            transforms:
              cheap:
                type: sql
                sql: SELECT auction, price FROM bids WHERE price < 1000000000
              ids:
                type: sql
                sql: SELECT id FROM lines
            sinks:
              as_json:   {type: file, from: cheap, path: out.jsonl}
              as_csv:    {type: file, from: cheap, path: out.csv}
              as_parquet: {type: file, from: cheap, path: out.parquet}
              fresh:     {type: file, from: cheap, path: new/deeper/fresh.jsonl}
              as_parts:  {type: file, from: cheap, path: parts, format: parquet, parts: true}
              new_parts: {type: file, from: cheap, path: new-parts, format: csv, parts: true}
              console:   {type: stdout, from: cheap}
              nowhere:   {type: blackhole, from: cheap}
              from_file: {type: file, from: ids, path: ids.jsonl}
            """;

    @Test
    void validateTouchesNoDestinationOfAnySinkType() throws Exception {
        Files.writeString(dir.resolve("in.jsonl"), "{\"id\": 1}\nnot json\n{\"id\": 3}\n");
        Path pipeline = dir.resolve("p.yaml");
        Files.writeString(pipeline, PIPELINE);
        Map<String, byte[]> before = new LinkedHashMap<>();
        Files.createDirectories(dir.resolve("parts"));
        for (String name :
                new String[] {"out.jsonl", "out.csv", "out.parquet", "ids.jsonl", "parts/part-00000001.parquet"}) {
            byte[] sentinel = ("previous output of " + name + "\n").getBytes(StandardCharsets.UTF_8);
            Files.write(dir.resolve(name), sentinel);
            before.put(name, sentinel);
        }

        Child validate = run(pipeline, "validate");
        assertEquals(0, validate.code(), validate.stderr());
        assertTrue(validate.stderr().contains("is valid"), validate.stderr());
        before.forEach(
                (name, bytes) -> assertArrayEquals(bytes, read(dir.resolve(name)), name + " was changed by validate"));
        assertFalse(Files.exists(dir.resolve("new")), "validate created the directory of a file sink");
        assertFalse(Files.exists(dir.resolve("new-parts")), "validate created the directory of part files");
        assertFalse(Files.exists(dir.resolve("p.lines.dead-letter.jsonl")), "validate created a dead letter");
        assertEquals("", validate.stdout(), "validate printed rows on stdout");

        // The same pipeline run for real writes every one of them.
        Child run = run(pipeline, "run");
        assertEquals(0, run.code(), run.stderr());
        before.forEach((name, bytes) -> assertNotEquals(
                new String(bytes, StandardCharsets.UTF_8),
                new String(read(dir.resolve(name)), StandardCharsets.UTF_8),
                name + " was not written by the run"));
        assertTrue(Files.size(dir.resolve("new/deeper/fresh.jsonl")) > 0);
        assertTrue(Files.size(dir.resolve("new-parts/part-00000001.csv")) > 0);
        assertTrue(Files.exists(dir.resolve("p.lines.dead-letter.jsonl")));
        assertFalse(run.stdout().isEmpty(), "the stdout sink printed nothing in the run");
    }

    private record Child(int code, String stdout, String stderr) {}

    private Child run(Path pipeline, String command) throws IOException, InterruptedException {
        Path out = dir.resolve(command + ".stdout");
        Path err = dir.resolve(command + ".stderr");
        Process process = command.equals("run")
                ? ChildJvm.start(
                        dir,
                        out,
                        err,
                        command,
                        pipeline.toString(),
                        "--state-dir",
                        dir.resolve("state").toString())
                : ChildJvm.start(dir, out, err, command, pipeline.toString());
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), command + " did not finish");
        return new Child(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
