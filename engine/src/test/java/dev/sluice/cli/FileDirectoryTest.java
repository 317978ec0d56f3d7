package dev.sluice.cli;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file sink's part files ({@code parts: true}) and the file source reading a directory. */
class FileDirectoryTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aDirectoryIsReadFileByFileInNameOrderWithTheFirstOnesSchema() throws IOException {
        Path in = Files.createDirectories(dir.resolve("in"));
        Files.writeString(in.resolve("b.jsonl"), "{\"id\": 3}\nnot json\n{\"id\": 4, \"extra\": true}\n");
        Files.writeString(in.resolve("a.jsonl"), "{\"id\": 1}\n{\"id\": 2}\n");
        Files.writeString(in.resolve(".hidden.jsonl"), "{\"id\": 99}\n");
        Files.writeString(in.resolve("_meta.jsonl"), "{\"id\": 98}\n");
        Files.writeString(in.resolve("notes.txt"), "not a JSON file\n");
        Result run = sluice("run", write("read.yaml", """
                sources:
                  events: {type: file, path: in, on_error: dead_letter}
                sinks:
                  out: {type: file, from: events, path: out.jsonl}
                """).toString());
        assertEquals(0, run.code(), run.stderr());
        assertEquals(
                List.of("{\"id\":1}", "{\"id\":2}", "{\"id\":3}", "{\"id\":4}"),
                Files.readAllLines(dir.resolve("out.jsonl")));
        String dead = Files.readString(dir.resolve("read.events.dead-letter.jsonl"));
        assertTrue(dead.contains("b.jsonl:2: "), dead);
    }

    @Test
    void aDirectoryWithoutFilesOfItsFormatOrWithAnotherSchemaIsRefusedNamingTheFile() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        Files.writeString(empty.resolve("notes.txt"), "x\n");
        Result none = sluice("validate", write("none.yaml", """
                sources:
                  events: {type: file, path: empty, format: json}
                sinks:
                  out: {type: stdout, from: events}
                """).toString());
        assertEquals(2, none.code(), none.stderr());
        assertTrue(none.stderr().contains("holds no json files"), none.stderr());

        Path mixed = Files.createDirectories(dir.resolve("mixed"));
        for (String name : List.of("a", "b")) {
            Files.writeString(dir.resolve(name + ".jsonl"), name.equals("a") ? "{\"id\": 1}\n" : "{\"id\": \"x\"}\n");
            Result write = sluice(
                    "run", write(name + ".yaml", """
                    sources:
                      events: {type: file, path: %s.jsonl}
                    sinks:
                      out: {type: file, from: events, path: mixed/%s.parquet}
                    """.formatted(name, name)).toString());
            assertEquals(0, write.code(), write.stderr());
        }
        Result read = sluice("run", write("mixed.yaml", """
                sources:
                  events: {type: file, path: mixed}
                sinks:
                  out: {type: file, from: events, path: out.jsonl}
                """).toString());
        assertEquals(1, read.code(), read.stderr());
        assertTrue(read.stderr().contains("b.parquet has the columns"), read.stderr());
    }

    @Test
    void aDirectoryTakesTheOneFormatItsFilesNameAndRefusesSeveral() throws IOException {
        // "README.txt" sorts before "a.jsonl": the format is not the first file's.
        Path notes = Files.createDirectories(dir.resolve("notes"));
        Files.writeString(notes.resolve("README.txt"), "what these files are\n");
        Files.writeString(notes.resolve("a.jsonl"), "{\"id\": 1}\n");
        Result withReadme = sluice("run", write("notes.yaml", """
                sources:
                  events: {type: file, path: notes}
                sinks:
                  out: {type: file, from: events, path: notes-out.jsonl}
                """).toString());
        assertEquals(0, withReadme.code(), withReadme.stderr());
        assertEquals(List.of("{\"id\":1}"), Files.readAllLines(dir.resolve("notes-out.jsonl")));

        // Reading one format and leaving the other out would lose b.jsonl's rows without a word.
        Path mixed = Files.createDirectories(dir.resolve("two-formats"));
        Files.writeString(mixed.resolve("a.csv"), "id\n1\n");
        Files.writeString(mixed.resolve("b.jsonl"), "{\"id\": 2}\n");
        Result several = sluice("validate", write("several.yaml", """
                sources:
                  events: {type: file, path: two-formats}
                sinks:
                  out: {type: stdout, from: events}
                """).toString());
        assertEquals(2, several.code(), several.stderr());
        assertTrue(
                several.stderr().contains("holds files of several formats: csv (a.csv), json (b.jsonl); set format:"),
                several.stderr());
        Result chosen = sluice("run", write("chosen.yaml", """
                sources:
                  events: {type: file, path: two-formats, format: json}
                sinks:
                  out: {type: file, from: events, path: chosen-out.jsonl}
                """).toString());
        assertEquals(0, chosen.code(), chosen.stderr());
        assertEquals(List.of("{\"id\":2}"), Files.readAllLines(dir.resolve("chosen-out.jsonl")));

        Files.writeString(Files.createDirectories(dir.resolve("no-data")).resolve("README.txt"), "nothing yet\n");
        Result none = sluice("validate", write("no-data.yaml", """
                sources:
                  events: {type: file, path: no-data}
                sinks:
                  out: {type: stdout, from: events}
                """).toString());
        assertEquals(2, none.code(), none.stderr());
        assertTrue(none.stderr().contains("holds no file whose extension names a format"), none.stderr());
    }

    @Test
    void entriesLeftOutAreNamedAndACompressedFileOfTheFormatIsRefused() throws IOException {
        // A subdirectory and a file of another format were left out without a word.
        Path in = Files.createDirectories(dir.resolve("daily"));
        Files.writeString(in.resolve("a.jsonl"), "{\"id\": 1}\n");
        Files.writeString(Files.createDirectories(in.resolve("2026-12")).resolve("b.jsonl"), "{\"id\": 2}\n");
        Files.writeString(in.resolve("notes.txt"), "what these files are\n");
        Result run = sluice("run", write("daily.yaml", """
                sources:
                  events: {type: file, path: daily}
                sinks:
                  out: {type: file, from: events, path: daily-out.jsonl}
                """).toString());
        assertEquals(0, run.code(), run.stderr());
        assertEquals(List.of("{\"id\":1}"), Files.readAllLines(dir.resolve("daily-out.jsonl")));
        assertTrue(
                run.stderr().contains("warning: node 'events'")
                        && run.stderr()
                                .contains(
                                        "not read (only its json files are, subdirectories not): 2026-12/, notes.txt"),
                run.stderr());

        // A compressed JSON-lines file holds rows the core cannot read: refused, not skipped.
        Files.write(in.resolve("c.jsonl.gz"), new byte[] {0x1f, (byte) 0x8b, 8, 0});
        Result refused = sluice("validate", dir.resolve("daily.yaml").toString());
        assertEquals(2, refused.code(), refused.stderr());
        assertTrue(
                refused.stderr().contains("holds c.jsonl.gz, a compressed json file, which is not read"),
                refused.stderr());
    }

    @Test
    void partFilesAreWrittenWholeAndARunThatStartsOverReplacesThem() throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int id = 0; id < 10; id++) {
            lines.append("{\"id\": ").append(id).append("}\n");
        }
        write("ids.jsonl", lines.toString());
        Path pipeline = write("parts.yaml", """
                sources:
                  events: {type: file, path: ids.jsonl}
                sinks:
                  out: {type: file, from: events, path: out, format: csv, parts: true}
                """);
        for (int run = 0; run < 2; run++) {
            Result result = sluice("run", pipeline.toString());
            assertEquals(0, result.code(), result.stderr());
        }
        assertEquals(
                List.of("part-00000001.csv"), names(dir.resolve("out")), "the second run replaced the first's part");
        List<String> expected = new ArrayList<>(List.of("id"));
        for (int id = 0; id < 10; id++) {
            expected.add(Integer.toString(id));
        }
        assertEquals(expected, Files.readAllLines(dir.resolve("out/part-00000001.csv")));
    }

    @Test
    void aPathOfTheWrongKindIsRefusedWithTheWayOut() throws IOException {
        write("ids.jsonl", "{\"id\": 1}\n");
        write("earlier.jsonl", "{\"id\": 0}\n");
        Files.createDirectories(dir.resolve("a-directory"));
        Result directory = sluice("validate", write("d.yaml", """
                sources:
                  events: {type: file, path: ids.jsonl}
                sinks:
                  out: {type: file, from: events, path: a-directory, format: json}
                """).toString());
        assertEquals(2, directory.code(), directory.stderr());
        assertTrue(
                directory.stderr().contains("is a directory; name the file to write, or set parts: true"),
                directory.stderr());
        Result file = sluice("validate", write("f.yaml", """
                sources:
                  events: {type: file, path: ids.jsonl}
                sinks:
                  out: {type: file, from: events, path: earlier.jsonl, parts: true}
                """).toString());
        assertEquals(2, file.code(), file.stderr());
        assertTrue(file.stderr().contains("is a file; with parts: true, name the directory to write"), file.stderr());
    }

    private static List<String> names(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }
}
