package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeCore;
import dev.sluice.state.StateStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice state ...} end to end, in-process through {@link Main#execute}. */
class StateCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path pipeline;
    private Path state;

    @BeforeEach
    void pipelineFile() throws IOException {
        pipeline = Files.writeString(dir.resolve("file.yaml"), """
                name: orders
                sources:
                  in: {type: generator, entity: bid, count: 10}
                sinks:
                  out: {type: blackhole, from: in}
                """);
        state = dir.resolve("state");
    }

    private Result sluice(String... args) {
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = Main.execute(args);
            return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
    }

    private record Result(int code, String stdout, String stderr) {
        List<String> lines() {
            return stdout.lines().toList();
        }
    }

    /** {@code sluice state SUB PIPELINE ARGS... --state-dir DIR}. */
    private Result state(String sub, String... args) {
        List<String> all = new ArrayList<>(List.of("state", sub, pipeline.toString()));
        all.addAll(List.of(args));
        all.addAll(List.of("--state-dir", state.toString()));
        return sluice(all.toArray(String[]::new));
    }

    @Test
    void setQueryAndDeleteRows() throws IOException {
        Result added = state("set", "orders", "source/in/orders/0", "{\"offset\": 42, \"epoch\": 7}");
        assertEquals(0, added.code(), added.stderr());
        assertTrue(added.stderr().contains("added (orders, source/in/orders/0)"), added.stderr());
        assertEquals(
                0,
                state("set", "orders", "source/in/orders/1", "{\"offset\": 1000, \"epoch\": 7}")
                        .code());
        assertEquals(0, state("set", "plugin.dedup", "window", "[1, 2]").code());
        Result replaced = state("set", "orders", "source/in/orders/1", "{\"offset\": 1001, \"epoch\": 8}");
        assertTrue(
                replaced.stderr().contains("replaced (orders, source/in/orders/1)")
                        && replaced.stderr().contains("{\"offset\":1000,\"epoch\":7} -> {\"offset\":1001,\"epoch\":8}"),
                replaced.stderr());

        Result table =
                state("query", "SELECT namespace, count(*) AS n FROM state GROUP BY namespace ORDER BY namespace");
        assertEquals(0, table.code(), table.stderr());
        assertEquals(
                List.of("namespace    | n", "-------------+--", "orders       | 2", "plugin.dedup | 1"), table.lines());
        assertEquals("(2 rows)", table.stderr().strip());

        Result json = state(
                "query",
                "SELECT key, json_get_int(data, 'offset') AS \"offset\", created_at FROM state "
                        + "WHERE namespace = 'orders' ORDER BY \"offset\" DESC",
                "--format",
                "json");
        assertEquals(0, json.code(), json.stderr());
        List<JsonNode> rows = new ArrayList<>();
        for (String line : json.lines()) {
            rows.add(JSON.readTree(line));
        }
        assertEquals(
                List.of("source/in/orders/1", "source/in/orders/0"),
                rows.stream().map(r -> r.get("key").asText()).toList());
        assertEquals(
                List.of(1001L, 42L),
                rows.stream().map(r -> r.get("offset").asLong()).toList());
        assertTrue(
                rows.get(0).get("created_at").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"),
                rows.get(0).toString());

        Result list = state("list", "--namespace-prefix", "plugin");
        assertEquals(0, list.code(), list.stderr());
        assertEquals(3, list.lines().size(), list.stdout());
        assertTrue(list.lines().get(2).startsWith("plugin.dedup | window | [1,2]"), list.stdout());
        assertEquals("(1 row)", list.stderr().strip());

        Result deleted = state("delete", "orders", "source/in/orders/0");
        assertEquals(0, deleted.code(), deleted.stderr());
        Result again = state("delete", "orders", "source/in/orders/0");
        assertEquals(Main.EXIT_FAILED, again.code());
        assertTrue(again.stderr().contains("no row (orders, source/in/orders/0)"), again.stderr());

        Result bulk = state("delete", "--namespace-prefix", "ord");
        assertEquals(0, bulk.code(), bulk.stderr());
        assertTrue(bulk.stderr().contains("deleted (1 row) under namespace prefix 'ord'"), bulk.stderr());
        try (StateStore store = StateStore.openReadOnly(state)) {
            assertEquals(1, store.count());
        }
    }

    @Test
    void queriesAreReadOnlyUnlessWritesAreAllowed() throws IOException {
        assertEquals(0, state("set", "orders", "k", "{\"offset\": 1}").code());
        Path copied = dir.resolve("copied.csv");
        String copy = "COPY (SELECT key FROM state) TO '" + copied + "' STORED AS CSV";
        Path secret = Files.writeString(dir.resolve("secret.csv"), "a\n1\n");
        for (String sql : List.of(
                copy,
                "CREATE EXTERNAL TABLE secret STORED AS CSV LOCATION '" + secret + "'",
                "SET datafusion.execution.batch_size = 1")) {
            Result refused = state("query", sql);
            assertEquals(Main.EXIT_CONFIG, refused.code(), sql);
            assertTrue(refused.stderr().contains("read-only unless writes are allowed"), refused.stderr());
        }
        assertFalse(Files.exists(copied), "a refused COPY wrote its file");
        Result allowed = state("query", copy, "--allow-writes");
        assertEquals(0, allowed.code(), allowed.stderr());
        assertTrue(Files.readString(copied).contains("k"), "COPY with --allow-writes wrote the rows");
    }

    @Test
    void queriesFreeTheirMemory() {
        assertEquals(0, state("set", "orders", "k", "{\"offset\": 1}").code());
        long handles = NativeCore.bridge().liveHandles();
        long memory = ArrowC.rootAllocator().getAllocatedMemory();
        assertEquals(0, state("query", "SELECT * FROM state ORDER BY key").code());
        assertEquals(Main.EXIT_CONFIG, state("query", "SELECT nope FROM state").code());
        assertEquals(handles, NativeCore.bridge().liveHandles());
        assertEquals(memory, ArrowC.rootAllocator().getAllocatedMemory());
    }

    @Test
    void badSqlIsBadInputWithoutAStackTrace() {
        assertEquals(0, state("set", "orders", "k", "{}").code());
        Result bad = state("query", "SELECT nope FROM state");
        assertEquals(Main.EXIT_CONFIG, bad.code());
        assertTrue(bad.stderr().startsWith("error: SQL: ") && bad.stderr().contains("nope"), bad.stderr());
        assertFalse(bad.stderr().contains("\tat "), bad.stderr());
        assertEquals("", bad.stdout());

        Result verbose = state("query", "SELEC 1", "--verbose");
        assertEquals(Main.EXIT_CONFIG, verbose.code());
        assertTrue(verbose.stderr().contains("\tat "), "--verbose adds the stack trace: " + verbose.stderr());
    }

    @Test
    void missingStateIsBadInputAndIsNotCreated() {
        Result query = state("query", "SELECT * FROM state");
        assertEquals(Main.EXIT_CONFIG, query.code());
        assertTrue(
                query.stderr().contains("no state for pipeline 'orders': no state directory at " + state),
                query.stderr());
        assertEquals(Main.EXIT_CONFIG, state("delete", "orders", "k").code());
        assertEquals(Main.EXIT_CONFIG, state("list").code());
        assertFalse(Files.exists(state));
    }

    @Test
    void badJsonIsBadInputAndWritesNothing() {
        Result bad = state("set", "orders", "k", "{offset: 1}");
        assertEquals(Main.EXIT_CONFIG, bad.code());
        assertTrue(bad.stderr().startsWith("error: state data is not valid JSON"), bad.stderr());
        assertFalse(Files.exists(state), "bad input creates no state directory");
        assertEquals(Main.EXIT_CONFIG, state("set", "bad\u0000ns", "k", "{}").code());
    }

    @Test
    void writesFailWhileThePipelineHoldsTheState() {
        try (StateStore running = StateStore.open(state)) {
            running.put("orders", "k", "{\"offset\": 3}");
            Result set = state("set", "orders", "k", "{\"offset\": 4}");
            assertEquals(Main.EXIT_FAILED, set.code());
            assertTrue(set.stderr().contains("the state directory " + state), set.stderr());
            assertEquals(Main.EXIT_FAILED, state("delete", "orders", "k").code());

            Result query = state("query", "SELECT json_get_int(data, 'offset') AS o FROM state");
            assertEquals(0, query.code(), "reads work while the pipeline runs: " + query.stderr());
            assertEquals("3", query.lines().get(2).strip());
        }
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(Main.EXIT_CONFIG, sluice("state").code());
        Result format = state("query", "SELECT 1", "--format", "xml");
        assertEquals(Main.EXIT_CONFIG, format.code());
        assertTrue(format.stderr().contains("expected table or json, got 'xml'"), format.stderr());
        Result both = state("delete", "orders", "k", "--namespace-prefix", "o");
        assertEquals(Main.EXIT_CONFIG, both.code());
        assertTrue(
                both.stderr().contains("give either NAMESPACE and KEY, or --namespace-prefix PREFIX"), both.stderr());
        assertEquals(Main.EXIT_CONFIG, state("delete", "orders").code());
        assertEquals(Main.EXIT_CONFIG, state("delete", "--namespace-prefix", "").code());
    }

    @Test
    void everySubcommandAnswersHelp() {
        Result help = sluice("state", "query", "--help");
        assertEquals(0, help.code(), help.stderr());
        assertTrue(
                help.stdout().startsWith("Usage: sluice state query")
                        && help.stdout().contains("--state-dir=DIR"),
                help.stdout());
        assertTrue(sluice("state", "--help").stdout().contains("Examples:"));
    }

    @Test
    void aBareNameOrAMissingFileNamesThePipeline() {
        Result bare = sluice("state", "set", "orders", "orders", "k", "1", "--state-dir", state.toString());
        assertEquals(0, bare.code(), bare.stderr());
        Result missing = sluice("state", "list", dir.resolve("typo.yaml").toString(), "--state-dir", state.toString());
        assertEquals(Main.EXIT_CONFIG, missing.code());
        assertTrue(
                missing.stderr().contains("typo.yaml") && missing.stderr().contains("pipeline file not found"),
                missing.stderr());
    }
}
