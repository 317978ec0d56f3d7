package dev.sluice.runtime;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.cli.InProcessCli.Result;
import dev.sluice.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic tables ({@code tables:}) end to end through the CLI: a table filled from a stream of
 * upserts and deletes, joined and tested with {@code dynamic_contains} by a transform while it
 * changes (every answer checked against a map the test keeps itself), restored from a checkpoint
 * without replaying what filled it, its row limit, and the configuration errors.
 */
class DynamicTableTest {

    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    private List<JsonNode> rows(String file) throws IOException {
        List<JsonNode> rows = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve(file))) {
            if (!line.isBlank()) {
                rows.add(JSON.readTree(line));
            }
        }
        return rows;
    }

    /** A text field, or "null" when it is NULL or absent. */
    private static String text(JsonNode row, String field) {
        JsonNode value = row.get(field);
        return value == null || value.isNull() ? "null" : value.asText();
    }

    /**
     * One file of interleaved customer changes (kind c: upserts, deletes and a few truncates) and
     * orders (kind o), read a row per batch:
     * the changes fill the table through one transform, the orders are enriched by another that
     * the same batches reach afterwards, so each order must see exactly the changes before it.
     */
    private static final String ENRICH = """
            name: enrich
            checkpoint: {interval: 5ms}
            sources:
              events:
                type: file
                path: events.jsonl
                batch_size: %d
                schema: {kind: string, id: bigint, name: string, op: string, order_id: bigint, cid: bigint}
            transforms:
              customer_changes:
                type: sql
                sql: SELECT id, name, op AS _op FROM events WHERE kind = 'c'
              enriched:
                type: sql
                sql: >-
                  SELECT e.order_id, e.cid, c.name, dynamic_contains('customers', e.cid) AS known
                  FROM events e LEFT JOIN customers c ON e.cid = c.id WHERE e.kind = 'o'
            tables:
              customers:
                type: dynamic
                from: customer_changes
                schema: {id: bigint, name: string}
                key: id
            sinks:
              out: {type: file, from: enriched, path: out.jsonl}
            """;

    @Test
    void everyOrderSeesTheCustomerAsItWasWhenTheOrderCame() throws IOException {
        Random random = new Random(42);
        StringBuilder events = new StringBuilder();
        Map<Long, String> customers = new HashMap<>();
        Map<Long, String> expected = new TreeMap<>(); // order id -> "cid:name|null:known"
        for (long order = 0; order < 1500; order++) {
            long id = random.nextInt(40);
            switch (random.nextInt(3)) {
                case 0 -> {
                    String name = "n" + random.nextInt(1000);
                    String op = customers.containsKey(id) ? "u" : "i";
                    customers.put(id, name);
                    events.append(
                            String.format("{\"kind\":\"c\",\"id\":%d,\"name\":\"%s\",\"op\":\"%s\"}%n", id, name, op));
                }
                case 1 -> {
                    if (random.nextInt(30) == 0) { // a truncate: no key, empties the table
                        customers.clear();
                        events.append("{\"kind\":\"c\",\"op\":\"t\"}\n");
                    } else {
                        customers.remove(id);
                        events.append(String.format("{\"kind\":\"c\",\"id\":%d,\"op\":\"d\"}%n", id));
                    }
                }
                default -> {}
            }
            long cid = random.nextInt(40);
            events.append(String.format("{\"kind\":\"o\",\"order_id\":%d,\"cid\":%d}%n", order, cid));
            expected.put(order, cid + ":" + customers.get(cid) + ":" + customers.containsKey(cid));
        }
        write("events.jsonl", events.toString());
        Path pipeline = write("enrich.yaml", ENRICH.formatted(1));

        Result run = sluice(
                "run", pipeline.toString(), "--state-dir", dir.resolve("state").toString());
        assertEquals(0, run.code(), run.stderr());
        Map<Long, String> actual = new TreeMap<>();
        for (JsonNode row : rows("out.jsonl")) {
            String name = text(row, "name");
            String previous = actual.put(
                    row.get("order_id").asLong(),
                    row.get("cid").asLong() + ":" + name + ":"
                            + row.get("known").asBoolean());
            assertEquals(null, previous, "each order once: " + row);
        }
        assertEquals(expected, actual);
    }

    @Test
    void aRestartResumesTheTableFromTheCheckpointWithoutReplayingItsChanges() throws IOException {
        Path state = dir.resolve("state");
        write("events.jsonl", """
                {"kind":"c","id":1,"name":"Ann","op":"i"}
                {"kind":"c","id":2,"name":"Bob","op":"i"}
                {"kind":"c","id":3,"name":"Cy","op":"i"}
                {"kind":"c","id":2,"name":"Bobby","op":"u"}
                """);
        // A source that resumes (a plugin's sequence) makes the second run resume: file sources
        // alone start over, tables included.
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Files.copy(Path.of("target", "plugins", "libsluice_examples.so"), plugins.resolve("libsluice_examples.so"));
        String resuming = ENRICH.formatted(2)
                .replace(
                        "sources:\n",
                        "sources:\n  seq: {type: plugin, path: plugins/libsluice_examples.so, "
                                + "component: sequence, options: {count: 3}}\n")
                .replace("sinks:\n", "sinks:\n  numbers: {type: file, from: seq, path: numbers.jsonl}\n");
        Path pipeline = write("enrich.yaml", resuming);
        Result first = sluice("run", pipeline.toString(), "--state-dir", state.toString());
        assertEquals(0, first.code(), first.stderr());
        assertEquals(List.of(), rows("out.jsonl"));

        // The second run reads another file, of a delete and the orders only: names can only come
        // from the checkpoint.
        write("events2.jsonl", """
                {"kind":"c","id":3,"op":"d"}
                {"kind":"o","order_id":10,"cid":1}
                {"kind":"o","order_id":11,"cid":2}
                {"kind":"o","order_id":12,"cid":3}
                """);
        write("enrich.yaml", resuming.replace("path: events.jsonl", "path: events2.jsonl"));
        Result second = sluice("run", pipeline.toString(), "--state-dir", state.toString());
        assertEquals(0, second.code(), second.stderr());
        List<String> enriched = rows("out.jsonl").stream()
                .map(r -> r.get("order_id").asLong() + "=" + text(r, "name") + "/"
                        + r.get("known").asBoolean())
                .sorted()
                .toList();
        assertEquals(List.of("10=Ann/true", "11=Bobby/true", "12=null/false"), enriched);

        // The checkpoint is readable in the state DB like any other row.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            assertEquals(0, Main.execute("state", "list", pipeline.toString(), "--state-dir", state.toString()));
        } finally {
            System.setOut(original);
        }
        String listing = out.toString(StandardCharsets.UTF_8);
        assertTrue(
                listing.contains("table/customers/meta") && listing.contains("table/customers/chunk-000000"), listing);
    }

    /**
     * A pipeline of file sources alone starts over each run — its sinks' files, and its tables:
     * the table of the run before came back while the file was read from its first line again,
     * so the same run on the same file gave other rows the second time.
     */
    @Test
    void aPipelineOfFilesAloneStartsItsTablesOverToo() throws IOException {
        Path state = dir.resolve("state");
        write("events.jsonl", """
                {"kind":"o","order_id":10,"cid":1}
                {"kind":"c","id":1,"name":"Ann","op":"i"}
                """);
        Path pipeline = write("enrich.yaml", ENRICH.formatted(1));
        for (int run = 0; run < 2; run++) {
            Result result = sluice("run", pipeline.toString(), "--state-dir", state.toString());
            assertEquals(0, result.code(), result.stderr());
            List<String> enriched = rows("out.jsonl").stream()
                    .map(r -> r.get("order_id").asLong() + "=" + text(r, "name"))
                    .toList();
            assertEquals(List.of("10=null"), enriched, "run " + run + ": the order came before its customer");
        }
    }

    @Test
    void theRowLimitFailsTheRunNamingTheTable() throws IOException {
        write("events.jsonl", """
                {"kind":"c","id":1,"name":"a","op":"i"}
                {"kind":"c","id":1,"name":"b","op":"u"}
                {"kind":"c","id":2,"name":"c","op":"i"}
                {"kind":"c","id":3,"name":"d","op":"i"}
                """);
        Path pipeline =
                write("limited.yaml", ENRICH.formatted(1).replace("    key: id\n", "    key: id\n    max_rows: 2\n"));
        Result run = sluice(
                "run", pipeline.toString(), "--state-dir", dir.resolve("state").toString());
        assertEquals(1, run.code(), run.stderr());
        assertTrue(
                run.stderr().contains("dynamic table 'customers': it holds 3 rows, more than max_rows = 2"),
                run.stderr());
        assertTrue(run.stderr().contains("customer_changes"), "names the node that filled it: " + run.stderr());
    }

    @Test
    void badTablesAreReportedAtTheirLines() throws IOException {
        Path pipeline = write("bad.yaml", """
                name: bad
                sources:
                  events: {type: file, path: events.jsonl, schema: {id: bigint, name: string}}
                transforms:
                  enriched:
                    type: sql
                    sql: SELECT e.id, c.name FROM events e JOIN customers c ON e.id = c.id
                tables:
                  customers:
                    type: dynamic
                    from: nowhere
                    schema: {id: bigint, name: string}
                    key: [id]
                  regions:
                    type: dynamic
                    backend: mongo
                    from: events
                    schema: {code: string}
                    key: [region]
                    max_bytes: lots
                sinks:
                  out: {type: file, from: enriched, path: out.jsonl}
                """);
        write("events.jsonl", "");
        Result validate = sluice("validate", pipeline.toString());
        assertEquals(Main.EXIT_CONFIG, validate.code(), validate.stderr());
        String err = validate.stderr();
        assertTrue(
                err.contains("bad.yaml:16")
                        && err.contains("tables.regions.backend must be memory (rows filled from a node) or a store "
                                + "the table caches (postgres), got 'mongo'"),
                err);
        assertTrue(err.contains("bad.yaml:19") && err.contains("tables.regions.key: 'region' is not a column"), err);
        assertTrue(
                err.contains("bad.yaml:20") && err.contains("tables.regions.max_bytes must be a positive whole number"),
                err);

        Path unknownFrom =
                write("from.yaml", Files.readString(pipeline).replaceAll("(?s)  regions:.*?max_bytes: lots\n", ""));
        validate = sluice("validate", unknownFrom.toString());
        assertEquals(Main.EXIT_CONFIG, validate.code(), validate.stderr());
        assertTrue(
                validate.stderr().contains("from.yaml:11")
                        && validate.stderr().contains("tables.customers.from: 'nowhere' is no source or transform"),
                validate.stderr());

        Path missingColumn = write(
                "columns.yaml",
                Files.readString(unknownFrom)
                        .replace("from: nowhere", "from: events")
                        .replace(
                                "schema: {id: bigint, name: string}\n    key",
                                "schema: {id: bigint, tier: string}\n    key"));
        validate = sluice("validate", missingColumn.toString());
        assertEquals(Main.EXIT_CONFIG, validate.code(), validate.stderr());
        assertTrue(validate.stderr().contains("tables.customers: 'events' emits no column tier"), validate.stderr());
    }
}
