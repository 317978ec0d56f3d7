package dev.sluice.connector.script;

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
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The script transform: JavaScript per row, sandboxed, through whole pipelines. */
class ScriptTransformTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path pipeline(String input, String script, String more) throws IOException {
        Files.writeString(dir.resolve("in.jsonl"), input);
        return Files.writeString(dir.resolve("p.yaml"), """
                sources:
                  events: {type: file, path: in.jsonl, schema: {id: bigint, name: string, price: double}}
                transforms:
                  shaped:
                    type: script
                    from: events
                    script: |
                %s
                %s
                sinks:
                  out: {type: file, from: shaped, path: out.jsonl}
                """.formatted(
                        script.indent(6).stripTrailing(), more.indent(4).stripTrailing()));
    }

    private static String rows(int n) {
        StringBuilder out = new StringBuilder();
        for (int id = 1; id <= n; id++) {
            out.append("{\"id\": %d, \"name\": \"n%dé\", \"price\": %d.25}\n".formatted(id, id, id));
        }
        return out.toString();
    }

    @Test
    void aScriptChangesDropsAndExpandsRows() throws Exception {
        Path p = pipeline(rows(3000), """
                function process(row) {
                  if (row.id % 5 === 0) return null;
                  row.name = row.name.toUpperCase();
                  row.price = row.price * 2;
                  if (row.id % 7 === 0) return [row, {id: row.id, name: 'copy'}];
                  return row;
                }
                """, "");
        Result run = sluice("run", p.toString());
        assertEquals(0, run.code(), run.stderr());
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= 3000; id++) {
            if (id % 5 == 0) {
                continue;
            }
            String name = ("n" + id + "é").toUpperCase(Locale.ROOT);
            expected.add("{\"id\":%d,\"name\":\"%s\",\"price\":%s}".formatted(id, name, (id + 0.25) * 2));
            if (id % 7 == 0) {
                expected.add("{\"id\":%d,\"name\":\"copy\",\"price\":null}".formatted(id));
            }
        }
        assertEquals(expected, Files.readAllLines(dir.resolve("out.jsonl")));
    }

    /**
     * Rhino does not bound memory: a script whose globals keep growing filled the heap and the
     * run died with a bare OutOfMemoryError. Now the node's error names it, in a child JVM with a
     * small heap so that filling it is quick and touches no other test.
     */
    @Test
    void aScriptThatFillsTheHeapFailsTheRunNamingItsNode() throws Exception {
        Path p = pipeline(rows(200), """
                var kept = [];
                function process(row) {
                  for (var i = 0; i < 100000; i++) kept.push({i: i, text: 'row ' + row.id + ' ' + i});
                  return row;
                }
                """, "");
        Path stderr = dir.resolve("stderr");
        Process run = new ProcessBuilder(dev.sluice.cli.ChildJvm.command("96m", "run", p.toString()))
                .redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(stderr.toFile())
                .start();
        assertTrue(run.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "no exit within 120 s");
        String err = Files.readString(stderr);
        assertEquals(dev.sluice.cli.Main.EXIT_FAILED, run.exitValue(), err);
        assertTrue(err.contains("node 'shaped': the script filled the heap ("), err);
        assertTrue(!err.contains("node 'shaped': node 'shaped'"), err);
        assertTrue(err.contains("MiB) on a batch of "), err);
        assertTrue(!err.contains("OutOfMemoryError"), err);
    }

    @Test
    void whatAScriptGetsWrongGoesToOnErrorWithTheReasonAndLosesNothingElse() throws Exception {
        String input = rows(8)
                + "{\"id\": 9007199254740993, \"name\": \"past 2^53\", \"price\": 1}\n"
                + "{\"id\": 9007199254740992, \"name\": \"2^53\", \"price\": 1}\n"
                // A double holds 2^60 exactly, but JSON.stringify writes 1152921504606847000.
                + "{\"id\": 1152921504606846976, \"name\": \"2^60\", \"price\": 1}\n";
        Path p = pipeline(input, """
                function deeper(n) { return deeper(n + 1) + 1; }
                function process(row) {
                  if (row.id === 2) deeper(0);
                  if (row.id === 3) throw new Error('no third row');
                  if (row.id === 4) return 42;
                  if (row.id === 6) { row.price = row.price / 0; }
                  if (row.id === 8) { row.id = 'eight'; }
                  return row;
                }
                """, "on_error: dead_letter\ndead_letter: dead.jsonl");
        Result run = sluice("run", p.toString());
        assertEquals(0, run.code(), run.stderr());

        List<Long> ids = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("out.jsonl"))) {
            ids.add(JSON.readTree(line).get("id").asLong());
        }
        assertEquals(List.of(1L, 5L, 7L, 9007199254740992L), ids);
        String dead = Files.readString(dir.resolve("dead.jsonl"));
        assertEquals(7, dead.lines().count(), dead);
        assertTrue(dead.contains("process threw Error: no third row (script line 4)"), dead);
        assertTrue(dead.contains("Exceeded maximum stack depth"), dead); // a row's error, not a crashed JVM
        assertTrue(dead.contains("\"error\":\"process returned number, not a row (an object)"), dead);
        assertTrue(dead.contains("field \\\"price\\\" is Infinity, which JSON cannot carry"), dead);
        assertTrue(dead.contains("a row process returned for row 7 does not fit the schema"), dead);
        assertTrue(dead.contains("holds 9007199254740993, which a JavaScript number cannot carry exactly"), dead);
        assertTrue(dead.contains("holds 1152921504606846976, which a JavaScript number cannot carry exactly"), dead);
    }

    @Test
    void theSandboxHasNoJavaAndNoEndlessLoop() throws Exception {
        Path java = pipeline(rows(2), """
                function process(row) {
                  java.lang.System.exit(3);
                  return row;
                }
                """, "");
        Result noJava = sluice("run", java.toString());
        assertEquals(1, noJava.code(), noJava.stderr());
        assertTrue(noJava.stderr().contains("\"java\" is not defined"), noJava.stderr());

        Path packages = pipeline(rows(2), """
                function process(row) {
                  row.name = String(Packages.java.lang.System.getenv('HOME'));
                  return row;
                }
                """, "");
        Result noPackages = sluice("run", packages.toString());
        assertEquals(1, noPackages.code(), noPackages.stderr());
        assertTrue(noPackages.stderr().contains("\"Packages\" is not defined"), noPackages.stderr());

        // Errors Rhino raises carry their Java exception unless no Java class is visible to scripts:
        // e.rhinoException.getClass() would hand the script Java reflection.
        Path caught = pipeline(rows(1), """
                function deeper(n) { return deeper(n + 1) + 1; }
                function process(row) {
                  try { deeper(0); } catch (e) { row.name = typeof e.rhinoException + ' ' + typeof e.javaException; }
                  return row;
                }
                """, "");
        Result noJavaObjects = sluice("run", caught.toString());
        assertEquals(0, noJavaObjects.code(), noJavaObjects.stderr());
        assertEquals(
                "undefined undefined",
                JSON.readTree(Files.readAllLines(dir.resolve("out.jsonl")).get(0))
                        .get("name")
                        .asText());

        // A catch in the script does not stop the deadline.
        Path loop = pipeline(rows(2), """
                function process(row) {
                  try { while (true) {} } catch (e) { return row; }
                }
                """, "timeout: 300ms");
        Result endless = sluice("run", loop.toString());
        assertEquals(1, endless.code(), endless.stderr());
        assertTrue(
                endless.stderr()
                        .contains("node 'shaped': the script ran longer than timeout (300 ms) on a batch of 2 rows"),
                endless.stderr());

        Path topLevel = pipeline(rows(2), "while (true) {}\nfunction process(row) { return row; }", "timeout: 300ms");
        Result validate = sluice("validate", topLevel.toString());
        assertEquals(2, validate.code(), validate.stderr());
        assertTrue(validate.stderr().contains("its top level ran longer than timeout"), validate.stderr());
    }

    @Test
    void validationNamesTheScriptsLineAndWhatIsMissing() throws Exception {
        Path syntax = pipeline(rows(1), "function process(row) {\n  return row +;\n}", "");
        Result bad = sluice("validate", syntax.toString());
        assertEquals(2, bad.code(), bad.stderr());
        assertTrue(bad.stderr().contains("node 'shaped'") && bad.stderr().contains("line 2: "), bad.stderr());

        Path none = pipeline(rows(1), "function handle(row) { return row; }", "");
        Result missing = sluice("validate", none.toString());
        assertEquals(2, missing.code(), missing.stderr());
        assertTrue(missing.stderr().contains("defines no function process(row)"), missing.stderr());

        Path declared = pipeline(
                rows(1),
                "function process(row) { return {id: row.id, total: row.price}; }",
                "schema: {id: bigint, total: double}");
        Result valid = sluice("validate", declared.toString());
        assertEquals(0, valid.code(), valid.stderr());
    }
}
