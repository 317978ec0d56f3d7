package dev.sluice.connector.postgres;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The postgres sink against the real server of ci/postgres.sh, through whole pipelines. */
class PostgresSinkTest {

    @TempDir
    Path dir;

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    private Result run(Path pipeline, String state) {
        return sluice(
                "run", pipeline.toString(), "--state-dir", dir.resolve(state).toString());
    }

    /** file (JSON lines, with _op) → postgres, with more sink settings. */
    private Path changes(String name, String input, String table, String sinkSettings) throws IOException {
        write(name + ".jsonl", input);
        return write(name + ".yaml", """
                name: %s
                sources:
                  in:
                    type: file
                    path: %s.jsonl
                    schema: {id: bigint, name: string, version: int, _op: string}
                    batch_size: %d
                sinks:
                  db:
                    type: postgres
                    from: in
                    url: %s
                    user: postgres
                    table: %s
                    primary_key: [id]
                %s
                """.formatted(
                        name,
                        name,
                        1000,
                        PgTestSupport.url(),
                        table,
                        sinkSettings.indent(4).stripTrailing()));
    }

    private static String change(String op, long id, String name, int version) {
        return "{\"_op\": \"%s\", \"id\": %d, \"name\": %s, \"version\": %d}\n"
                .formatted(op, id, name == null ? "null" : "\"" + name + "\"", version);
    }

    @Test
    void upsertsDeletesAndUpdateWhere() throws Exception {
        String table = PgTestSupport.uniqueTable("upserts");
        String input = change("i", 1, "a", 1)
                + change("i", 2, "b", 1)
                + change("u", 1, "a2", 2) // last change per key wins
                + change("d", 2, null, 2) // deleted
                + change("i", 3, "c", 1)
                + change("d", 4, null, 1) // delete of a missing key: nothing
                + change("i", 5, "e", 1)
                + change("d", 5, null, 2)
                + change("i", 5, "e3", 3); // deleted, then inserted again
        Path p = changes("upserts", input, table, "create_table: true");
        Result first = run(p, "state1");
        assertEquals(0, first.code(), first.stderr());
        assertEquals(
                List.of("1|a2|2", "3|c|1", "5|e3|3"),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"));

        // update_where: only a newer version overwrites; deletes apply regardless.
        String later = change("u", 1, "old", 1)
                + change("u", 3, "newer", 2)
                + change("d", 5, null, 0)
                + change("i", 6, "f", 1);
        Path q = changes("later", later, table, "update_where: excluded.version > t.version");
        Result second = run(q, "state2");
        assertEquals(0, second.code(), second.stderr());
        assertEquals(
                List.of("1|a2|2", "3|newer|2", "6|f|1"),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"));

        // on_conflict: nothing keeps existing rows, inserts new ones.
        String third = change("u", 1, "ignored", 9) + change("i", 7, "g", 1);
        Path r = changes("nothing", third, table, "on_conflict: nothing");
        Result nothing = run(r, "state3");
        assertEquals(0, nothing.code(), nothing.stderr());
        assertEquals(
                List.of("1|a2|2", "3|newer|2", "6|f|1", "7|g|1"),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"));
        assertEquals(0, PgPool.openPools(), "every sink gave its lease on the connection pool back");
    }

    /**
     * Changes of one key within one flush apply in input order under a condition: with
     * update_where only the newer version stays (the last change per key put the older one
     * back), with on_conflict: nothing the first insert stays (the last one won). Before, the
     * table depended on where flushes fell (one row per flush gave the table expected here).
     */
    @Test
    void changesOfOneKeyInOneFlushApplyInOrderUnderACondition() throws Exception {
        String input = change("u", 1, "new", 2)
                + change("u", 1, "old", 1)
                + change("i", 2, "first", 5)
                + change("u", 2, "second", 6)
                + change("i", 3, "a", 1)
                + change("d", 3, null, 1)
                + change("i", 3, "b", 1)
                + change("i", 3, "c", 1);
        String versioned = PgTestSupport.uniqueTable("versioned");
        Path p = changes(
                "versioned", input, versioned, "create_table: true\nupdate_where: excluded.version > t.version");
        Result run = run(p, "state-v");
        assertEquals(0, run.code(), run.stderr());
        assertEquals(
                List.of("1|new|2", "2|second|6", "3|b|1"),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + versioned + "\" ORDER BY id"));
        String first = PgTestSupport.uniqueTable("first");
        Path q = changes("first", input, first, "create_table: true\non_conflict: nothing");
        run = run(q, "state-f");
        assertEquals(0, run.code(), run.stderr());
        assertEquals(
                List.of("1|new|2", "2|first|5", "3|b|1"),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + first + "\" ORDER BY id"));
    }

    /**
     * A key the input writes as text and the table holds as a bigint: "01" and "1" are one row
     * there. A delete of "01" then an upsert of "1" in one flush left the table without the row
     * (deletes ran after the upserts); the last change per key, by the table's equality, keeps it.
     */
    @Test
    void aDeleteAndAnUpsertOfOneKeySpelledTwoWaysApplyInOrder() throws Exception {
        String table = PgTestSupport.uniqueTable("spelled");
        PgTestSupport.execute(
                "CREATE TABLE \"" + table + "\" (id bigint PRIMARY KEY, v text)",
                "INSERT INTO \"" + table + "\" VALUES (1, 'old'), (2, 'two')");
        write("spelled.jsonl", """
                {"id": "01", "v": "first", "_op": "d"}
                {"id": "1", "v": "second", "_op": "u"}
                {"id": "2", "v": null, "_op": "d"}
                """);
        Path p = write("spelled.yaml", """
                sources:
                  in: {type: file, path: spelled.jsonl, schema: {id: string, v: string, _op: string}}
                sinks:
                  db: {type: postgres, from: in, url: '%s', user: postgres, table: %s, primary_key: id}
                """.formatted(PgTestSupport.url(), table));
        Result run = run(p, "state");
        assertEquals(0, run.code(), run.stderr());
        assertEquals(List.of("1|second"), PgTestSupport.rows("SELECT id, v FROM \"" + table + "\" ORDER BY id"));
    }

    /**
     * {@code _op} t (what the postgres source sends first, and Debezium for a TRUNCATE) deletes
     * every row of the table at its place in the stream: the rows before it go, the rows after it
     * stay; rows of earlier runs go too. Whether the truncate falls inside a flush or between
     * flushes, and when the same input is applied again.
     */
    @Test
    void aTruncateEmptiesTheTableWhereItComesInTheStream() throws Exception {
        String table = PgTestSupport.uniqueTable("truncated");
        Result earlier = run(
                changes("earlier", change("i", 7, "old", 1) + change("i", 8, "old", 1), table, "create_table: true"),
                "state0");
        assertEquals(0, earlier.code(), earlier.stderr());
        String input = change("i", 1, "a", 1)
                + change("i", 2, "b", 1)
                + "{\"_op\": \"t\", \"id\": null, \"name\": null, \"version\": null}\n"
                + change("i", 3, "c", 1)
                + change("u", 2, "b2", 2)
                + change("d", 3, null, 2)
                + change("i", 4, "d", 1);
        int round = 0;
        for (String settings : List.of("", "batch_size: 1", "batch_size: 2", "")) {
            round++;
            Result result = run(changes("truncate" + round, input, table, settings), "state" + round);
            assertEquals(0, result.code(), result.stderr());
            assertEquals(
                    List.of("2|b2|2", "4|d|1"),
                    PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"),
                    "round " + round + " (" + settings + ")");
        }
    }

    /** file (JSON lines of {@code schema}) → {@code sql} over {@code in} → postgres (key id, create_table). */
    private static String fileThroughSqlIntoTable(String file, String schema, String sql, String table) {
        return """
                sources:
                  in: {type: file, path: %s, schema: %s}
                transforms:
                  t:
                    type: sql
                    sql: |
                %s
                sinks:
                  db: {type: postgres, from: t, url: '%s', user: postgres, table: %s, primary_key: id, create_table: true}
                """.formatted(file, schema, sql.stripTrailing().indent(6).stripTrailing(), PgTestSupport.url(), table);
    }

    @Test
    void everyTypeIsMappedAndReadsBackTheSame() throws Exception {
        String table = PgTestSupport.uniqueTable("types");
        write("types.jsonl", """
                {"id": 1, "s": "h\\u00e9llo\\ttab \\\\ \\"q\\"", "d": "12.34", "ts": "2024-02-29T13:14:15.123456", "tz": "2024-02-29T13:14:15.123Z", "day": "2024-02-29", "flag": true, "f": 1.5}
                {"id": 2, "s": null, "d": "-0.01", "ts": "1969-12-31T23:59:59.5", "tz": "1970-01-01T00:00:00Z", "day": "1900-01-01", "flag": false, "f": -2.25}
                """);
        Path p = write(
                "types.yaml",
                fileThroughSqlIntoTable(
                        "types.jsonl",
                        "{id: bigint, s: string, d: \"decimal(10,2)\", ts: \"timestamp(us)\", tz: \"timestamp(ms, UTC)\", day: date, flag: boolean, f: double}",
                        """
                        SELECT id,
                               arrow_cast(id, 'Int8') AS i8, arrow_cast(id * 300, 'Int16') AS i16,
                               arrow_cast(id * 70000, 'Int32') AS i32, id * 5000000000 AS i64,
                               arrow_cast(f, 'Float32') AS f32, f AS f64, d, flag, s,
                               CAST(concat('ab', s) AS BYTEA) AS bin, ts, tz, day,
                               make_array(id, id + 1, NULL) AS ints,
                               make_array(s, 'x,y', NULL) AS texts,
                               named_struct('n', id, 'label', s, 'ok', flag) AS st,
                               make_array(make_array(id), make_array(id, id)) AS nested
                        FROM in
                        """,
                        table));
        Result result = run(p, "state");
        assertEquals(0, result.code(), result.stderr());
        assertTrue(result.stderr().contains("with COPY in text format (column d is numeric(10,2)"), result.stderr());
        assertEquals(
                List.of(
                        "id|bigint",
                        "i8|smallint",
                        "i16|smallint",
                        "i32|integer",
                        "i64|bigint",
                        "f32|real",
                        "f64|double precision",
                        "d|numeric(10,2)",
                        "flag|boolean",
                        "s|text",
                        "bin|bytea",
                        "ts|timestamp without time zone",
                        "tz|timestamp with time zone",
                        "day|date",
                        "ints|bigint[]",
                        "texts|text[]",
                        "st|jsonb",
                        "nested|jsonb"),
                PgTestSupport.rows("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                        + "WHERE attrelid = 'public.\"" + table + "\"'::regclass AND attnum > 0 ORDER BY attnum"));
        List<String> rows = PgTestSupport.rows("SELECT id, i8, i16, i32, i64, f32, f64, d, flag, s, "
                + "convert_from(bin, 'UTF8'), ts, tz AT TIME ZONE 'UTC', day, ints, texts, st, nested FROM \"" + table
                + "\" ORDER BY id");
        // Text as written (tab, backslash, quote, non-ASCII), arrays with NULLs and commas, JSON objects.
        String text = "h\u00e9llo\ttab \\ \"q\"";
        assertEquals(
                List.of(
                        "1|1|300|70000|5000000000|1.5|1.5|12.34|t|" + text + "|ab" + text
                                + "|2024-02-29 13:14:15.123456|2024-02-29 13:14:15.123|2024-02-29|{1,2,NULL}"
                                + "|{\"h\u00e9llo\ttab \\\\ \\\"q\\\"\",\"x,y\",NULL}"
                                + "|{\"n\": 1, \"ok\": true, \"label\": \"h\u00e9llo\\ttab \\\\ \\\"q\\\"\"}|[[1], [1, 1]]",
                        "2|2|600|140000|10000000000|-2.25|-2.25|-0.01|f|NULL|ab|1969-12-31 23:59:59.5|1970-01-01 00:00:00"
                                + "|1900-01-01|{2,3,NULL}|{NULL,\"x,y\",NULL}|{\"n\": 2, \"ok\": false, \"label\": null}"
                                + "|[[2], [2, 2]]"),
                rows);
    }

    /**
     * The columns with a plain binary form, alone: the sink writes COPY's binary format, and every
     * value reads back as the text path writes it (nulls, a date before 1970, timestamps with
     * fractions on both sides of 1970 and 2000, a zone, non-ASCII text, bytes), through the
     * direct COPY and, on the second run, through the temporary table's upsert.
     */
    @Test
    void theBinaryFormatWritesEveryPlainTypeExactly() throws Exception {
        String table = PgTestSupport.uniqueTable("binary");
        write("plain.jsonl", """
                {"id": 1, "s": "h\\u00e9llo\\ttab \\\\ \\"q\\"", "ts": "2024-02-29T13:14:15.123456", "tz": "2024-02-29T13:14:15.123Z", "day": "2024-02-29", "flag": true, "f": 1.5}
                {"id": 2, "s": null, "ts": "1969-12-31T23:59:59.5", "tz": "1970-01-01T00:00:00Z", "day": "1900-01-01", "flag": false, "f": -2.25}
                {"id": 3, "s": "", "ts": null, "tz": "1999-12-31T23:59:59.999Z", "day": null, "flag": null, "f": null}
                """);
        String sql = """
                SELECT id, arrow_cast(id * 300, 'Int16') AS i16, arrow_cast(id * 70000, 'Int32') AS i32,
                       arrow_cast(f, 'Float32') AS f32, f AS f64, flag, s,
                       CAST(concat('ab', s) AS BYTEA) AS bin, ts, tz, day, %d AS version
                FROM in
                """;
        String query = "SELECT id, i16, i32, f32, f64, flag, s, convert_from(bin, 'UTF8'), ts, tz AT TIME ZONE 'UTC', "
                + "day, version FROM \"" + table + "\" ORDER BY id";
        String text = "h\u00e9llo\ttab \\ \"q\"";
        for (int version = 1; version <= 2; version++) {
            Path p = write(
                    "plain" + version + ".yaml",
                    fileThroughSqlIntoTable(
                            "plain.jsonl",
                            "{id: bigint, s: string, ts: \"timestamp(us)\", tz: \"timestamp(ms, UTC)\", day: date, flag: boolean, f: double}",
                            sql.formatted(version),
                            table));
            Result result = run(p, "state" + version);
            assertEquals(0, result.code(), result.stderr());
            assertTrue(result.stderr().contains("is written with COPY in binary format"), result.stderr());
            assertEquals(
                    List.of(
                            "1|300|70000|1.5|1.5|t|" + text + "|ab" + text
                                    + "|2024-02-29 13:14:15.123456|2024-02-29 13:14:15.123|2024-02-29|" + version,
                            "2|600|140000|-2.25|-2.25|f|NULL|ab|1969-12-31 23:59:59.5|1970-01-01 00:00:00|1900-01-01|"
                                    + version,
                            "3|900|210000|NULL|NULL|NULL||ab|NULL|1999-12-31 23:59:59.999|NULL|" + version),
                    PgTestSupport.rows(query));
        }
    }

    /** Many changes over few keys, in several batches and checkpoints, and a few truncates. */
    private static String randomChanges(int n, long seed) {
        Random random = new Random(seed);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < n; i++) {
            long id = random.nextInt(500);
            String op =
                    random.nextInt(4000) == 0 ? "t" : random.nextInt(5) == 0 ? "d" : random.nextBoolean() ? "i" : "u";
            out.append(change(op, id, op.equals("d") ? null : "n" + i, i));
        }
        return out.toString();
    }

    @Test
    void replayingTheSameInputThreeTimesGivesTheSameTable() throws Exception {
        String table = PgTestSupport.uniqueTable("replay");
        String input = randomChanges(20_000, 42);
        Path p = changes("replay", input, table, "create_table: true\nbatch_size: 777");
        List<String> tables = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            // A fresh state dir each time: the whole input is replayed onto the table as left.
            Result result = run(p, "state" + run);
            assertEquals(0, result.code(), result.stderr());
            tables.add(String.join("\n", PgTestSupport.rows("SELECT * FROM \"" + table + "\" ORDER BY id")));
        }
        assertFalse(tables.get(0).isEmpty());
        assertEquals(tables.get(0), tables.get(1));
        assertEquals(tables.get(0), tables.get(2));
        // And the table is what applying the changes in order gives.
        java.util.TreeMap<Long, String> expected = new java.util.TreeMap<>();
        for (String line : input.split("\n")) {
            var node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
            long id = node.get("id").asLong();
            if (node.get("_op").asText().equals("t")) {
                expected.clear();
            } else if (node.get("_op").asText().equals("d")) {
                expected.remove(id);
            } else {
                expected.put(
                        id,
                        id + "|" + node.get("name").asText() + "|"
                                + node.get("version").asInt());
            }
        }
        assertEquals(String.join("\n", expected.values()), tables.get(0));
        assertTrue(input.contains("\"_op\": \"t\""), "the input truncates somewhere");
    }

    /**
     * Flushes without deletes stream into one COPY straight into the table for the whole epoch; a
     * key that exists or repeats in it fails that COPY at its end, and every flush of it must then
     * be written again through the upsert, in order.
     */
    @Test
    void aDirectCopyOverManyFlushesFallsBackWholeWhenAKeyExistsOrRepeats() throws Exception {
        String table = PgTestSupport.uniqueTable("direct");
        java.util.TreeMap<Long, String> expected = new java.util.TreeMap<>();
        StringBuilder repeats = new StringBuilder();
        for (long id = 1; id <= 20; id++) {
            repeats.append(change("i", id, "a" + id, 1));
            expected.put(id, id + "|a" + id + "|1");
        }
        repeats.append(change("u", 7, "again", 2)); // repeats a key of an earlier flush
        expected.put(7L, "7|again|2");
        for (long id = 21; id <= 25; id++) {
            repeats.append(change("i", id, "a" + id, 1));
            expected.put(id, id + "|a" + id + "|1");
        }
        Path first = changes("repeats", repeats.toString(), table, "create_table: true\nbatch_size: 3");
        Result one = run(first, "state1");
        assertEquals(0, one.code(), one.stderr());
        assertEquals(
                List.copyOf(expected.values()),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"));

        StringBuilder existing = new StringBuilder();
        for (long id = 26; id <= 40; id++) {
            existing.append(change("i", id, "b" + id, 1));
            expected.put(id, id + "|b" + id + "|1");
        }
        existing.append(change("u", 3, "updated", 3)); // exists in the table
        expected.put(3L, "3|updated|3");
        existing.append(change("i", 41, "b41", 1));
        expected.put(41L, "41|b41|1");
        Path second = changes("existing", existing.toString(), table, "batch_size: 4");
        Result two = run(second, "state2");
        assertEquals(0, two.code(), two.stderr());
        assertEquals(
                List.copyOf(expected.values()),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"));
    }

    @Test
    void aRefusedRowIsNamedAndFailsTheRunOrGoesToTheDeadLetter() throws Exception {
        String table = PgTestSupport.uniqueTable("refused");
        PgTestSupport.execute("CREATE TABLE \"" + table
                + "\" (id bigint PRIMARY KEY, name varchar(5), version int CHECK (version >= 0))");
        String input = change("i", 1, "ok", 1)
                + change("i", 2, "much too long", 1)
                + change("i", 3, "neg", -1)
                + change("i", 4, "fine", 1);
        Path failing = changes("failing", input, table, "");
        Result failed = run(failing, "state1");
        assertNotEquals(0, failed.code(), failed.stderr());
        assertTrue(
                failed.stderr().contains("table public." + table + ", column name, key id=2, value 'much too long'"),
                failed.stderr());
        assertTrue(failed.stderr().contains("value too long for type character varying(5)"), failed.stderr());
        assertEquals(List.of("0"), PgTestSupport.rows("SELECT count(*) FROM \"" + table + "\""), "nothing committed");

        // One row per flush: a refusal aborts the epoch's transaction, so the flushes before it are
        // written again before the refused one goes row by row.
        Path dead = changes(
                "dead", input, table, "on_error: dead_letter\ndead_letter: refused.dead-letter.jsonl\nbatch_size: 1");
        Result ok = run(dead, "state2");
        assertEquals(0, ok.code(), ok.stderr());
        assertEquals(
                List.of("1|ok|1", "4|fine|1"),
                PgTestSupport.rows("SELECT id, name, version FROM \"" + table + "\" ORDER BY id"));
        List<String> letters = Files.readAllLines(dir.resolve("refused.dead-letter.jsonl"));
        assertEquals(2, letters.size(), String.join("\n", letters));
        assertTrue(letters.get(0).contains("column name, key id=2, value 'much too long'"), letters.get(0));
        assertTrue(letters.get(1).contains("key id=3") && letters.get(1).contains("check constraint"), letters.get(1));
    }

    /**
     * A value no column of its type holds, found while encoding (an interval past 64 bits of
     * microseconds), is refused like a value the table refuses: named, and failing the run or going
     * to the dead letter; it was once written wrapped around, as another interval.
     */
    @Test
    void aValueNoColumnHoldsIsNamedAndRefusedNotWrapped() throws Exception {
        String table = PgTestSupport.uniqueTable("unwritable");
        write("spans.jsonl", """
                {"id": 1, "secs": 5}
                {"id": 2, "secs": 10000000000000}
                {"id": 3, "secs": 7}
                """);
        String pipeline = fileThroughSqlIntoTable(
                "spans.jsonl",
                "{id: bigint, secs: bigint}",
                "SELECT id, arrow_cast(secs, 'Duration(Second)') AS span FROM in",
                table);
        Result failed = run(write("spans-fail.yaml", pipeline), "state1");
        assertNotEquals(0, failed.code(), failed.stderr());
        String named = "table public." + table + ", column span, key id=2, value 'PT2777777777H46M40S': "
                + "out of range for interval (long overflow)";
        assertTrue(failed.stderr().contains(named), failed.stderr());

        Path dead = write(
                "spans-dead.yaml",
                pipeline.replace(
                        "create_table: true}",
                        "create_table: true, on_error: dead_letter, dead_letter: spans.dead-letter.jsonl}"));
        Result ok = run(dead, "state2");
        assertEquals(0, ok.code(), ok.stderr());
        assertEquals(
                List.of("1|00:00:05", "3|00:00:07"),
                PgTestSupport.rows("SELECT id, span FROM \"" + table + "\" ORDER BY id"));
        List<String> letters = Files.readAllLines(dir.resolve("spans.dead-letter.jsonl"));
        assertEquals(1, letters.size(), String.join("\n", letters));
        assertTrue(letters.get(0).contains(named), letters.get(0));
    }

    /**
     * An existing column narrower than the input was written to, and PostgreSQL rounded each value
     * on insert without a word: 23:59:59.999999 into a timestamp(0) became the next year, 1.25
     * into a numeric(6,1) 1.3, 16777217 into a real 16777216, a timestamp into a date lost its
     * time. Refused naming each column; a CAST in the query to the column's type writes it.
     */
    @Test
    void aColumnThatWouldRoundTheInputIsRefused() throws Exception {
        String table = PgTestSupport.uniqueTable("narrow");
        PgTestSupport.execute(
                "CREATE TABLE " + table
                        + " (id bigint PRIMARY KEY, ts timestamp(0), n numeric(6,1), d date, r real, i integer, w numeric(9,2))");
        write("narrow.jsonl", """
                {"id": 1, "ts": "2024-12-31T23:59:59.999999", "n": "1.25", "d": "2024-06-01T23:30:00", "r": 16777217, "i": 2.5, "w": "1.5"}
                """);
        String sink = "sinks:\n  db: {type: postgres, from: t, url: '%s', user: postgres, table: %s, primary_key: id}\n"
                .formatted(PgTestSupport.url(), table);
        String source = """
                sources:
                  in: {type: file, path: narrow.jsonl, schema: {id: bigint, ts: "timestamp(us)", n: "decimal(10,2)", d: "timestamp(us)", r: bigint, i: double, w: "decimal(10,1)"}}
                transforms:
                  t: {type: sql, sql: "SELECT * FROM in"}
                """;
        Result refused = run(write("narrow.yaml", source + sink), "state1");
        assertEquals(2, refused.code(), refused.stderr());
        for (String column : List.of(
                "column ts is timestamp(0) without time zone in the table but Timestamp(MICROSECOND, null) in the input: "
                        + "it would round each value to 0 fractional digits of a second",
                "column n is numeric(6,1) in the table but Decimal(10, 2, 128) in the input: it would round each value to 1 decimal places",
                "column d is date in the table but Timestamp(MICROSECOND, null) in the input: it would drop the time of day",
                "column r is real in the table but Int(64, true) in the input: a real keeps 24 bits",
                "column i is integer in the table but FloatingPoint(DOUBLE) in the input: it would round each value's fraction away")) {
            assertTrue(refused.stderr().contains(column), column + "\n" + refused.stderr());
        }
        assertTrue(!refused.stderr().contains("column w "), refused.stderr());
        assertEquals(List.of("0"), PgTestSupport.rows("SELECT count(*) FROM " + table));

        // Intervals of some fields or digits, and money, rounded too (interval year dropped 4.75 years).
        String spans = PgTestSupport.uniqueTable("narrow_spans");
        PgTestSupport.execute(
                "CREATE TABLE " + spans + " (id bigint PRIMARY KEY, a interval second(0), b interval year, c money)");
        String spansSink =
                "sinks:\n  db: {type: postgres, from: t, url: '%s', user: postgres, table: %s, primary_key: id}\n"
                        .formatted(PgTestSupport.url(), spans);
        String spansSource = source.replace(
                "SELECT * FROM in",
                "SELECT id, arrow_cast(r, 'Duration(Millisecond)') AS a, arrow_cast(r, 'Duration(Second)') AS b, "
                        + "CAST(n AS DECIMAL(10,3)) AS c FROM in");
        Result spansRefused = run(write("narrow-spans.yaml", spansSource + spansSink), "state3");
        assertEquals(2, spansRefused.code(), spansRefused.stderr());
        for (String column : List.of(
                "column a is interval second(0) in the table",
                "column b is interval year in the table",
                "column c is money in the table but Decimal(10, 3, 128) in the input: money keeps 2 decimal places")) {
            assertTrue(spansRefused.stderr().contains(column), column + "\n" + spansRefused.stderr());
        }

        // Cast on purpose, the values are written as rounded.
        String cast = source.replace(
                "SELECT * FROM in",
                "SELECT id, CAST(ts AS TIMESTAMP(0)) AS ts, CAST(n AS DECIMAL(6,1)) AS n, "
                        + "CAST(d AS DATE) AS d, CAST(r AS REAL) AS r, CAST(i AS INT) AS i, w FROM in");
        Result written = run(write("narrow-cast.yaml", cast + sink), "state2");
        assertEquals(0, written.code(), written.stderr());
        assertEquals(
                List.of("2024-12-31 23:59:59|1.3|2024-06-01|1.6777216e+07|2|1.50"),
                PgTestSupport.rows("SELECT ts, n, d, r, i, w FROM " + table));
    }

    /**
     * Text into a numeric(p,s) column is parsed by the server, which rounded what had more
     * decimal places (1.25 into numeric(6,1) became 1.3). Such a value is refused, named; one
     * whose extra places are zeros, NaN and fewer places are written as they are.
     */
    @Test
    void textWithMoreDecimalPlacesThanTheNumericColumnIsRefused() throws Exception {
        String table = PgTestSupport.uniqueTable("numeric_text");
        PgTestSupport.execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY, n numeric(6,1))");
        write("amounts.jsonl", """
                {"id": 1, "n": "1.2"}
                {"id": 2, "n": "1.25"}
                {"id": 3, "n": " 1.20 "}
                {"id": 4, "n": "NaN"}
                {"id": 5, "n": "125e-2"}
                """);
        String pipeline = fileThroughSqlIntoTable(
                        "amounts.jsonl", "{id: bigint, n: string}", "SELECT id, n FROM in", table)
                .replace("create_table: true}", "on_error: dead_letter, dead_letter: amounts.dead-letter.jsonl}");
        Result ok = run(write("amounts.yaml", pipeline), "state1");
        assertEquals(0, ok.code(), ok.stderr());
        assertEquals(
                List.of("1|1.2", "3|1.2", "4|NaN"), PgTestSupport.rows("SELECT id, n FROM " + table + " ORDER BY id"));
        List<String> letters = Files.readAllLines(dir.resolve("amounts.dead-letter.jsonl"));
        assertEquals(2, letters.size(), String.join("\n", letters));
        assertTrue(
                letters.get(0).contains("column n, key id=2, value '1.25': more than 1 decimal places"),
                letters.get(0));
        assertTrue(letters.get(1).contains("key id=5, value '125e-2'"), letters.get(1));
    }

    /**
     * A duration's nanoseconds are cut toward zero, as a cast of a duration cuts them: floored,
     * -1 ns was written as -1 µs (a thousand times its length) while +1 ns was 0.
     */
    @Test
    void aNegativeDurationsNanosecondsAreCutTowardZero() throws Exception {
        String table = PgTestSupport.uniqueTable("nanos");
        write("nanos.jsonl", """
                {"id": 1, "n": -1}
                {"id": 2, "n": -1500}
                {"id": 3, "n": 1}
                {"id": 4, "n": -2000}
                """);
        String pipeline = fileThroughSqlIntoTable(
                "nanos.jsonl",
                "{id: bigint, n: bigint}",
                "SELECT id, arrow_cast(n, 'Duration(Nanosecond)') AS span FROM in",
                table);
        Result ok = run(write("nanos.yaml", pipeline), "state");
        assertEquals(0, ok.code(), ok.stderr());
        assertEquals(
                List.of("1|00:00:00", "2|-00:00:00.000001", "3|00:00:00", "4|-00:00:00.000002"),
                PgTestSupport.rows("SELECT id, span FROM \"" + table + "\" ORDER BY id"));
    }

    /**
     * A timestamp without a zone (and a string) written into a {@code timestamptz} column goes as
     * text, which the server reads in the session's time zone — the driver's default is the JVM's.
     * Sluice reads zoneless times as UTC everywhere else, so the sink's sessions are UTC: the same
     * pipeline writes the same instants on every machine.
     */
    @Test
    void zonelessTimesIntoAZonedColumnAreUtcWhateverTheJvmsZone() throws Exception {
        String table = PgTestSupport.uniqueTable("zoned");
        PgTestSupport.execute(
                "CREATE TABLE \"" + table + "\" (id bigint PRIMARY KEY, at timestamptz, said timestamptz)");
        write("times.jsonl", """
                {"id": 1, "at": "2024-01-01T00:00:00", "said": "2024-07-01 12:30:00"}
                """);
        Path p = write("times.yaml", """
                sources:
                  in: {type: file, path: times.jsonl, schema: {id: bigint, at: timestamp, said: string}}
                sinks:
                  db: {type: postgres, from: in, url: '%s', user: postgres, table: %s, primary_key: id}
                """.formatted(PgTestSupport.url(), table));
        TimeZone jvmZone = TimeZone.getDefault();
        TimeZone.setDefault(TimeZone.getTimeZone("America/New_York"));
        Result result;
        try {
            result = run(p, "state");
        } finally {
            TimeZone.setDefault(jvmZone);
        }
        assertEquals(0, result.code(), result.stderr());
        assertEquals(
                List.of("1|2024-01-01 00:00:00|2024-07-01 12:30:00"),
                PgTestSupport.rows("SELECT id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "
                        + "to_char(said AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM \"" + table + "\""));
    }

    @Test
    void validateLeavesTheDatabaseAlone() throws Exception {
        String table = PgTestSupport.uniqueTable("validate");
        Path p = changes("validate", change("i", 1, "a", 1), table, "create_table: true");
        Result valid = sluice("validate", p.toString());
        assertEquals(0, valid.code(), valid.stderr());
        assertFalse(PgTestSupport.exists(table), "validate created no table");

        PgTestSupport.execute("CREATE TABLE \"" + table + "\" (id bigint PRIMARY KEY, name text, version int)");
        Result again = sluice("validate", p.toString());
        assertEquals(0, again.code(), again.stderr());
        assertEquals(List.of("0"), PgTestSupport.rows("SELECT count(*) FROM \"" + table + "\""));

        // host/port/database instead of url reach the same server; both at once is an error.
        java.net.URI uri = java.net.URI.create(PgTestSupport.url().substring("jdbc:".length()));
        String byHost = "host: %s\nport: %d\ndatabase: %s"
                .formatted(uri.getHost(), uri.getPort(), uri.getPath().substring(1));
        Path hostPipeline = changes("host", "", table, byHost);
        Files.writeString(hostPipeline, Files.readString(hostPipeline).replaceFirst("(?m)^    url: .*\n", ""));
        Result host = sluice("validate", hostPipeline.toString());
        assertEquals(0, host.code(), host.stderr());
        Result both = sluice("validate", changes("both", "", table, byHost).toString());
        assertEquals(2, both.code(), both.stderr());
        assertTrue(both.stderr().contains("give either url or host/port/database, not both"), both.stderr());

        // A table that does not match, or is missing without create_table, is an error at the node.
        String other = PgTestSupport.uniqueTable("mismatch");
        PgTestSupport.execute("CREATE TABLE \"" + other
                + "\" (id bigint PRIMARY KEY, name text, version boolean, extra int NOT NULL)");
        Result mismatch = sluice("validate", changes("mismatch", "", other, "").toString());
        assertEquals(2, mismatch.code(), mismatch.stderr());
        assertTrue(
                mismatch.stderr().contains("column version is boolean in the table but integer in the input"),
                mismatch.stderr());
        assertTrue(
                mismatch.stderr().contains("column extra is NOT NULL without a default but not in the input"),
                mismatch.stderr());
        Result missing = sluice(
                "validate",
                changes("missing", "", PgTestSupport.uniqueTable("none"), "").toString());
        assertEquals(2, missing.code(), missing.stderr());
        assertTrue(
                missing.stderr().contains("does not exist") && missing.stderr().contains("create_table: true"),
                missing.stderr());
    }

    @Test
    void thePasswordNeverAppearsInErrors() throws Exception {
        String table = PgTestSupport.uniqueTable("secret");
        String url = PgTestSupport.url().replace("127.0.0.1", "127.0.0.1").replaceFirst(":\\d+/", ":1/");
        Path p = write("secret.yaml", """
                sources:
                  in: {type: file, path: x.jsonl, schema: {id: bigint}}
                sinks:
                  db: {type: postgres, from: in, url: "%s", user: postgres, password: "s3cr3t-pw", table: %s, primary_key: id}
                """.formatted(url, table));
        write("x.jsonl", "{\"id\": 1}\n");
        Result r = sluice("validate", p.toString());
        assertEquals(2, r.code(), r.stderr());
        assertTrue(r.stderr().contains("cannot reach PostgreSQL at"), r.stderr());
        assertFalse(r.stderr().contains("s3cr3t-pw"), r.stderr());
    }
}
