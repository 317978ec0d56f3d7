package dev.sluice.connector.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.Main;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.StageTypes;
import dev.sluice.config.TestStageType;
import dev.sluice.observe.TableSize;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.runtime.Pipeline;
import dev.sluice.runtime.PipelineRunner;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dynamic table with {@code backend: postgres} against the real PostgreSQL of ci/postgres.sh: a
 * bounded cache that a lookup join fills with the keys each batch needs, and that sees the rows
 * another connection changes while the pipeline runs (by notification, or by interval refresh).
 */
class PostgresLookupTest {

    @TempDir
    Path dir;

    /** The last name each customer id was joined with ("NULL" when the join found none). */
    private static final Map<Long, String> LAST = new ConcurrentHashMap<>();

    /** 50 customers 0..49 named c0..c49, with a trigger notifying each changed id on {@code channel}. */
    private static void customers(String table, String channel) throws Exception {
        PgTestSupport.execute(
                "CREATE TABLE " + table + " (id bigint PRIMARY KEY, name text)",
                "INSERT INTO " + table + " SELECT g, 'c' || g FROM generate_series(0, 49) g",
                "CREATE FUNCTION " + table + "_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                        + "PERFORM pg_notify('" + channel + "', COALESCE(NEW.id, OLD.id)::text); RETURN NULL; END $$",
                "CREATE TRIGGER " + table + "_changes AFTER INSERT OR UPDATE OR DELETE ON " + table
                        + " FOR EACH ROW EXECUTE FUNCTION " + table + "_notify()");
    }

    private static void await(String what, Predicate<Map<Long, String>> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.test(LAST)) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what + "; last names: " + LAST);
            Thread.sleep(20);
        }
    }

    private String pipeline(String table, String follow, long cacheRows) {
        return pipeline(
                "B.bidder % 60 = C.id",
                "{id: bigint, name: string}", "id", cacheRows, "table: " + table + ", " + follow);
    }

    /** Bids LEFT JOIN customers ON {@code join} (cid = bidder % 60) into the last_name sink. */
    private static String pipeline(String join, String schema, String key, long cacheRows, String postgres) {
        return """
                name: pgcache
                checkpoint: {interval: 100ms}
                sources:
                  bid: {type: generator, entity: bid, rate: 5000, batch_size: 50}
                transforms:
                  enriched:
                    type: sql
                    sql: >-
                      SELECT B.bidder %% 60 AS cid, C.name FROM bid B
                      LEFT JOIN customers C ON %s
                tables:
                  customers:
                    type: dynamic
                    backend: postgres
                    schema: %s
                    key: %s
                    max_rows: %d
                    postgres: {url: '%s', user: postgres, %s}
                sinks:
                  out: {type: last_name, from: enriched}
                """.formatted(join, schema, key, cacheRows, PgTestSupport.url(), postgres);
    }

    private static StageTypes types() {
        StageTypes types = StageTypes.installed();
        types.register(TestStageType.of(
                NodeKind.SINK, "last_name", new ConfigDef(), config -> PgTestSupport.cidNameSink(LAST::put)));
        return types;
    }

    /** Runs the pipeline until {@code body} is done, then stops it; the table's counters as it ended. */
    private TableSize run(String text, ThrowingRunnable body) throws Exception {
        var spec = PipelineLoader.parse(text, dir.resolve("pgcache.yaml"));
        LAST.clear();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService lane = Executors.newSingleThreadExecutor();
        try (Pipeline pipeline = Pipeline.assemble(spec, types())) {
            Future<PipelineRunner.Outcome> outcome = lane.submit(() -> new PipelineRunner(pipeline, null).run(stop));
            body.run();
            stop.set(true);
            assertEquals(PipelineRunner.Outcome.STOPPED, outcome.get(60, TimeUnit.SECONDS));
            return pipeline.stats().tables().iterator().next();
        } finally {
            lane.shutdownNow();
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void assertEveryKeyJoined() throws InterruptedException {
        await("every key joined", last -> last.size() == 60);
        for (long id = 0; id < 60; id++) {
            assertEquals(id < 50 ? "c" + id : "NULL", LAST.get(id), "customer " + id);
        }
    }

    @Test
    void aJoinSeesTheChangesNotifiedWhileItRuns() throws Exception {
        String table = PgTestSupport.uniqueTable("lookup");
        String channel = table + "_ch";
        customers(table, channel);
        TableSize size = run(pipeline(table, "notify_channel: " + channel, 1000), () -> {
            assertEveryKeyJoined();
            PgTestSupport.execute(
                    "UPDATE " + table + " SET name = 'changed' WHERE id = 7",
                    "DELETE FROM " + table + " WHERE id = 8",
                    "INSERT INTO " + table + " VALUES (55, 'new')");
            await(
                    "the changes",
                    last -> "changed".equals(last.get(7L))
                            && "NULL".equals(last.get(8L))
                            && "new".equals(last.get(55L)));
            // Once seen, a change stays: no stale row comes back from the cache.
            Thread.sleep(300);
            assertEquals("changed", LAST.get(7L));
            assertEquals("NULL", LAST.get(8L));
            assertEquals("new", LAST.get(55L));
            // A payload that is no bigint names no key: the whole cache is dropped, so a change
            // made without a notification of its own shows too.
            PgTestSupport.execute(
                    "ALTER TABLE " + table + " DISABLE TRIGGER " + table + "_changes",
                    "UPDATE " + table + " SET name = 'quiet' WHERE id = 9",
                    "SELECT pg_notify('" + channel + "', 'abc')");
            await("the cache dropped", last -> "quiet".equals(last.get(9L)));
        });
        // Every key held (present or known absent) after its first load: only the changed keys load
        // again, and every key once more after the payload that dropped everything.
        assertTrue(size.misses() <= 60 + 3 + 60 + 60, "misses " + size.misses());
        assertTrue(size.hits() > 10 * size.misses(), "hits " + size.hits() + ", misses " + size.misses());
        assertTrue(size.loads() <= size.misses(), "one load per batch with misses");
    }

    /**
     * A key of two columns: customers (region, id), 'eu' 0..29 and 'us' 0..24, notified as JSON
     * arrays; customer ids 0..29 are eu/id, 30..59 us/(id - 30).
     */
    @Test
    void aKeyOfTwoColumnsIsLookedUpAndNotifiedWhole() throws Exception {
        String table = PgTestSupport.uniqueTable("regions");
        String channel = table + "_ch";
        PgTestSupport.execute(
                "CREATE TABLE " + table + " (region text, id bigint, name text, PRIMARY KEY (region, id))",
                "INSERT INTO " + table + " SELECT 'eu', g, 'eu' || g FROM generate_series(0, 29) g",
                "INSERT INTO " + table + " SELECT 'us', g, 'us' || g FROM generate_series(0, 24) g",
                "CREATE FUNCTION " + table + "_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                        + "PERFORM pg_notify('" + channel + "', json_build_array(COALESCE(NEW.region, OLD.region), "
                        + "COALESCE(NEW.id, OLD.id))::text); RETURN NULL; END $$",
                "CREATE TRIGGER " + table + "_changes AFTER INSERT OR UPDATE OR DELETE ON " + table
                        + " FOR EACH ROW EXECUTE FUNCTION " + table + "_notify()");
        String text = pipeline(
                "C.region = CASE WHEN B.bidder % 60 < 30 THEN 'eu' ELSE 'us' END AND C.id = B.bidder % 30",
                "{region: string, id: bigint, name: string}",
                "[region, id]",
                1000,
                "table: " + table + ", notify_channel: " + channel);
        TableSize size = run(text, () -> {
            await("every key joined", last -> last.size() == 60);
            for (long cid = 0; cid < 60; cid++) {
                String expected = cid < 30 ? "eu" + cid : cid - 30 < 25 ? "us" + (cid - 30) : "NULL";
                assertEquals(expected, LAST.get(cid), "customer " + cid);
            }
            PgTestSupport.execute(
                    "UPDATE " + table + " SET name = 'changed' WHERE region = 'us' AND id = 7",
                    "DELETE FROM " + table + " WHERE region = 'eu' AND id = 3",
                    "INSERT INTO " + table + " VALUES ('us', 27, 'new')");
            await(
                    "the changes",
                    last -> "changed".equals(last.get(37L))
                            && "NULL".equals(last.get(3L))
                            && "new".equals(last.get(57L)));
        });
        // Only the notified keys were dropped (a payload read wrong would drop the whole cache).
        assertTrue(size.misses() <= 60 + 60 + 3, "misses " + size.misses());
    }

    @Test
    void aCacheSmallerThanTheKeysEvictsAndStillAnswersEveryKey() throws Exception {
        String table = PgTestSupport.uniqueTable("evict");
        customers(table, table + "_ch");
        // Keys 0..59 against a cache of 20 rows: evictions all the time, answers still whole.
        TableSize size = run(pipeline(table, "refresh_interval: 1h", 20), PostgresLookupTest::assertEveryKeyJoined);
        assertTrue(size.rows() <= 20, "the cache holds " + size.rows() + " rows, max_rows is 20");
        assertTrue(size.misses() > 60, "evicted keys are loaded again: misses " + size.misses());
    }

    @Test
    void withoutNotificationsTheWholeCacheIsDroppedEveryRefreshInterval() throws Exception {
        String table = PgTestSupport.uniqueTable("refresh");
        customers(table, table + "_unused");
        PgTestSupport.execute("DROP TRIGGER " + table + "_changes ON " + table);
        TableSize size = run(pipeline(table, "refresh_interval: 300ms", 1000), () -> {
            await("customer 3", last -> "c3".equals(last.get(3L)));
            PgTestSupport.execute("UPDATE " + table + " SET name = 'later' WHERE id = 3");
            await("the refreshed row", last -> "later".equals(last.get(3L)));
        });
        assertTrue(size.hits() > size.misses(), "hits " + size.hits() + ", misses " + size.misses());
    }

    @Test
    void badSettingsNameTheFileLineAndKey() throws Exception {
        String base = pipeline("customers", "notify_channel: ch", 100);
        assertTrue(validate(base.replace("notify_channel: ch", "notify_chanel: ch"))
                .contains("unknown key 'notify_chanel'"));
        String neither = validate(base.replace(", notify_channel: ch", ""));
        assertTrue(neither.contains("pgcache.yaml:") && neither.contains("give notify_channel"), neither);
        assertTrue(validate(base.replace("backend: postgres", "backend: mongo"))
                .contains("backend must be memory (rows filled from a node) or a store the table caches (postgres), "
                        + "got 'mongo'"));
        assertTrue(validate(base.replace("key: id", "key: id\n    from: bid"))
                .contains("is filled by lookups in it, not from a node"));
        String computed = validate(base.replace("B.bidder % 60 = C.id", "B.bidder % 60 = C.id + 0"));
        assertTrue(
                computed.contains("node 'enriched'")
                        && computed.contains("dynamic table 'customers' is looked up in its backend key by key: join "
                                + "it to the stream with an equality on its key column (id)"),
                computed);
    }

    /**
     * A key declared binary on a text column would be sent as {@code \\x}-hex and match no row, so
     * every lookup would answer "absent": the run stops at the first lookup, naming the column.
     */
    @Test
    void aBinaryKeyOnATextColumnIsRefusedNotMatchedAgainstNothing() throws Exception {
        String table = PgTestSupport.uniqueTable("codes");
        PgTestSupport.execute("CREATE TABLE " + table + " (code text PRIMARY KEY, name text)");
        String text = pipeline(
                        "CAST(CAST(B.bidder % 60 AS VARCHAR) AS BYTEA) = C.code",
                        "{code: binary, name: string}", "code", 100, "table: " + table + ", refresh_interval: 1m")
                .replace("type: last_name", "type: blackhole")
                .replace("batch_size: 50}", "batch_size: 50, count: 2000}"); // ends on its own without the check
        Path file = dir.resolve("codes.yaml");
        Files.writeString(file, text);
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = Main.execute(
                    "run", file.toString(), "--state-dir", dir.resolve("state").toString());
        } finally {
            System.setErr(original);
        }
        String stderr = err.toString(StandardCharsets.UTF_8);
        assertTrue(code != 0, stderr);
        assertTrue(stderr.contains("key column 'code' is declared binary but is text in table"), stderr);
    }

    /** What {@code sluice validate} prints for a pipeline file with {@code text}; it must refuse it. */
    private String validate(String text) throws Exception {
        Path file = dir.resolve("pgcache.yaml");
        Files.writeString(file, text.replace("type: last_name", "type: blackhole"));
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            assertEquals(Main.EXIT_CONFIG, Main.execute("validate", file.toString()));
        } finally {
            System.setErr(original);
        }
        return err.toString(StandardCharsets.UTF_8);
    }
}
