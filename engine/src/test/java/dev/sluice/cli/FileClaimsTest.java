package dev.sluice.cli;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pipeline that would write a file it reads, or one file from two nodes, is refused before
 * anything opens: a file sink over its own input used to replace the input while the source read
 * it, and a run of 300 000 lines exited 0 having kept 81 514 of them.
 */
class FileClaimsTest {

    @TempDir
    Path dir;

    @Test
    void aSinkOverItsOwnInputIsRefusedAndTheInputKeepsEveryByte() throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int id = 0; id < 300_000; id++) {
            lines.append("{\"id\":").append(id).append("}\n");
        }
        Path data = write("data.jsonl", lines.toString());
        byte[] before = Files.readAllBytes(data);
        Path pipeline = write("p.yaml", """
                sources:
                  events: {type: file, path: data.jsonl}
                sinks:
                  out: {type: file, from: events, path: ./sub/../data.jsonl}
                """);
        for (String command : new String[] {"validate", "run"}) {
            Result result = sluice(command, pipeline.toString());
            assertEquals(2, result.code(), result.stderr());
            assertTrue(
                    result.stderr().contains("p.yaml:4:")
                            && result.stderr()
                                    .contains("node 'out': `path` " + data + " is also read by node 'events' (line 2)")
                            && result.stderr().contains("write to another file"),
                    result.stderr());
        }
        assertArrayEquals(before, Files.readAllBytes(data), "the input was changed");
    }

    @Test
    void twoWritersOfOneFileAreRefusedAlsoThroughASymbolicLink() throws IOException {
        write("in.jsonl", "{\"id\": 1}\n");
        Files.createDirectories(dir.resolve("real"));
        Files.createSymbolicLink(dir.resolve("link"), dir.resolve("real"));
        Result result = sluice("validate", write("p.yaml", """
                sources:
                  events: {type: file, path: in.jsonl}
                sinks:
                  a: {type: file, from: events, path: real/out.jsonl}
                  b: {type: file, from: events, path: link/out.jsonl}
                """).toString());
        assertEquals(2, result.code(), result.stderr());
        assertTrue(
                result.stderr()
                                .contains("node 'b': `path` " + dir.resolve("link/out.jsonl")
                                        + " is also written by node 'a' (line 4) as " + dir.resolve("real/out.jsonl"))
                        && result.stderr().contains("give each its own file"),
                result.stderr());
        assertFalse(Files.exists(dir.resolve("real/out.jsonl")));
    }

    @Test
    void aDeadLetterInsideADirectoryTheSourceReadsIsRefused() throws IOException {
        Files.createDirectories(dir.resolve("in"));
        write("in/a.jsonl", "{\"id\": 1}\nnot json\n");
        Result result = sluice("validate", write("p.yaml", """
                sources:
                  events: {type: file, path: in, on_error: dead_letter, dead_letter: in/rejects.jsonl}
                sinks:
                  out: {type: file, from: events, path: out.jsonl}
                """).toString());
        assertEquals(2, result.code(), result.stderr());
        assertTrue(
                result.stderr()
                        .contains("node 'events': its dead letter " + dir.resolve("in/rejects.jsonl") + " and "
                                + dir.resolve("in") + ", read by node 'events' (line 2), are one inside the other"),
                result.stderr());
    }

    @Test
    void aSinkOverThePipelineFileIsRefused() throws IOException {
        write("in.jsonl", "{\"id\": 1}\n");
        Path pipeline = write("p.yaml", """
                sources:
                  events: {type: file, path: in.jsonl}
                sinks:
                  out: {type: file, from: events, path: p.yaml, format: json}
                """);
        String before = Files.readString(pipeline);
        Result result = sluice("run", pipeline.toString());
        assertEquals(2, result.code(), result.stderr());
        assertTrue(
                result.stderr().contains("node 'out': `path` " + pipeline + " is the pipeline file itself"),
                result.stderr());
        assertEquals(before, Files.readString(pipeline));
    }

    @Test
    void readingOneFileTwiceAndWritingBesideItIsFine() throws IOException {
        write("in.jsonl", "{\"id\": 1}\n");
        Result result = sluice("run", write("p.yaml", """
                sources:
                  a: {type: file, path: in.jsonl}
                  b: {type: file, path: in.jsonl, on_error: dead_letter}
                transforms:
                  both: {type: sql, sql: SELECT id FROM a UNION ALL SELECT id FROM b}
                sinks:
                  out: {type: file, from: both, path: in-copy.jsonl}
                """).toString());
        assertEquals(0, result.code(), result.stderr());
        assertEquals(2, Files.readAllLines(dir.resolve("in-copy.jsonl")).size());
    }

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }
}
