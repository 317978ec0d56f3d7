package dev.sluice.connector.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.Main;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.StageTypes;
import dev.sluice.config.TestStageType;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.runtime.Pipeline;
import dev.sluice.runtime.PipelineRunner;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code postgres} source against the real PostgreSQL of ci/postgres.sh: its snapshot as a
 * change stream, and a dynamic table it keeps current while another connection changes the rows
 * and a lookup join reads it.
 */
class PostgresSourceTest {

    @TempDir
    Path dir;

    /** Every row the sink took, as "cid=name", in arrival order. */
    private static final List<String> SEEN = new CopyOnWriteArrayList<>();

    /**
     * A table of customers whose changes are notified on {@code channel}. Its column {@code k},
     * which no pipeline reads, once hid every delete: the source's query for deleted keys named
     * its own alias {@code k}, which the table's column of that name shadowed.
     */
    private static void notifyingTable(String table, String channel) throws Exception {
        PgTestSupport.execute(
                "CREATE TABLE " + table + " (id bigint PRIMARY KEY, name text, k bigint)",
                "INSERT INTO " + table + " VALUES (1, 'Ann', 1), (2, 'Bob', 2)",
                "CREATE FUNCTION " + table + "_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                        + "PERFORM pg_notify('" + channel + "', COALESCE(NEW.id, OLD.id)::text); RETURN NULL; END $$",
                "CREATE TRIGGER " + table + "_changes AFTER INSERT OR UPDATE OR DELETE ON " + table
                        + " FOR EACH ROW EXECUTE FUNCTION " + table + "_notify()");
    }

    private static void await(String what, Predicate<List<String>> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.test(SEEN)) {
            assertTrue(
                    System.nanoTime() < deadline,
                    "timed out waiting for " + what + "; rows seen: "
                            + SEEN.stream()
                                    .collect(java.util.stream.Collectors.groupingBy(
                                            r -> r, java.util.TreeMap::new, java.util.stream.Collectors.counting())));
            Thread.sleep(20);
        }
    }

    @Test
    void aLookupJoinSeesTheChangesAnotherConnectionCommitsWhileItRuns() throws Exception {
        String table = PgTestSupport.uniqueTable("customers");
        String channel = table + "_ch";
        notifyingTable(table, channel);
        StageTypes types = StageTypes.installed();
        types.register(TestStageType.of(
                NodeKind.SINK,
                "recording",
                new ConfigDef(),
                config -> PgTestSupport.cidNameSink((cid, name) -> SEEN.add(cid + "=" + name))));
        var spec =
                PipelineLoader.parse("""
                name: pglookup
                checkpoint: {interval: 100ms}
                sources:
                  customer_rows:
                    type: postgres
                    url: %s
                    user: postgres
                    table: %s
                    key: id
                    columns: {id: bigint, name: string}
                    notify_channel: %s
                  bid: {type: generator, entity: bid, rate: 3000, batch_size: 30}
                transforms:
                  enriched:
                    type: sql
                    sql: SELECT B.bidder %% 3 AS cid, C.name FROM bid B LEFT JOIN customers C ON B.bidder %% 3 = C.id
                tables:
                  customers: {type: dynamic, from: customer_rows, schema: {id: bigint, name: string}, key: id}
                sinks:
                  out: {type: recording, from: enriched}
                """.formatted(PgTestSupport.url(), table, channel), dir.resolve("pglookup.yaml"));
        SEEN.clear();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService lane = Executors.newSingleThreadExecutor();
        try (Pipeline pipeline = Pipeline.assemble(spec, types)) {
            Future<PipelineRunner.Outcome> outcome = lane.submit(() -> new PipelineRunner(pipeline, null).run(stop));
            await(
                    "the snapshot's rows",
                    rows -> rows.contains("1=Ann") && rows.contains("2=Bob") && rows.contains("0=NULL"));
            int before = SEEN.size();
            PgTestSupport.execute(
                    "UPDATE " + table + " SET name = 'Anna' WHERE id = 1",
                    "DELETE FROM " + table + " WHERE id = 2",
                    "INSERT INTO " + table + " (id, name) VALUES (0, 'Zed')");
            await("the changes", rows -> rows.contains("1=Anna") && rows.contains("2=NULL") && rows.contains("0=Zed"));
            stop.set(true);
            assertEquals(PipelineRunner.Outcome.STOPPED, outcome.get(60, TimeUnit.SECONDS));

            // Rows joined before the snapshot arrived may miss their customer; once the snapshot
            // is in, each key shows its snapshot value until the change, and once a change shows,
            // never the old value again.
            List<String> rows = new ArrayList<>(SEEN);
            for (String row : rows.subList(0, before)) {
                assertTrue(
                        List.of("1=Ann", "2=Bob", "0=NULL", "1=NULL", "2=NULL").contains(row), row);
            }
            int bob = rows.indexOf("2=Bob");
            assertTrue(
                    rows.subList(bob, before).stream().noneMatch("2=NULL"::equals), "2 lost its row before the delete");
            assertTrue(rows.subList(rows.indexOf("1=Ann"), before).stream().noneMatch("1=NULL"::equals));
            for (String[] change : new String[][] {{"1=Ann", "1=Anna"}, {"2=Bob", "2=NULL"}, {"0=NULL", "0=Zed"}}) {
                int first = before + rows.subList(before, rows.size()).indexOf(change[1]);
                assertTrue(
                        rows.subList(first, rows.size()).stream().noneMatch(change[0]::equals),
                        change[0] + " after " + change[1]);
            }
        } finally {
            lane.shutdownNow();
        }
    }

    @Test
    void withoutAChannelItReadsTheTableOnceAsAChangeStream() throws Exception {
        String table = PgTestSupport.uniqueTable("snapshot");
        PgTestSupport.execute(
                "CREATE TABLE " + table + " (id bigint PRIMARY KEY, name text, score double precision, extra text)",
                "INSERT INTO " + table + " SELECT g, 'n' || g, g / 2.0, 'x' FROM generate_series(1, 2500) g");
        Path pipeline = dir.resolve("snap.yaml");
        Files.writeString(pipeline, """
                name: snap
                sources:
                  rows:
                    type: postgres
                    url: %s
                    user: postgres
                    table: %s
                    key: id
                    columns: {id: bigint, name: string, score: double}
                    batch_size: 1000
                sinks:
                  out: {type: file, from: rows, path: out.jsonl}
                """.formatted(PgTestSupport.url(), table));
        assertEquals(0, sluice("run", pipeline.toString()));
        List<String> lines = Files.readAllLines(dir.resolve("out.jsonl"));
        assertEquals(2501, lines.size());
        assertEquals("{\"_op\":\"t\"}", lines.get(0).replaceAll("\"(id|name|score)\":null,?", ""));
        assertTrue(lines.contains("{\"id\":7,\"name\":\"n7\",\"score\":3.5,\"_op\":\"r\"}"), lines.get(7));

        Files.writeString(pipeline, Files.readString(pipeline).replace("score: double}", "rank: int}"));
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertEquals(Main.EXIT_CONFIG, Main.execute("validate", pipeline.toString()));
        } finally {
            System.setErr(original);
        }
        String message = err.toString(StandardCharsets.UTF_8);
        assertTrue(message.contains("snap.yaml:") && message.contains("has no column rank"), message);
    }

    /**
     * Bytes and dates of every era read back as they are: the source once refused every bytea
     * column (jsonb writes {@code "\\x00ff"}) and dates before year 1 or after 9999. Through the
     * postgres sink into a second table with the source's {@code _op} (t, then r per row: a
     * mirror), compared with the first by the server.
     */
    @Test
    void bytesAndDatesOfEveryEraGoThroughASourceAndASinkUnchanged() throws Exception {
        String from = PgTestSupport.uniqueTable("eras");
        String to = PgTestSupport.uniqueTable("eras_copy");
        PgTestSupport.execute(
                "CREATE TABLE " + from
                        + " (id bigint PRIMARY KEY, b bytea, t text, d date, f double precision, r real)",
                "INSERT INTO " + from + " VALUES (1, '\\x00ff10', 'h\u00e9llo \\x41', '2024-02-29', '-0', '-0'), "
                        + "(2, '', '', '0044-03-15 BC', 0, 0), (3, NULL, NULL, NULL, NULL, NULL), "
                        + "(4, '\\x5c', 'cafe', '10000-01-01', 'NaN', '-Infinity'), "
                        + "(5, '\\x00', 'x', '4714-11-24 BC', -1.5e-300, 1.5), (6, '\\x01', 'y', '5874897-12-31', 0, 0), "
                        + "(7, '\\x02', 'z', '0001-01-01 BC', 0, 0), (8, '\\x03', 'w', '0001-01-01', 0, 0)");
        Path pipeline = dir.resolve("eras.yaml");
        Files.writeString(pipeline, """
                name: eras
                sources:
                  rows:
                    type: postgres
                    url: %1$s
                    user: postgres
                    table: %2$s
                    key: id
                    columns: {id: bigint, b: binary, t: binary, d: date, f: double, r: float}
                transforms:
                  kept: {type: sql, sql: "SELECT id, b, t, d, f, r, _op FROM rows"}
                sinks:
                  out: {type: postgres, from: kept, url: '%1$s', user: postgres, table: %3$s, primary_key: id, create_table: true}
                """.formatted(PgTestSupport.url(), from, to));
        assertEquals(0, sluice("run", pipeline.toString()));
        assertEquals(
                List.of("8|0"),
                PgTestSupport.rows("SELECT (SELECT count(*) FROM " + to + "), count(*) FROM ("
                        + "SELECT id, b, convert_to(t, 'UTF8'), d FROM " + from
                        + " EXCEPT SELECT id, b, t, d FROM " + to + ") differ"));
        // jsonb's numbers have no negative zero: a float -0 was read as 0 (compared as text:
        // PostgreSQL's -0 = 0).
        String floats = "SELECT string_agg(f::text || '/' || r::text, ',' ORDER BY id) FROM ";
        assertEquals(PgTestSupport.rows(floats + from), PgTestSupport.rows(floats + to));
        assertEquals(
                List.of("bytea|bytea|date"),
                PgTestSupport.rows("SELECT pg_typeof(b), pg_typeof(t), pg_typeof(d) FROM " + to + " WHERE id = 1"));
    }

    /**
     * A deleted row's key reads as the rows' keys do: a text key declared binary came as the
     * bytes of its text in rows but as the text itself in deletes ("4142" as the bytes 0x41 0x42,
     * "AB"), so a mirror deleted the row of another key and kept the deleted one.
     */
    @Test
    void aDeleteOfABinaryKeyNamesTheKeyItsRowsHad() throws Exception {
        String from = PgTestSupport.uniqueTable("bin_keys");
        String to = PgTestSupport.uniqueTable("bin_keys_copy");
        String channel = from + "_ch";
        PgTestSupport.execute(
                "CREATE TABLE " + from + " (k text PRIMARY KEY, v text)",
                "INSERT INTO " + from + " VALUES ('4142', 'row-4142'), ('AB', 'row-AB')");
        var spec = PipelineLoader.parse(
                """
                name: binkeys
                checkpoint: {interval: 100ms}
                sources:
                  rows: {type: postgres, url: '%1$s', user: postgres, table: %2$s, key: k, columns: {k: binary, v: string}, notify_channel: %3$s}
                sinks:
                  mirror: {type: postgres, from: rows, url: '%1$s', user: postgres, table: %4$s, primary_key: k, create_table: true}
                """.formatted(PgTestSupport.url(), from, channel, to), dir.resolve("binkeys.yaml"));
        String mirrored = "SELECT string_agg(convert_from(k, 'UTF8') || '=' || v, ',' ORDER BY k) FROM " + to;
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService lane = Executors.newSingleThreadExecutor();
        try (Pipeline pipeline = Pipeline.assemble(spec, StageTypes.installed())) {
            Future<PipelineRunner.Outcome> outcome = lane.submit(() -> new PipelineRunner(pipeline, null).run(stop));
            awaitRows(mirrored, "4142=row-4142,AB=row-AB");
            PgTestSupport.execute(
                    "DELETE FROM " + from + " WHERE k = '4142'", "SELECT pg_notify('" + channel + "', '4142')");
            awaitRows(mirrored, "AB=row-AB");
            stop.set(true);
            assertEquals(PipelineRunner.Outcome.STOPPED, outcome.get(60, TimeUnit.SECONDS));
        } finally {
            lane.shutdownNow();
        }
    }

    private static void awaitRows(String query, String expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<String> rows = List.of();
        while (System.nanoTime() < deadline) {
            rows = PgTestSupport.exists(query.substring(query.lastIndexOf(' ') + 1))
                    ? PgTestSupport.rows(query)
                    : List.of();
            if (rows.equals(List.of(expected))) {
                return;
            }
            Thread.sleep(50);
        }
        assertEquals(List.of(expected), rows, "timed out");
    }

    private int sluice(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--state-dir", dir.resolve("state").toString()));
        return Main.execute(all.toArray(String[]::new));
    }
}
