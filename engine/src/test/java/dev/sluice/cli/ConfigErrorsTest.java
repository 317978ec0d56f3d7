package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every configuration problem of a file is reported, each located and named; cycles node by node. */
class ConfigErrorsTest {

    @TempDir
    Path dir;

    /** {@code validate FILE}: the exit code and the "error:" lines of stderr. */
    private record Result(int code, List<String> errors, String stderr) {}

    private Result validate(String yaml) throws IOException {
        Path file = dir.resolve("p.yaml");
        Files.writeString(file, yaml);
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = Main.execute("validate", file.toString());
            String text = err.toString(StandardCharsets.UTF_8);
            return new Result(
                    code,
                    text.lines()
                            .filter(l -> l.startsWith("error: "))
                            .map(l -> l.replace(file.toString(), "p.yaml"))
                            .toList(),
                    text);
        } finally {
            System.setErr(original);
        }
    }

    @Test
    void aCycleIsNamedNodeByNodeBesidesAnUnreadSource() throws IOException {
        Result result = validate("""
                sources:
                  s: {type: generator, entity: bid, count: 1}
                transforms:
                  a: {type: sql, sql: SELECT * FROM c}
                  b: {type: sql, sql: SELECT * FROM a}
                  c: {type: sql, sql: SELECT * FROM b}
                sinks:
                  out: {type: blackhole, from: a}
                """);
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertEquals(
                List.of(
                        "error: p.yaml:2:3: node 's': nothing reads this source; name it in a transform's SQL, a sink's `from:` or a table's `from:`",
                        "error: p.yaml:4:18: node 'a': the pipeline has a cycle: a → b → c → a (each node reads the one before it); "
                                + "rows cannot flow around a loop"),
                result.errors());
    }

    @Test
    void aCycleNamesOnlyItsOwnNodes() throws IOException {
        Result result = validate("""
                sources:
                  s: {type: generator, entity: bid, count: 1}
                transforms:
                  early: {type: sql, sql: SELECT * FROM s}
                  a: {type: sql, sql: SELECT * FROM early UNION ALL SELECT * FROM b}
                  b: {type: sql, sql: SELECT * FROM a}
                  self: {type: sql, sql: SELECT * FROM self UNION ALL SELECT * FROM s}
                sinks:
                  out: {type: blackhole, from: [b, self]}
                """);
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertEquals(
                List.of(
                        "error: p.yaml:5:18: node 'a': the pipeline has a cycle: a → b → a (each node reads the one before it); "
                                + "rows cannot flow around a loop",
                        "error: p.yaml:7:21: node 'self': the pipeline has a cycle: self → self (each node reads the one before it); "
                                + "rows cannot flow around a loop"),
                result.errors());
    }

    @Test
    void everyBadSettingIsReportedTheCheckpointBlockToo() throws IOException {
        Result result = validate("""
                checkpoint: {interval: soon, timeout: 0s}
                sources:
                  g: {type: generator, entity: bid, count: -1, batch_size: lots}
                sinks:
                  out: {type: blackhole, from: g}
                """);
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertEquals(4, result.errors().size(), result.stderr());
        assertTrue(result.errors().get(0).startsWith("error: p.yaml:1:24: checkpoint.interval: "), result.stderr());
        assertEquals(
                "error: p.yaml:1:39: checkpoint.timeout must be positive",
                result.errors().get(1));
        assertTrue(result.errors().get(2).startsWith("error: p.yaml:3:44: node 'g': key 'count' "), result.stderr());
        assertTrue(
                result.errors().get(3).startsWith("error: p.yaml:3:60: node 'g': key 'batch_size': expected int"),
                result.stderr());
    }

    @Test
    void badInspectSettingsAreNamedWithTheirLines() throws IOException {
        Result result = validate("""
                inspect:
                  sample_rows: -3
                  sample_window: 10ms
                  mask_columns: email
                  sample_every: 2
                sources:
                  g: {type: generator, entity: bid, count: 1}
                sinks:
                  out: {type: blackhole, from: g}
                """);
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertEquals(
                List.of(
                        "error: p.yaml:2:16: inspect.sample_rows must be a whole number from 0 to 1000, got -3",
                        "error: p.yaml:3:18: inspect.sample_window must be at least 100ms",
                        "error: p.yaml:4:17: inspect.mask_columns must be a list of column names, got 'email'",
                        "error: p.yaml:5:3: unknown key 'inspect.sample_every'; known: sample_rows, sample_window,"
                                + " mask_columns"),
                result.errors());
    }

    @Test
    void everyStageThatFailsToOpenIsReportedNotOnlyTheFirst() throws IOException {
        Files.writeString(dir.resolve("in.jsonl"), "{\"id\": 1}\n");
        Result result = validate("""
                sources:
                  g: {type: generator, entity: bid, count: 1}
                  missing: {type: file, path: nowhere.jsonl, schema: {id: bigint}}
                  typo: {type: file, path: in.jsonl, schema: {id: bigitn}}
                transforms:
                  t: {type: sql, sql: SELECT nope FROM g}
                  after_missing: {type: sql, sql: SELECT id FROM missing}
                sinks:
                  o1: {type: blackhole, from: t}
                  o2: {type: blackhole, from: after_missing}
                  o3: {type: blackhole, from: typo}
                """);
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertEquals(3, result.errors().size(), result.stderr());
        assertTrue(result.errors().get(0).startsWith("error: p.yaml:3:25: node 'missing': the file "), result.stderr());
        assertTrue(result.errors().get(1).startsWith("error: p.yaml:4:38: node 'typo': "), result.stderr());
        assertTrue(result.errors().get(1).contains("bigitn"), result.stderr());
        assertTrue(result.errors().get(2).startsWith("error: p.yaml:6:18: node 't': SQL error: "), result.stderr());
        // Nodes after a failed one are not opened, and not reported: their input is the problem.
        assertFalse(result.stderr().contains("after_missing"), result.stderr());
    }

    @Test
    void exactlyOnceIsRefusedForEverySourceAndSinkThatCannotTakePart() throws IOException {
        Result result = validate("""
                delivery: exactly_once
                sources:
                  g: {type: generator, entity: bid, count: 1}
                transforms:
                  t: {type: sql, sql: SELECT * FROM g}
                sinks:
                  out: {type: blackhole, from: t}
                  also: {type: stdout, from: t}
                """);
        assertEquals(Main.EXIT_CONFIG, result.code());
        String reason = "needs every source and sink to commit its epoch atomically with the others, and a ";
        assertEquals(
                List.of(
                        "error: p.yaml:3:3: node 'g': delivery: exactly_once (line 1) " + reason
                                + "`generator` source cannot: only kafka sources and sinks can; "
                                + "use delivery: at_least_once with idempotent sinks",
                        "error: p.yaml:7:3: node 'out': delivery: exactly_once (line 1) " + reason
                                + "`blackhole` sink cannot: only kafka sources and sinks can; "
                                + "use delivery: at_least_once with idempotent sinks",
                        "error: p.yaml:8:3: node 'also': delivery: exactly_once (line 1) " + reason
                                + "`stdout` sink cannot: only kafka sources and sinks can; "
                                + "use delivery: at_least_once with idempotent sinks"),
                result.errors());
        // The same pipeline at-least-once is fine, and so is the explicit default.
        assertEquals(0, validate("delivery: at_least_once\n" + """
                sources:
                  g: {type: generator, entity: bid, count: 1}
                sinks:
                  out: {type: blackhole, from: g}
                """).code());
        Result unknown = validate("""
                delivery: twice
                sources:
                  g: {type: generator, entity: bid, count: 1}
                sinks:
                  out: {type: blackhole, from: g}
                """);
        assertEquals(
                List.of("error: p.yaml:1:11: delivery must be one of at_least_once, exactly_once, got 'twice'"),
                unknown.errors());
    }
}
