package dev.sluice.cli;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.bridge.NativeCore;
import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line end to end, in-process: runs, validation errors and their exit codes. */
class CliTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    @Test
    void runIsParsedAlikeWithAndWithoutPicocli() {
        List<String[]> direct = List.of(
                new String[] {"run", "p.yaml"},
                new String[] {"run", "p.yaml", "--state-dir", "s", "--verbose"},
                new String[] {"run", "--bridge", "jni", "p.yaml"},
                new String[] {"run", "--verbose", "--bridge", "ffm", "--state-dir", "/tmp/x y", "dir/p.yaml"});
        for (String[] args : direct) {
            RunCommand fast = RunCommand.parseDirect(args);
            picocli.CommandLine cli = new picocli.CommandLine(new Main());
            RunCommand parsed =
                    (RunCommand) cli.parseArgs(args).subcommand().commandSpec().userObject();
            String what = String.join(" ", args);
            assertEquals(parsed.file, fast.file, what);
            assertEquals(parsed.stateDir, fast.stateDir, what);
            assertEquals(parsed.options.verbose, fast.options.verbose, what);
            assertEquals(parsed.options.bridge, fast.options.bridge, what);
        }
        // Everything else is picocli's: help, other commands, --opt=value, repeats, bad values, missing file.
        for (String[] args : List.of(
                new String[] {"run"},
                new String[] {"run", "--help"},
                new String[] {"validate", "p.yaml"},
                new String[] {"run", "--state-dir=s", "p.yaml"},
                new String[] {"run", "p.yaml", "q.yaml"},
                new String[] {"run", "p.yaml", "--verbose", "--verbose"},
                new String[] {"run", "p.yaml", "--bridge", "c"},
                new String[] {"run", "p.yaml", "--state-dir"},
                new String[] {"run", "--", "p.yaml"},
                new String[] {"--version"})) {
            assertEquals(null, RunCommand.parseDirect(args), String.join(" ", args));
        }
    }

    @Test
    void theQuickstartRunsEndToEnd() throws IOException {
        Path repo = Path.of(System.getProperty("sluice.repo.root", ".."))
                .toAbsolutePath()
                .normalize();
        Path example = repo.resolve("examples/quickstart.yaml");
        // Same pipeline, console sink swapped for a blackhole to keep the test log readable
        // (ci/test.sh runs the real quick start through the launcher and checks its stdout).
        Path copy = write("quickstart.yaml", Files.readString(example).replace("type: stdout", "type: blackhole"));
        Result run = sluice("run", copy.toString());
        assertEquals(0, run.code(), run.stderr());
        assertTrue(run.stderr().contains("[quickstart] completed"), run.stderr());
        // 20 000 Nexmark events hold 46/50 bids: q1 keeps every one of them.
        Path parquet = dir.resolve("output/bids_in_euro.parquet");
        long rows = 0;
        try (var allocator =
                        dev.sluice.bridge.ArrowC.rootAllocator().newChildAllocator("read-back", 0, Long.MAX_VALUE);
                var reader = dev.sluice.bridge.NativeFileReader.open(
                        allocator, java.util.Map.of("path", parquet.toString(), "format", "parquet"), null)) {
            for (var read = reader.next(); read != null; read = reader.next()) {
                try (var batch = read.batch()) {
                    rows += batch.rowCount();
                }
            }
            assertEquals(
                    List.of("auction", "bidder", "price", "dateTime", "extra"),
                    reader.schema().getFields().stream().map(f -> f.getName()).toList());
        }
        assertEquals(18_400, rows);
        assertEquals(0, NativeCore.bridge().liveHandles(), "every native handle freed after the run");
    }

    @Test
    void badLinesGoToTheDeadLetterAndTheRunGoesOn() throws IOException {
        write("events.jsonl", """
                {"id": 1, "kind": "a", "amount": 5}
                {"id": 2, "kind": "b", "amount": 50}
                {"id": "three", "kind": "c", "amount": 12}
                not json at all

                {"id": 5, "kind": "e", "amount": 500.5}
                {"id": 6, "kind": "f", "amount": 10}
                """);
        Path pipeline = write("bad-lines.yaml", """
                sources:
                  events:
                    type: file
                    path: events.jsonl
                    schema: {id: bigint, kind: string, amount: double}
                    batch_size: 3
                transforms:
                  big:
                    type: sql
                    sql: SELECT id, kind, amount FROM events WHERE amount >= 10
                sinks:
                  out:
                    type: file
                    from: big
                    path: out/big.jsonl
                """);
        Result run = sluice("run", pipeline.toString());
        assertEquals(0, run.code(), run.stderr());
        List<JsonNode> rows = readJsonLines(dir.resolve("out/big.jsonl"));
        assertEquals(
                List.of(2L, 5L, 6L),
                rows.stream().map(r -> r.get("id").asLong()).toList());
        List<JsonNode> dead = readJsonLines(dir.resolve("out/bad-lines.events.dead-letter.jsonl"));
        assertEquals(
                List.of(3L, 4L),
                dead.stream().map(r -> r.get("position").asLong()).toList());
        assertEquals("not json at all", dead.get(1).get("record").asText());
        assertTrue(
                dead.get(0).get("error").asText().contains("events.jsonl:3"),
                dead.get(0).toString());
        assertTrue(run.stderr().contains("rejected 2"), run.stderr());
        assertTrue(run.stderr().contains("2 rejected records written to"), run.stderr());
    }

    /**
     * Issue 10: records glued together or split across lines are dead letters, not rows; a blank
     * line is skipped and counted in the summary.
     */
    @Test
    void gluedAndSplitRecordsAreDeadLettersAndBlankLinesAreCounted() throws IOException {
        write("glued.jsonl", """
                {"id":1,"v":"a"}
                {"id":2000001,"v":"glued-a"}{"id":2000002,"v":"glued-b"}
                {"id":2000003,
                "v":"glued-c"}

                {"id":-9223372036854775809,"v":"too small"}
                {"id":6,"v":"f"}
                """);
        Path pipeline = write("glued.yaml", """
                sources:
                  events: {type: file, path: glued.jsonl, schema: {id: bigint, v: string}}
                sinks:
                  out: {type: file, from: events, path: out/glued.jsonl}
                """);
        Result run = sluice("run", pipeline.toString());
        assertEquals(0, run.code(), run.stderr());
        List<JsonNode> rows = readJsonLines(dir.resolve("out/glued.jsonl"));
        assertEquals(
                List.of("1:a", "6:f"),
                rows.stream()
                        .map(r -> r.get("id").asLong() + ":" + r.get("v").asText())
                        .toList());
        List<JsonNode> dead = readJsonLines(dir.resolve("out/glued.events.dead-letter.jsonl"));
        assertEquals(
                List.of(2L, 3L, 4L, 6L),
                dead.stream().map(r -> r.get("position").asLong()).toList());
        assertTrue(
                dead.get(3).get("error").asText().contains("'id'"), dead.get(3).toString());
        assertTrue(run.stderr().contains("rejected 4"), run.stderr());
        assertTrue(run.stderr().contains("skipped 1 (blank lines)"), run.stderr());
    }

    /**
     * A SQL transform with {@code on_error: dead_letter} sets aside exactly the rows it fails
     * on — alone, adjacent, first and last of their batch, in every branch of a UNION ALL — and
     * the other rows' output goes on, in order, once; {@code skip} counts them; the default
     * fails the run naming the node.
     */
    @Test
    void sqlOnErrorSetsAsideTheRowsTheQueryFailsOn() throws IOException {
        StringBuilder lines = new StringBuilder();
        List<Integer> bad = List.of(1, 4, 5, 8, 13, 20);
        for (int id = 1; id <= 20; id++) {
            String amount = bad.contains(id) ? "x" + id : Integer.toString(id * 10);
            lines.append("{\"id\": ")
                    .append(id)
                    .append(", \"amount\": \"")
                    .append(amount)
                    .append("\"}\n");
        }
        write("amounts.jsonl", lines.toString());
        String pipeline = """
                sources:
                  events: {type: file, path: amounts.jsonl, schema: {id: bigint, amount: string}, batch_size: 4}
                transforms:
                  parsed:
                    type: sql
                    sql: >-
                      SELECT id, CAST(amount AS BIGINT) AS amount FROM events
                      UNION ALL SELECT id + 100, CAST(amount AS BIGINT) + 1 FROM events WHERE id > 10
                    %s
                sinks:
                  out: {type: file, from: parsed, path: out/parsed.jsonl}
                """;
        Result run = sluice(
                "run",
                write("dead.yaml", pipeline.formatted("on_error: dead_letter")).toString());
        assertEquals(0, run.code(), run.stderr());
        List<Long> good = new java.util.ArrayList<>();
        for (long id = 1; id <= 20; id++) {
            if (!bad.contains((int) id)) {
                good.add(id);
            }
        }
        List<JsonNode> rows = readJsonLines(dir.resolve("out/parsed.jsonl"));
        List<Long> firstBranch = rows.stream()
                .map(r -> r.get("id").asLong())
                .filter(id -> id < 100)
                .toList();
        assertEquals(good, firstBranch, "every good row once, in order");
        assertEquals(
                good.stream().filter(id -> id > 10).map(id -> id + 100).toList(),
                rows.stream()
                        .map(r -> r.get("id").asLong())
                        .filter(id -> id > 100)
                        .toList());
        rows.forEach(r -> assertEquals(
                (r.get("id").asLong() % 100) * 10 + (r.get("id").asLong() > 100 ? 1 : 0),
                r.get("amount").asLong(),
                r.toString()));
        List<JsonNode> dead = readJsonLines(dir.resolve("out/dead.parsed.dead-letter.jsonl"));
        assertEquals(
                bad.stream()
                        .map(id -> "{\"id\":" + id + ",\"amount\":\"x" + id + "\"}")
                        .toList(),
                dead.stream().map(r -> r.get("record").asText().strip()).toList());
        assertTrue(
                dead.get(0).get("error").asText().contains("'x1'"), dead.get(0).toString());
        assertTrue(dead.stream().allMatch(r -> r.get("node").asText().equals("parsed")), dead.toString());
        assertTrue(run.stderr().contains("rejected 6"), run.stderr());

        Result skip = sluice(
                "run", write("skip.yaml", pipeline.formatted("on_error: skip")).toString());
        assertEquals(0, skip.code(), skip.stderr());
        assertEquals(rows.size(), readJsonLines(dir.resolve("out/parsed.jsonl")).size());
        assertTrue(skip.stderr().contains("rejected 6"), skip.stderr());

        Result fail = sluice("run", write("fail.yaml", pipeline.formatted("")).toString());
        assertEquals(Main.EXIT_FAILED, fail.code(), fail.stderr());
        assertTrue(fail.stderr().contains("node 'parsed'") && fail.stderr().contains("'x1'"), fail.stderr());
    }

    /** Issue 10: a column of mixed types is inferred as a string, with a warning naming it. */
    @Test
    void mixedTypesInferAStringColumnWithAWarning() throws IOException {
        write("mixed.jsonl", """
                {"id": 1, "code": 7}
                {"id": 2, "code": "x7"}
                """);
        Path pipeline = write("mixed.yaml", """
                sources:
                  events: {type: file, path: mixed.jsonl}
                sinks:
                  out: {type: file, from: events, path: out/mixed.jsonl}
                """);
        Result run = sluice("run", pipeline.toString());
        assertEquals(0, run.code(), run.stderr());
        assertTrue(
                run.stderr().contains("warning: node 'events'") && run.stderr().contains("column 'code'"),
                run.stderr());
        assertFalse(run.stderr().contains("Json error: Json error"), run.stderr());
        List<JsonNode> rows = readJsonLines(dir.resolve("out/mixed.jsonl"));
        assertEquals(
                List.of("7", "x7"),
                rows.stream().map(r -> r.get("code").asText()).toList());
        assertTrue(rows.get(0).get("code").isTextual(), rows.toString());
    }

    @Test
    void onErrorFailStopsTheRunWithTheLine() throws IOException {
        write("events.jsonl", "{\"id\": 1}\n{\"id\": \"x\"}\n");
        Path pipeline = write("fail.yaml", """
                sources:
                  events: {type: file, path: events.jsonl, schema: {id: bigint}, on_error: fail}
                sinks:
                  out: {type: blackhole, from: events}
                """);
        Result run = sluice("run", pipeline.toString());
        assertEquals(Main.EXIT_FAILED, run.code(), run.stderr());
        assertTrue(run.stderr().contains("node 'events'") && run.stderr().contains("events.jsonl:2"), run.stderr());
        assertFalse(run.stderr().contains("\tat "), "no stack trace without --verbose: " + run.stderr());
    }

    @Test
    void configurationErrorsNameFileLineNodeAndCause() throws IOException {
        Path pipeline = write("broken.yaml", """
                sources:
                  bid:
                    type: generator
                    entity: bid
                    batchsize: 10
                  other:
                    type: kafak
                transforms:
                  t:
                    type: sql
                    sql: SELECT price FROM bid
                sinks:
                  out:
                    type: stdout
                    from: t
                """);
        Result result = sluice("validate", pipeline.toString());
        assertEquals(Main.EXIT_CONFIG, result.code());
        assertTrue(
                result.stderr().contains("broken.yaml:5:5: node 'bid': unknown key 'batchsize'")
                        && result.stderr().contains("did you mean 'batch_size'"),
                result.stderr());
        assertTrue(
                result.stderr().contains("broken.yaml:7:11: node 'other': unknown source type 'kafak'"),
                result.stderr());
        assertFalse(result.stderr().contains("\tat "), result.stderr());
    }

    @Test
    void sqlErrorsPointAtTheSql() throws IOException {
        Path unknownColumn = write("column.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT nope FROM bid
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result column = sluice("validate", unknownColumn.toString());
        assertEquals(Main.EXIT_CONFIG, column.code());
        assertTrue(
                column.stderr().contains("column.yaml:6:5: node 't': SQL error:")
                        && column.stderr().contains("nope"),
                column.stderr());

        // json_get's union of JSON types failed the run at the sink ("Unsupported data type for JSON encoding").
        Path union = write("union.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: >-
                      SELECT json_get('{"a": 1}', 'a') AS ga, auction FROM bid
                sinks:
                  out: {type: stdout, from: t}
                """);
        Result unionResult = sluice("validate", union.toString());
        assertEquals(Main.EXIT_CONFIG, unionResult.code(), unionResult.stderr());
        assertTrue(
                unionResult
                        .stderr()
                        .contains("union.yaml:6:5: node 't': SQL error: column 'ga' holds a union of JSON types"),
                unionResult.stderr());

        Path stateful = write("stateful.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT auction, count(*) FROM bid GROUP BY auction
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result statefulResult = sluice("validate", stateful.toString());
        assertEquals(Main.EXIT_CONFIG, statefulResult.code());
        assertTrue(statefulResult.stderr().contains("stateful SQL is not supported"), statefulResult.stderr());

        // Two output columns of one name became a JSON record with the key twice (readers keep one).
        write("sides.csv", "auction,label\n1,one\n");
        Path repeated = write("repeated.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    tables:
                      s: {path: sides.csv, schema: {auction: bigint, label: string}}
                    sql: SELECT bid.auction, s.auction, s.label FROM bid JOIN s ON bid.auction = s.auction
                sinks:
                  out: {type: stdout, from: t}
                """);
        Result repeatedResult = sluice("validate", repeated.toString());
        assertEquals(Main.EXIT_CONFIG, repeatedResult.code(), repeatedResult.stderr());
        assertTrue(
                repeatedResult
                        .stderr()
                        .contains("repeated.yaml:8:5: node 't': the query's output has two columns named 'auction' "
                                + "(columns 1 and 2)"),
                repeatedResult.stderr());

        Path repeatedField = write("repeated-field.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT auction, make_array(named_struct('a', bidder, 'a', price)) AS s FROM bid
                sinks:
                  out: {type: stdout, from: t}
                """);
        Result repeatedFieldResult = sluice("validate", repeatedField.toString());
        assertEquals(Main.EXIT_CONFIG, repeatedFieldResult.code(), repeatedFieldResult.stderr());
        assertTrue(
                repeatedFieldResult.stderr().contains("has two fields named 'a' in column 's'"),
                repeatedFieldResult.stderr());

        Path unknownTable = write("table.yaml", """
                sources:
                  bid: {type: generator, entity: bid, count: 10}
                transforms:
                  t:
                    type: sql
                    sql: SELECT * FROM bids
                sinks:
                  out: {type: blackhole, from: t}
                """);
        Result table = sluice("validate", unknownTable.toString());
        assertEquals(Main.EXIT_CONFIG, table.code());
        assertTrue(
                table.stderr().contains("reads 'bids', but the pipeline has no source or transform of that name"),
                table.stderr());
    }

    @Test
    void missingFilesAndBadYamlAreClearErrors() throws IOException {
        Result missing = sluice("validate", dir.resolve("nope.yaml").toString());
        assertEquals(Main.EXIT_CONFIG, missing.code());
        assertTrue(missing.stderr().contains("nope.yaml"), missing.stderr());

        Path source = write("missing-input.yaml", """
                sources:
                  in: {type: file, path: data/none.jsonl}
                sinks:
                  out: {type: blackhole, from: in}
                """);
        Result input = sluice("run", source.toString());
        assertEquals(Main.EXIT_CONFIG, input.code());
        assertTrue(
                input.stderr().contains("missing-input.yaml:2:")
                        && input.stderr().contains("none.jsonl does not exist"),
                input.stderr());

        Path yaml = write("syntax.yaml", "sources:\n  a: {type: generator\n");
        Result syntax = sluice("validate", yaml.toString());
        assertEquals(Main.EXIT_CONFIG, syntax.code());
        assertTrue(syntax.stderr().contains("syntax.yaml:"), syntax.stderr());
    }

    @Test
    void everyExamplePipelineIsValid() throws IOException {
        Path examples = Path.of(System.getProperty("sluice.repo.root", ".."))
                .toAbsolutePath()
                .normalize()
                .resolve("examples");
        List<Path> files;
        try (var list = Files.list(examples)) {
            files = list.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertFalse(files.isEmpty());
        for (Path file : files) {
            Result result = sluice("validate", file.toString());
            assertEquals(0, result.code(), file + ": " + result.stderr());
        }
    }

    @Test
    void csvInParquetOutAndParquetBackIn() throws IOException {
        write("trades.csv", """
                id;symbol;qty
                1;ACME;100
                2;INITECH;x
                3;GLOBEX;75
                """);
        Path first = write("csv.yaml", """
                sources:
                  trades: {type: file, path: trades.csv, delimiter: ";", on_error: skip,
                           schema: {id: bigint, symbol: string, qty: int}}
                transforms:
                  t: {type: sql, sql: "SELECT id, lower(symbol) AS symbol, qty * 2 AS qty2 FROM trades"}
                sinks:
                  out: {type: file, from: t, path: out/trades.parquet}
                """);
        Result csv = sluice("run", first.toString());
        assertEquals(0, csv.code(), csv.stderr());
        assertTrue(csv.stderr().contains("rejected 1"), csv.stderr());
        Path second = write("parquet.yaml", """
                sources:
                  back: {type: file, path: out/trades.parquet}
                sinks:
                  out: {type: file, from: back, path: out/trades.jsonl}
                """);
        Result parquet = sluice("run", second.toString());
        assertEquals(0, parquet.code(), parquet.stderr());
        assertEquals(
                List.of("{\"id\":1,\"symbol\":\"acme\",\"qty2\":200}", "{\"id\":3,\"symbol\":\"globex\",\"qty2\":150}"),
                Files.readAllLines(dir.resolve("out/trades.jsonl")));

        // A run that writes no row replaces the Parquet file too: it used to keep the last
        // run's file, whose rows then passed for this run's.
        Files.writeString(
                dir.resolve("csv.yaml"),
                Files.readString(first).replace("FROM trades", "FROM trades WHERE qty > 1000"));
        Result none = sluice("run", first.toString());
        assertEquals(0, none.code(), none.stderr());
        Result back = sluice("run", second.toString());
        assertEquals(0, back.code(), back.stderr());
        assertEquals(List.of(), Files.readAllLines(dir.resolve("out/trades.jsonl")), "the Parquet file holds no row");
    }

    @Test
    void theConfigurationReferenceIsUpToDate() throws IOException {
        Path repo = Path.of(System.getProperty("sluice.repo.root", ".."))
                .toAbsolutePath()
                .normalize();
        String generated = dev.sluice.config.ConfigDocs.markdown(dev.sluice.config.StageTypes.installed());
        String committed = Files.readString(repo.resolve("docs/configuration.md"));
        assertEquals(
                generated,
                committed,
                "docs/configuration.md is stale: regenerate it with `./sluice config-docs > docs/configuration.md`");
    }

    private static List<JsonNode> readJsonLines(Path file) throws IOException {
        return Files.readAllLines(file).stream()
                .filter(l -> !l.isBlank())
                .map(l -> {
                    try {
                        return JSON.readTree(l);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .toList();
    }
}
