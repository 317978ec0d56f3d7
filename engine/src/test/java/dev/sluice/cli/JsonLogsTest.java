package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --log-format json}: every line a run writes on stderr is one JSON object naming the
 * pipeline (and the node, for a node's line), and secrets never show. A child JVM, because the
 * format is set for the whole process.
 */
class JsonLogsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private record Run(int code, List<JsonNode> lines, String raw) {}

    private Run run(Map<String, String> env, String... args) throws Exception {
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        ProcessBuilder builder = new ProcessBuilder(ChildJvm.command("256m", args))
                .directory(dir.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the run did not end");
        String raw = Files.readString(err);
        List<JsonNode> lines = new ArrayList<>();
        for (String line : raw.split("\n")) {
            if (!line.isBlank()) {
                try {
                    lines.add(JSON.readTree(line));
                } catch (IOException e) {
                    throw new AssertionError("not a JSON line: " + line + "\nall of stderr:\n" + raw, e);
                }
            }
        }
        return new Run(process.exitValue(), lines, raw);
    }

    @Test
    void everyLineIsJsonWithThePipelineAndTheNodeOfANodesLine() throws Exception {
        Files.writeString(dir.resolve("mixed.jsonl"), "{\"id\": 1, \"code\": 7}\n{\"id\": 2, \"code\": \"x7\"}\n");
        Files.writeString(dir.resolve("mixed.yaml"), """
                sources:
                  events: {type: file, path: mixed.jsonl}
                sinks:
                  out: {type: file, from: events, path: out/mixed.jsonl}
                """);
        Run run = run(Map.of(), "run", "mixed.yaml", "--log-format", "json", "--state-dir", "state");
        assertEquals(0, run.code(), run.raw());
        assertFalse(run.lines().isEmpty());
        for (JsonNode line : run.lines()) {
            for (String key : List.of("time", "level", "logger", "pipeline", "node", "thread", "message")) {
                assertTrue(line.has(key), key + " in " + line);
            }
            assertEquals("mixed", line.get("pipeline").asText(), line.toString());
        }
        JsonNode warning = run.lines().stream()
                .filter(l -> l.get("message").asText().contains("column 'code'"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no warning about column code: " + run.raw()));
        assertEquals("WARN", warning.get("level").asText());
        assertEquals("events", warning.get("node").asText());
        assertTrue(
                run.lines().stream().anyMatch(l -> l.get("message").asText().contains("completed")),
                "the summary is a log line too: " + run.raw());
    }

    @Test
    void aFailedRunsErrorIsAJsonLineWithoutTheSecret() throws Exception {
        // The sink's directory is a file, so the run fails naming the path, which comes from a reference:
        // the log shows the reference, not its value.
        Files.writeString(dir.resolve("a-file-s3cr3t"), "not a directory");
        Files.writeString(dir.resolve("secret.yaml"), """
                sources:
                  g: {type: generator, entity: bid, count: 10}
                sinks:
                  out:
                    type: file
                    from: g
                    path: ${OUT_DIR}/x.jsonl
                """);
        Run run = run(
                Map.of("OUT_DIR", dir.resolve("a-file-s3cr3t").toString()),
                "run",
                "secret.yaml",
                "--log-format",
                "json",
                "--state-dir",
                "state");
        assertTrue(run.code() != 0, run.raw());
        assertTrue(run.lines().stream().anyMatch(l -> l.get("level").asText().equals("ERROR")), run.raw());
        assertFalse(run.raw().contains("s3cr3t"), "the reference's value stays out of the log: " + run.raw());
    }
}
