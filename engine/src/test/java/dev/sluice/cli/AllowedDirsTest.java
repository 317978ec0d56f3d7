package dev.sluice.cli;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Paths in a pipeline stay inside {@code paths.allowed_dirs} (default: the pipeline file's
 * directory and the working directory), whatever option names them and however they get out:
 * {@code ..}, a symbolic link to a directory, a dangling link. Both validate and run refuse them,
 * before anything is written. (The tests run in engine/, so the temp dir is outside the working
 * directory.)
 */
class AllowedDirsTest {

    @TempDir
    Path root;

    private Path pipelines;
    private Path outside;

    @BeforeEach
    void layout() throws IOException {
        pipelines = Files.createDirectories(root.resolve("pipelines"));
        outside = Files.createDirectories(root.resolve("outside"));
        Files.writeString(outside.resolve("victim.jsonl"), "precious\n");
        Files.writeString(pipelines.resolve("in.jsonl"), "{\"id\": 1}\n");
    }

    private Path pipeline(String sinkPath, String extra) throws IOException {
        Path file = pipelines.resolve("p.yaml");
        Files.writeString(file, extra + """
                sources:
                  ids: {type: file, path: in.jsonl, schema: {id: bigint}}
                sinks:
                  out:
                    type: file
                    from: ids
                    path: %s
                """.formatted(sinkPath));
        return file;
    }

    @Test
    void dotDotOutOfThePipelineDirectoryIsRefusedByValidateAndRun() throws IOException {
        Path file = pipeline("../outside/victim.jsonl", "");
        for (String command : new String[] {"validate", "run"}) {
            Result result = command.equals("run")
                    ? sluice(
                            "run",
                            file.toString(),
                            "--state-dir",
                            root.resolve("state").toString())
                    : sluice("validate", file.toString());
            assertEquals(Main.EXIT_CONFIG, result.code(), result.stderr());
            assertTrue(
                    result.stderr()
                            .contains(file + ":7:11: node 'out': key 'path': " + outside.resolve("victim.jsonl")
                                    + " is outside the directories this pipeline may use"),
                    result.stderr());
            assertTrue(result.stderr().contains("paths.allowed_dirs"), result.stderr());
        }
        assertEquals("precious\n", Files.readString(outside.resolve("victim.jsonl")));
    }

    @Test
    void symbolicLinksAreFollowedBeforeTheCheck() throws IOException {
        Files.createSymbolicLink(pipelines.resolve("linked"), outside);
        Result viaDirectory =
                sluice("validate", pipeline("linked/victim.jsonl", "").toString());
        assertEquals(Main.EXIT_CONFIG, viaDirectory.code(), viaDirectory.stderr());
        assertTrue(
                viaDirectory
                        .stderr()
                        .contains("(resolves to " + outside.toRealPath().resolve("victim.jsonl") + ")"),
                viaDirectory.stderr());
        // A link to a file that does not exist yet: the write would create it outside.
        Files.createSymbolicLink(pipelines.resolve("dangling.jsonl"), outside.resolve("new.jsonl"));
        Result dangling = sluice(
                "run",
                pipeline("dangling.jsonl", "").toString(),
                "--state-dir",
                root.resolve("state").toString());
        assertEquals(Main.EXIT_CONFIG, dangling.code(), dangling.stderr());
        assertTrue(
                dangling.stderr().contains("resolves to " + outside.toRealPath().resolve("new.jsonl")),
                dangling.stderr());
        assertFalse(Files.exists(outside.resolve("new.jsonl")));

        // A directory source's files: a link inside the directory to a file outside it (it was
        // read, though a direct path through a link is refused).
        Path dir = Files.createDirectories(pipelines.resolve("in"));
        Files.writeString(dir.resolve("a.jsonl"), "{\"id\": 1}\n");
        Files.writeString(outside.resolve("secret.jsonl"), "{\"id\": 42}\n");
        Files.createSymbolicLink(dir.resolve("b.jsonl"), outside.resolve("secret.jsonl"));
        Path listed = pipelines.resolve("dir.yaml");
        Files.writeString(listed, """
                sources:
                  ids: {type: file, path: in, schema: {id: bigint}}
                sinks:
                  out: {type: file, from: ids, path: out.jsonl}
                """);
        Result viaEntry = sluice("validate", listed.toString());
        assertEquals(Main.EXIT_CONFIG, viaEntry.code(), viaEntry.stderr());
        assertTrue(
                viaEntry.stderr()
                        .contains(dir.resolve("b.jsonl") + " is a link to "
                                + outside.toRealPath().resolve("secret.jsonl") + ", outside " + dir),
                viaEntry.stderr());
    }

    @Test
    void allowedDirsOpenOtherDirectoriesAndCloseTheDefaults() throws IOException {
        Path file = pipeline("../outside/victim.jsonl", "paths:\n  allowed_dirs: [., ../outside]\n");
        Result run = sluice(
                "run", file.toString(), "--state-dir", root.resolve("state").toString());
        assertEquals(0, run.code(), run.stderr());
        assertEquals("{\"id\":1}\n", Files.readString(outside.resolve("victim.jsonl")));

        // Listing only the output directory shuts out the input next to the pipeline file.
        Result narrow = sluice(
                "validate",
                pipeline("../outside/victim.jsonl", "paths: {allowed_dirs: ../outside}\n")
                        .toString());
        assertEquals(Main.EXIT_CONFIG, narrow.code(), narrow.stderr());
        assertTrue(
                narrow.stderr().contains("node 'ids': key 'path': " + pipelines.resolve("in.jsonl") + " is outside"),
                narrow.stderr());
    }

    @Test
    void everyPathOptionIsCheckedAndEveryRefusalReported() throws IOException {
        Files.writeString(outside.resolve("rates.csv"), "currency,rate\nEUR,1.1\n");
        Path file = pipelines.resolve("many.yaml");
        Files.writeString(file, """
                sources:
                  ids: {type: file, path: ../outside/in.jsonl, schema: {id: bigint}, dead_letter: ../outside/dead.jsonl}
                transforms:
                  joined:
                    type: sql
                    sql: SELECT id FROM ids JOIN rates ON true
                    tables:
                      rates: {path: ../outside/rates.csv}
                sinks:
                  out: {type: file, from: joined, path: /etc/sluice-test-victim.jsonl}
                """);
        Result result = sluice("validate", file.toString());
        assertEquals(Main.EXIT_CONFIG, result.code(), result.stderr());
        String err = result.stderr();
        assertTrue(err.contains(file + ":2:27: node 'ids': key 'path'"), err);
        assertTrue(err.contains(file + ":2:83: node 'ids': key 'dead_letter'"), err);
        assertTrue(err.contains(file + ":8:21: node 'joined': key 'path'"), err);
        assertTrue(
                err.contains(file + ":10:41: node 'out': key 'path': /etc/sluice-test-victim.jsonl is outside"), err);
    }

    @Test
    void theDefaultDeadLetterMustStayInsideToo() throws IOException {
        Path data = Files.createDirectories(pipelines.resolve("data"));
        Files.writeString(data.resolve("in.jsonl"), "{\"id\": 1}\n");
        Path file = pipelines.resolve("dl.yaml");
        Files.writeString(file, """
                paths: {allowed_dirs: [data]}
                sources:
                  ids: {type: file, path: data/in.jsonl, schema: {id: bigint}}
                sinks:
                  out: {type: blackhole, from: ids}
                """);
        Result result = sluice("validate", file.toString());
        assertEquals(Main.EXIT_CONFIG, result.code(), result.stderr());
        assertTrue(
                result.stderr()
                        .contains("node 'ids': the dead letter " + pipelines.resolve("dl.ids.dead-letter.jsonl")
                                + " is outside"),
                result.stderr());
    }

    @Test
    void aMisspeltPathsBlockIsAnError() throws IOException {
        Result result = sluice(
                "validate", pipeline("out.jsonl", "paths: {allowed_dir: [x]}\n").toString());
        assertEquals(Main.EXIT_CONFIG, result.code(), result.stderr());
        assertTrue(result.stderr().contains(":1:9: unknown key 'paths.allowed_dir'"), result.stderr());
        assertTrue(result.stderr().contains("allowed_dirs"), result.stderr());
    }
}
