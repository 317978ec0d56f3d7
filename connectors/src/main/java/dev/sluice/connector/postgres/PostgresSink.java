package dev.sluice.connector.postgres;

import static dev.sluice.connector.postgres.PgTypes.ident;

import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The {@code postgres} sink: idempotent upserts and deletes by primary key.
 *
 * <p>Rows are encoded for COPY straight from the Arrow batch ({@link CopyEncoder}: binary when
 * every column's type allows, see {@link CopyBinary}, else text) into a buffer ({@link CopyRows};
 * an {@code _op} column says {@code i}/{@code u} (or {@code c}/{@code r}) upsert, {@code d}
 * delete, {@code t} delete every row of the table there, in the epoch's transaction; without one
 * every row is an upsert) and flushed every {@code batch_size} rows. A flush
 * without deletes goes into one COPY straight into the table that stays open across the epoch's
 * flushes (after a savepoint): the server takes rows in while the pipeline makes the next ones,
 * and an append stream needs nothing more. The COPY ends before any other statement and at the
 * barrier; if the table refused it (a key that exists or repeats, a value it cannot hold), it is
 * rolled back to the savepoint and its flushes go the other way. That way: COPY into a temporary
 * table, then one {@code INSERT … SELECT … ON CONFLICT (key) DO UPDATE} and one {@code DELETE …
 * USING} (with a TRUNCATE of the temporary table, in one round trip), over the last change per
 * key when the flush may hold a key twice.
 *
 * <p>Why COPY: measured on the project's PostgreSQL 15 (ci/postgres.sh, 2 shared vCPUs) by
 * benchmarks/postgres/WriteStrategyBench.java: 200 000 rows of bigint, text, double, timestamp
 * per run against multi-row {@code INSERT … VALUES (…), … ON CONFLICT} statements of 1 000 rows,
 * with the values bound as text ({@code ?::bigint}, as this sink holds them) or as typed
 * parameters. Medians of the 5 rounds in
 * benchmarks/results/postgres-write-strategy-20261202T035400Z.txt, rows/s:
 *
 * <pre>
 * flush size   COPY + INSERT…SELECT    multi-row, text    multi-row, typed
 *              insert   upsert         insert   upsert    insert   upsert
 * 10 000       154 k    90 k           107 k    74 k      123 k    96 k
 *  1 000        66 k    60 k            74 k    55 k      128 k    85 k
 * </pre>
 *
 * At the default flush size (10 000 keys) COPY is the fastest for inserts and for text-bound
 * values; typed multi-row upserts were within the spread (96 k against 90 k); at 1 000-row
 * flushes typed multi-row statements are ~1.9× faster for inserts (COPY's fixed cost per flush:
 * the COPY round trip and the TRUNCATE), which small epochs would feel. (Rounds of one strategy
 * vary by up to ±30 % on these shared machines.)
 *
 * <p>Every flush of an epoch runs in the epoch's transaction, which commits in {@link #onBarrier};
 * the flushed rows are kept until then, so a connection lost mid-epoch is recovered by
 * reconnecting and writing the epoch again. Replaying rows is harmless: an upsert of the same row
 * or a delete of a missing one leaves the same table.
 */
public final class PostgresSink implements Sink {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresSink.class);

    public static final String URL = PgConnections.URL;
    public static final String HOST = PgConnections.HOST;
    public static final String SCHEMA = PgConnections.SCHEMA;
    public static final String TABLE = PgConnections.TABLE;
    public static final String PRIMARY_KEY = "primary_key";
    public static final String ON_CONFLICT = "on_conflict";
    public static final String UPDATE_WHERE = "update_where";
    public static final String CREATE_TABLE = "create_table";
    public static final String MAX_RETRIES = "max_retries";

    /** The change-stream column; not written. */
    static final String OP = "_op";

    /** The {@code postgres} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(
                PgConnections.defineTable(
                                new ConfigDef(), true, "The table to write (used exactly as written, quoted).")
                        .define(
                                PRIMARY_KEY,
                                ConfigType.LIST,
                                List.of(),
                                false,
                                "Columns that identify a row: upserts and deletes match on them, and the table needs a primary "
                                        + "key or unique index on exactly them. Default: the primary key of the source the rows "
                                        + "come from (its `primary_key`), where the transforms between keep it (SQL that passes its columns through unchanged, row for row).")
                        .define(
                                StandardKeys.BATCH_SIZE,
                                ConfigType.INT,
                                10_000,
                                false,
                                "Rows buffered before they are sent to the table (changes of one key in a flush: the last "
                                        + "wins).",
                                Validator.positive())
                        .define(
                                StandardKeys.BATCH_FLUSH_INTERVAL,
                                ConfigType.DURATION,
                                "1s",
                                false,
                                "Longest rows stay buffered, checked when a batch arrives; a checkpoint always flushes and commits.")
                        .defineEnum(
                                ON_CONFLICT,
                                List.of("update", "nothing"),
                                "update",
                                false,
                                "What an upsert does to an existing row with the same key: overwrite its columns, or leave it.")
                        .define(
                                UPDATE_WHERE,
                                ConfigType.STRING,
                                null,
                                false,
                                "With `on_conflict: update`, an SQL condition an existing row must meet to be overwritten; the "
                                        + "existing row is `t`, the new one `excluded`, e.g. `excluded.version > t.version`. "
                                        + "Deletes are not affected.")
                        .define(
                                CREATE_TABLE,
                                ConfigType.BOOLEAN,
                                false,
                                false,
                                "Create the table when it is missing, with the columns' mapped types and the primary key.")
                        .define(
                                MAX_RETRIES,
                                ConfigType.INT,
                                8,
                                false,
                                "Attempts after a transient error (connection lost, serialization failure, deadlock, server "
                                        + "shutdown), with doubling backoff from 200 ms to 10 s; then the run fails.",
                                Validator.nonNegative()),
                "fail",
                "What to do with a row the table refuses (a constraint violation, a value the column cannot "
                        + "hold): fail the run, write it with the reason to the dead letter, or skip it (counted).");

        public Type() {
            super(
                    NodeKind.SINK,
                    "postgres",
                    "Upserts rows into a PostgreSQL table by primary key, idempotently: replaying rows leaves the same "
                            + "table. Rows with an `_op` column (i, u, d) are a change stream: `d` deletes the key. "
                            + "Everything before a checkpoint is committed in one transaction.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public PostgresSink create(Settings settings) {
            return new PostgresSink(settings);
        }

        /** One connection and transaction per lane; rows of one key should reach one lane. */
        @Override
        public boolean supportsLanes() {
            return true;
        }
    }

    private final Settings config;
    private final String schemaName;
    private final String tableName;
    private final String qualified;
    private final int batchSize;
    private final long flushIntervalNanos;
    private final int maxRetries;
    private StageContext context;

    /** The written columns (the input's, without {@code _op}), their indexes in the input and types. */
    private List<String> columns;

    private List<Integer> inputIndex;
    private List<Field> fields;
    private List<String> pgTypes;
    /** The table's columns and their types as the last check read them. */
    private Map<String, String> tableTypes;

    private List<String> key;
    private boolean changeStream;
    private int opIndex = -1;

    private int[] keyColumns;
    private CopyEncoder encoder;

    private String stage;
    private String copySql;
    /** COPY straight into the table: flushes of new keys only need no upsert. */
    private String directCopySql;
    /** Flushes left before a direct COPY is tried again, after one met an existing key. */
    private int directSkips;
    /** How many flushes to skip after the next direct COPY that meets an existing key. */
    private int directBackoff = 1;

    private String upsertSql;
    private String deleteSql;
    /** The same, over the last change per key of the stage, for flushes that may repeat a key. */
    private String upsertLastSql;

    private String deleteLastSql;
    /** With update_where or on_conflict: nothing, a flush's changes applied in input order; else null. */
    private String inOrderSql;

    /** This sink's lease on the server's connection pool, from start to close. */
    private PgPool pool;

    private Connection connection;
    /** Buffered rows in arrival order; the last change per key wins when they are written. */
    private CopyRows pending;

    private long pendingSince = -1;
    /** The flushed, not yet committed chunks of this epoch: written again after a reconnect. */
    private final List<CopyRows> epoch = new ArrayList<>();
    /**
     * The direct COPY running over chunks [directFrom, directTo) of the epoch, after a savepoint;
     * null when none runs. It ends (and the server answers for it) before any other statement and
     * at the barrier: until then the server takes rows in while the pipeline makes the next ones.
     */
    private CopyIn direct;

    private Savepoint directSavepoint;
    private int directFrom;
    private int directTo;
    /** Rows received in this run: a refused row's position in the dead letter. */
    private long rowsSeen;

    PostgresSink(Settings config) {
        this.config = config;
        this.schemaName = config.getString(SCHEMA);
        this.tableName = config.getString(TABLE);
        this.qualified = ident(schemaName) + "." + ident(tableName);
        this.batchSize = config.getInt(StandardKeys.BATCH_SIZE);
        this.flushIntervalNanos =
                config.getDuration(StandardKeys.BATCH_FLUSH_INTERVAL).toNanos();
        this.maxRetries = config.getInt(MAX_RETRIES);
    }

    /** The table as messages name it. */
    private String table() {
        return schemaName + "." + tableName;
    }

    // ---- open: checks only --------------------------------------------------------------------

    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        PgConnections.checkExclusive(config);
        if (config.getString(UPDATE_WHERE) != null
                && config.getString(ON_CONFLICT).equals("nothing")) {
            throw new InvalidSettingException(UPDATE_WHERE, "update_where needs on_conflict: update");
        }
        columns = new ArrayList<>();
        inputIndex = new ArrayList<>();
        this.fields = new ArrayList<>();
        pgTypes = new ArrayList<>();
        List<Field> fields = schema.getFields();
        for (int i = 0; i < fields.size(); i++) {
            Field f = fields.get(i);
            if (f.getName().equals(OP)) {
                if (!(f.getType() instanceof ArrowType.Utf8 || f.getType() instanceof ArrowType.Utf8View)) {
                    throw new InvalidSettingException(
                            TABLE, "column _op must be a string (i, u or d), not " + f.getType());
                }
                changeStream = true;
                opIndex = i;
                continue;
            }
            columns.add(f.getName());
            inputIndex.add(i);
            this.fields.add(f);
            try {
                pgTypes.add(PgTypes.pgType(f));
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException(TABLE, e.getMessage());
            }
        }
        key = config.getList(PRIMARY_KEY);
        if (key.isEmpty()) {
            key = PrimaryKey.of(schema);
        }
        if (key.isEmpty()) {
            throw new InvalidSettingException(
                    PRIMARY_KEY,
                    "no primary key: set primary_key, or give the source a primary_key (upserts and deletes match on it; "
                            + "a source's key carries through SQL that passes its columns through unchanged, not "
                            + "through UNION, UNNEST, a join that may repeat a row, or a script, http or plugin transform)");
        }
        for (String k : key) {
            if (!columns.contains(k)) {
                throw new InvalidSettingException(PRIMARY_KEY, "key column '" + k + "' is not in the input " + columns);
            }
        }
        // Read-only: does the table exist with matching columns and a unique key? No writes:
        // validation calls open.
        context.checkWhileOpening(() -> {
            // A connection of its own, not the pool's: an unreachable server fails at once with
            // the driver's reason, instead of after the pool's wait.
            try (Connection c = PgConnections.connect(
                    PgConnections.Target.of(config), PgConnections.applicationName(context), true)) {
                checkTable(c, !config.getBoolean(CREATE_TABLE));
            } catch (SQLException e) {
                throw new InvalidSettingException(
                        PgConnections.addressKey(config), "cannot reach " + target() + ": " + e.getMessage());
            }
        });
        keyColumns = key.stream().mapToInt(columns::indexOf).toArray();
        encoder = new CopyEncoder(inputIndex, keyColumns);
        buildStatements();
    }

    /** Where the sink writes, for messages: no user, no password, no URL parameters. */
    private String target() {
        return PgConnections.target(config);
    }

    /** The lane's connection for the run (and again after a connection error). */
    private Connection connect() throws SQLException {
        return pool.connection(PgConnections.applicationName(context), false);
    }

    /** A column of the existing table. */
    private record TableColumn(String type, char category, boolean notNull, boolean hasDefault) {}

    /**
     * Checks the table against the input: every column there with a compatible type, no NOT
     * NULL column without a default left out, a unique index on exactly the key. Returns false
     * when it does not exist (an error if {@code mustExist}).
     */
    private boolean checkTable(Connection c, boolean mustExist) throws SQLException {
        Map<String, TableColumn> table = new LinkedHashMap<>();
        tableTypes = null;
        try (PreparedStatement s = c.prepareStatement(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typcategory, a.attnotnull, a.atthasdef "
                        + "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                        + "WHERE a.attrelid = to_regclass(quote_ident(?) || '.' || quote_ident(?)) "
                        + "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum")) {
            s.setString(1, schemaName);
            s.setString(2, tableName);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    table.put(
                            rs.getString(1),
                            new TableColumn(
                                    rs.getString(2), rs.getString(3).charAt(0), rs.getBoolean(4), rs.getBoolean(5)));
                }
            }
        }
        if (table.isEmpty()) {
            c.rollback();
            if (mustExist) {
                throw new InvalidSettingException(
                        TABLE,
                        "table " + table() + " does not exist in " + target()
                                + "; create it, or set create_table: true to create it from the input's columns");
            }
            return false;
        }
        Map<String, Character> categories = new LinkedHashMap<>();
        try (PreparedStatement s = c.prepareStatement(
                "SELECT x, t.typcategory FROM unnest(?::text[]) x JOIN pg_type t ON t.oid = x::regtype")) {
            s.setArray(1, c.createArrayOf("text", pgTypes.stream().distinct().toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    categories.put(rs.getString(1), rs.getString(2).charAt(0));
                }
            }
        }
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            TableColumn col = table.get(columns.get(i));
            String mine = pgTypes.get(i);
            if (col == null) {
                problems.add("column " + columns.get(i) + " (" + mine + ") is not in the table");
            } else if (!compatible(mine, categories.getOrDefault(mine, 'X'), col)) {
                problems.add("column " + columns.get(i) + " is " + col.type() + " in the table but " + mine
                        + " in the input");
            } else if (PgTypes.narrowing(fields.get(i), col.type()) instanceof String rounding) {
                problems.add("column " + columns.get(i) + " is " + col.type() + " in the table but "
                        + fields.get(i).getType() + " in the input: " + rounding
                        + " (CAST it in the query to the column's type to round on purpose)");
            }
        }
        for (var e : table.entrySet()) {
            if (!columns.contains(e.getKey())
                    && e.getValue().notNull()
                    && !e.getValue().hasDefault()) {
                problems.add("column " + e.getKey() + " is NOT NULL without a default but not in the input");
            }
        }
        try (PreparedStatement s = c.prepareStatement(
                "SELECT count(*) FROM pg_index i WHERE i.indrelid = to_regclass(quote_ident(?) || '.' || quote_ident(?)) "
                        + "AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL "
                        + "AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_attribute a "
                        + "WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)) = "
                        + "(SELECT array_agg(k ORDER BY k) FROM unnest(?::text[]) k) "
                        + "AND cardinality(i.indkey::int2[]) = ?")) {
            s.setString(1, schemaName);
            s.setString(2, tableName);
            s.setArray(3, c.createArrayOf("text", key.toArray()));
            s.setInt(4, key.size());
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                if (rs.getInt(1) == 0) {
                    problems.add("there is no primary key or unique index on exactly (" + String.join(", ", key)
                            + "), which upserts need");
                }
            }
        }
        c.rollback();
        if (problems.isEmpty()) {
            tableTypes = new LinkedHashMap<>();
            table.forEach((name, column) -> tableTypes.put(name, column.type()));
        } else {
            throw new InvalidSettingException(
                    TABLE, "table " + table() + " does not match the input: " + String.join("; ", problems));
        }
        return true;
    }

    /** Whether input values of {@code mine} can go into {@code col}. */
    private static boolean compatible(String mine, char myCategory, TableColumn col) {
        if (col.type().equals(mine) || col.category() == 'S' || myCategory == 'S') {
            return true; // text takes anything, and text parses into anything (per value)
        }
        if (mine.equals("jsonb")) {
            return col.type().equals("json") || col.type().equals("jsonb");
        }
        if (myCategory == 'U' || col.category() == 'U') {
            return false; // bytea, json and such only as themselves
        }
        if (myCategory == 'A') {
            return col.category() == 'A'
                    || col.type().equals("json")
                    || col.type().equals("jsonb");
        }
        return myCategory == col.category();
    }

    private void buildStatements() {
        stage = ident("sluice_stage_" + Integer.toHexString(System.identityHashCode(this)));
        String cols = columns.stream().map(PgTypes::ident).collect(Collectors.joining(", "));
        String conflict = key.stream().map(PgTypes::ident).collect(Collectors.joining(", "));
        List<String> rest = columns.stream().filter(c -> !key.contains(c)).toList();
        String action;
        if (config.getString(ON_CONFLICT).equals("nothing") || rest.isEmpty()) {
            action = "DO NOTHING";
        } else {
            action = "DO UPDATE SET "
                    + rest.stream()
                            .map(c -> ident(c) + " = excluded." + ident(c))
                            .collect(Collectors.joining(", "));
            String where = config.getString(UPDATE_WHERE);
            if (where != null) {
                action += " WHERE (" + where + ")";
            }
        }
        // A flush whose rows may repeat a key reads the last change per key (an upsert cannot
        // touch one row twice); the others read the stage as it is, without the sort.
        String last = "(SELECT DISTINCT ON (" + conflict + ") * FROM " + stage + " ORDER BY " + conflict
                + ", \"_sluice_seq\" DESC)";
        upsertSql = upsert(stage, cols, conflict, action);
        upsertLastSql = upsert(last, cols, conflict, action);
        deleteSql = delete(stage);
        deleteLastSql = delete(last);
        boolean conditional = config.getString(ON_CONFLICT).equals("nothing") || config.getString(UPDATE_WHERE) != null;
        inOrderSql = conditional ? inOrder(cols, conflict, action) : null;
    }

    /**
     * The flush's changes of each key one after the other: round n applies every key's n-th
     * change (one statement can touch a row once). Under a condition the last change per key is
     * not what applying the changes in order leaves — an older version after a newer one under
     * {@code update_where: excluded.v > t.v}, the last insert instead of the first under {@code
     * on_conflict: nothing} — and the table then depended on where flushes fell.
     */
    private String inOrder(String cols, String conflict, String action) {
        String ranked = "(SELECT *, row_number() OVER (PARTITION BY " + conflict + " ORDER BY \"_sluice_seq\") AS "
                + "\"_sluice_rank\" FROM " + stage + ")";
        String rounds = "(SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM " + stage + " GROUP BY " + conflict
                + ") c)";
        return "DO $sluice$ DECLARE sluice_round bigint; BEGIN FOR sluice_round IN 1 .. " + rounds + " LOOP "
                + "INSERT INTO " + qualified + " AS t (" + cols + ") SELECT " + cols + " FROM " + ranked + " AS s "
                + "WHERE s.\"_sluice_rank\" = sluice_round AND s.\"_sluice_op\" <> 'd' ON CONFLICT (" + conflict + ") "
                + action + "; "
                + "DELETE FROM " + qualified + " AS t USING " + ranked
                + " AS s WHERE s.\"_sluice_rank\" = sluice_round "
                + "AND s.\"_sluice_op\" = 'd' AND "
                + key.stream().map(k -> "t." + ident(k) + " = s." + ident(k)).collect(Collectors.joining(" AND "))
                + "; END LOOP; END $sluice$";
    }

    private String upsert(String from, String cols, String conflict, String action) {
        return "INSERT INTO " + qualified + " AS t (" + cols + ") SELECT " + cols + " FROM " + from
                + " AS s WHERE s.\"_sluice_op\" <> 'd' ON CONFLICT (" + conflict + ") " + action;
    }

    private String delete(String from) {
        return "DELETE FROM " + qualified + " AS t USING " + from + " AS s WHERE s.\"_sluice_op\" = 'd' AND "
                + key.stream().map(k -> "t." + ident(k) + " = s." + ident(k)).collect(Collectors.joining(" AND "));
    }

    // ---- start: the connection ------------------------------------------------------------------

    @Override
    public void start() throws Exception {
        withRetries("connecting", false, () -> {
            if (pool == null) {
                pool = PgPool.open(PgConnections.Target.of(config));
            }
            connection = connect();
            if (config.getBoolean(CREATE_TABLE) && !checkTable(connection, false)) {
                createTable();
            }
            // Again at start (created by someone else meanwhile, changed since validation): the
            // columns must still match, and their types choose the COPY format.
            checkTable(connection, true);
            chooseFormat();
            prepareStage();
        });
    }

    /**
     * COPY's binary format when every column has a plain binary form of exactly the table
     * column's type (the server then parses nothing), else text.
     */
    private void chooseFormat() {
        CopyBinary.Form[] forms = new CopyBinary.Form[columns.size()];
        String why = null;
        for (int i = 0; i < forms.length && why == null; i++) {
            String type = tableTypes.get(columns.get(i));
            forms[i] = CopyBinary.formFor(fields.get(i), type);
            if (forms[i] == null) {
                why = "column " + columns.get(i) + " is " + type;
            }
        }
        if (why != null) {
            forms = null;
        }
        try (var node = MDC.putCloseable("node", context.nodeName())) {
            LOG.info(
                    "node '{}': table {} is written with COPY in {}",
                    context.nodeName(),
                    table(),
                    why == null ? "binary format" : "text format (" + why + ", which has no plain binary form here)");
        }
        encoder.useBinary(forms);
        int[] scales = new int[columns.size()];
        for (int i = 0; i < scales.length; i++) {
            scales[i] = PgTypes.numericScale(tableTypes.get(columns.get(i)));
        }
        encoder.limitTextScales(scales);
        String format = forms == null ? "" : " (FORMAT binary)";
        String cols = columns.stream().map(PgTypes::ident).collect(Collectors.joining(", "));
        copySql = "COPY " + stage + " (" + cols + ", \"_sluice_op\", \"_sluice_seq\") FROM STDIN" + format;
        directCopySql = "COPY " + qualified + " (" + cols + ") FROM STDIN" + format;
        if (pending == null) {
            pending = encoder.newRows();
        }
    }

    private void createTable() throws SQLException {
        StringBuilder ddl = new StringBuilder("CREATE TABLE IF NOT EXISTS " + qualified + " (");
        for (int i = 0; i < columns.size(); i++) {
            ddl.append(ident(columns.get(i))).append(' ').append(pgTypes.get(i));
            if (key.contains(columns.get(i))) {
                ddl.append(" NOT NULL");
            }
            ddl.append(", ");
        }
        ddl.append("PRIMARY KEY (")
                .append(key.stream().map(PgTypes::ident).collect(Collectors.joining(", ")))
                .append("))");
        try (Statement s = connection.createStatement()) {
            s.execute(ddl.toString());
        }
        connection.commit();
    }

    /**
     * The session's temporary table: the target's column types (no constraints), the op and the
     * row's place in its flush.
     */
    private void prepareStage() throws SQLException {
        String cols = columns.stream().map(PgTypes::ident).collect(Collectors.joining(", "));
        try (Statement s = connection.createStatement()) {
            // A pooled session may still hold a stage of a sink that used it before.
            s.execute("DROP TABLE IF EXISTS pg_temp." + stage);
            s.execute("CREATE TEMP TABLE " + stage + " AS SELECT " + cols + " FROM " + qualified + " WITH NO DATA");
            s.execute("ALTER TABLE " + stage + " ADD COLUMN \"_sluice_op\" \"char\" NOT NULL, "
                    + "ADD COLUMN \"_sluice_seq\" integer NOT NULL");
        }
        connection.commit();
    }

    // ---- write ----------------------------------------------------------------------------------

    @Override
    public void write(Batch batch) throws Exception {
        try (VectorSchemaRoot root = batch.toVectors(context.allocator())) {
            int n = root.getRowCount();
            encoder.bind(root);
            FieldVector ops = changeStream ? root.getVector(opIndex) : null;
            for (int row = 0; row < n; row++) {
                long position = rowsSeen++;
                byte op = 'u';
                if (ops != null) {
                    Object o = ops.getObject(row);
                    String s = o == null ? "" : o.toString();
                    if (s.equals("d") || s.equals("i") || s.equals("u")) {
                        op = (byte) s.charAt(0);
                    } else if (s.equals("r") || s.equals("c")) {
                        op = 'u'; // Debezium's letters for a read (snapshot) and a create: upserts too
                    } else if (s.equals("t")) {
                        truncate();
                        continue;
                    } else {
                        context.reject(
                                position,
                                recordJson(encoder.values(row)).getBytes(StandardCharsets.UTF_8),
                                "table " + table() + ": _op is '" + s + "', not i, u, c, r, d or t");
                        continue;
                    }
                }
                if (encoder.keyIsNull(row)) {
                    context.reject(
                            position,
                            recordJson(encoder.values(row)).getBytes(StandardCharsets.UTF_8),
                            "table " + table() + ": a key column (" + String.join(", ", key) + ") is null");
                    continue;
                }
                try {
                    encoder.append(row, op, position, pending);
                } catch (CopyEncoder.UnwritableValue e) {
                    String[] values = encoder.values(row);
                    String value = values[columns.indexOf(e.column)];
                    context.reject(
                            position,
                            recordJson(values).getBytes(StandardCharsets.UTF_8),
                            "table " + table() + ", column " + e.column + ", key " + keyText(values) + ", value "
                                    + (value == null ? "NULL" : "'" + abbreviate(value) + "'") + ": "
                                    + e.reason);
                    continue;
                }
                if (pending.rows() >= batchSize) {
                    flush();
                }
            }
        }
        if (pendingSince < 0 && pending.rows() > 0) {
            pendingSince = System.nanoTime();
        }
        if (pendingSince >= 0 && System.nanoTime() - pendingSince >= flushIntervalNanos) {
            flush();
        }
    }

    /** The key of a row, for messages: {@code id=7, region=eu}. */
    private String keyText(String[] values) {
        StringBuilder k = new StringBuilder();
        for (int i = 0; i < keyColumns.length; i++) {
            if (i > 0) {
                k.append(", ");
            }
            k.append(key.get(i)).append('=').append(values[keyColumns[i]]);
        }
        return k.toString();
    }

    private String recordJson(String[] values) {
        StringBuilder out = new StringBuilder("{");
        for (int i = 0; i < columns.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(jsonString(columns.get(i))).append(':');
            out.append(values[i] == null ? "null" : jsonString(values[i]));
        }
        return out.append('}').toString();
    }

    private static String jsonString(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** Writes the buffer into the epoch's transaction. */
    private void flush() throws Exception {
        pendingSince = -1;
        if (pending.rows() == 0) {
            return;
        }
        epoch.add(pending.seal());
        // The next flush is likely the same size: room for it, plus a little, grows nothing.
        pending = pending.likeThis();
        int index = epoch.size() - 1;
        withRetries("writing to table " + table(), true, () -> write(index));
    }

    /**
     * An {@code _op} t (a truncate, as the postgres source and Debezium send): the rows before it
     * are written, then every row of the table is deleted, in the epoch's transaction. DELETE, not
     * TRUNCATE: other sessions keep reading the table until the epoch commits, as with any change.
     */
    private void truncate() throws Exception {
        flush();
        epoch.add(CopyRows.truncation(encoder.binary()));
        int index = epoch.size() - 1;
        withRetries("emptying table " + table(), true, () -> write(index));
    }

    /**
     * Writes chunk {@code index} of the epoch: into the running direct COPY (or a new one) when it
     * has no deletes and direct COPYs are not being skipped, else through the stage.
     */
    private void write(int index) throws SQLException {
        CopyRows chunk = epoch.get(index);
        if (chunk.truncates()) {
            endDirect();
            apply(index);
            return;
        }
        if (!chunk.hasDeletes() && (direct != null || directSkips == 0)) {
            boolean opened = direct == null;
            if (opened) {
                directSavepoint = connection.setSavepoint();
                direct = connection.unwrap(PGConnection.class).getCopyAPI().copyIn(directCopySql);
                directFrom = index;
            }
            directTo = index + 1;
            try {
                if (opened && chunk.binary()) {
                    direct.writeToCopy(CopyRows.BINARY_HEADER, 0, CopyRows.BINARY_HEADER.length);
                }
                direct.writeToCopy(chunk.bytes(), 0, chunk.size());
            } catch (SQLException e) {
                directFailed(e);
            }
            return;
        }
        if (directSkips > 0) {
            directSkips--;
        }
        endDirect();
        epoch.set(index, apply(index));
    }

    /**
     * Ends the running direct COPY, if any. When the table refused it (a key that exists, or a
     * row it cannot hold) it is rolled back and its chunks go through the stage, which upserts
     * and names refused rows.
     */
    private void endDirect() throws SQLException {
        if (direct == null) {
            return;
        }
        try {
            if (encoder.binary()) {
                direct.writeToCopy(CopyRows.BINARY_TRAILER, 0, CopyRows.BINARY_TRAILER.length);
            }
            direct.endCopy();
        } catch (SQLException e) {
            directFailed(e);
            return;
        }
        direct = null;
        connection.releaseSavepoint(directSavepoint);
        directBackoff = 1;
    }

    /**
     * The direct COPY failed: a transient error is the caller's (withRetries reconnects and writes
     * the epoch again); otherwise roll back to before it and write its chunks through the stage.
     * A key that exists makes the next 1, 2, 4 … 64 flushes skip direct COPYs, so a stream of
     * updates pays for a failed attempt rarely.
     */
    private void directFailed(SQLException e) throws SQLException {
        CopyIn copy = direct;
        direct = null;
        if (copy.isActive()) {
            try {
                copy.cancelCopy();
            } catch (SQLException ignored) {
                // the error below is the one to report
            }
        }
        if (transient_(e) || !refusedData(e)) {
            throw e;
        }
        connection.rollback(directSavepoint);
        if ("23505".equals(e.getSQLState())) {
            directSkips = directBackoff;
            directBackoff = Math.min(64, directBackoff * 2);
        }
        for (int i = directFrom; i < directTo; i++) {
            epoch.set(i, apply(i));
        }
    }

    /**
     * Writes chunk {@code index} of the epoch through the stage; returns the rows that were
     * written (those the table refused went to on_error). A refused row aborts the epoch's
     * transaction: the chunks before this one are written again, then this one row by row, each
     * in a savepoint, to name the refused rows. (No savepoint per chunk: that would cost two round
     * trips per flush for a case that the epoch's kept chunks already cover.)
     */
    private CopyRows apply(int index) throws SQLException {
        CopyRows chunk = epoch.get(index);
        if (chunk.truncates()) {
            try (Statement s = connection.createStatement()) {
                s.execute("DELETE FROM " + qualified);
            }
            return chunk;
        }
        try {
            writeStaged(chunk);
            return chunk;
        } catch (SQLException e) {
            if (!refusedData(e)) {
                throw e;
            }
        }
        connection.rollback();
        for (int i = 0; i < index; i++) {
            epoch.set(i, apply(i));
        }
        List<Integer> written = new ArrayList<>(chunk.rows());
        for (int row = 0; row < chunk.rows(); row++) {
            Savepoint one = connection.setSavepoint();
            try {
                writeStaged(chunk.select(List.of(row)));
                connection.releaseSavepoint(one);
                written.add(row);
            } catch (SQLException e) {
                if (!refusedData(e)) {
                    throw e;
                }
                connection.rollback(one);
                refuse(chunk, row, e);
            }
        }
        return chunk.select(written);
    }

    /** COPYs the rows into the stage, then upserts, deletes and empties it in one round trip. */
    private void writeStaged(CopyRows rows) throws SQLException {
        byte[] lines = rows.stageStream();
        CopyIn copy = connection.unwrap(PGConnection.class).getCopyAPI().copyIn(copySql);
        try {
            copy.writeToCopy(lines, 0, lines.length);
            copy.endCopy();
        } finally {
            if (copy.isActive()) {
                copy.cancelCopy();
            }
        }
        // Keys are told apart by their bytes in the input: with deletes, two keys the table holds
        // as one ("01" and "1" for a bigint) could come out deleted after their upsert; the last
        // change per key, by the table's equality, keeps their order.
        boolean ordered = rows.mayRepeatKeys() || rows.hasDeletes();
        String apply;
        if (ordered && inOrderSql != null) {
            apply = inOrderSql + "; ";
        } else {
            apply = (ordered ? upsertLastSql : upsertSql) + "; "
                    + (rows.hasDeletes() ? (ordered ? deleteLastSql : deleteSql) + "; " : "");
        }
        // TRUNCATE, not DELETE: the epoch's one transaction would keep dead rows.
        try (Statement s = connection.createStatement()) {
            s.execute(apply + "TRUNCATE " + stage);
        }
    }

    private static final Pattern COPY_COLUMN = Pattern.compile("column ([^:]+)(?::|$)");

    /** Names table, column, key and value of a refused row, and applies on_error. */
    private void refuse(CopyRows chunk, int row, SQLException e) {
        String[] values = encoder.written(chunk, row);
        String column = null;
        String reason = e.getMessage();
        if (e instanceof PSQLException p && p.getServerErrorMessage() != null) {
            ServerErrorMessage m = p.getServerErrorMessage();
            reason = m.getMessage();
            column = m.getColumn();
            if (column == null && m.getWhere() != null) {
                Matcher matcher = COPY_COLUMN.matcher(m.getWhere());
                if (matcher.find()) {
                    column = matcher.group(1).trim();
                }
            }
            if (m.getConstraint() != null) {
                reason += " (constraint " + m.getConstraint() + ")";
            }
            if (m.getDetail() != null && !m.getDetail().startsWith("Failing row")) {
                reason += ": " + m.getDetail();
            }
        }
        StringBuilder message = new StringBuilder("table " + table());
        int c = column == null ? -1 : columns.indexOf(column);
        if (c >= 0) {
            String value = values[c];
            message.append(", column ")
                    .append(column)
                    .append(", key ")
                    .append(keyText(values))
                    .append(", value ")
                    .append(value == null ? "NULL" : "'" + abbreviate(value) + "'");
        } else {
            message.append(", key ").append(keyText(values)).append(", row ").append(abbreviate(recordJson(values)));
        }
        message.append(": ").append(reason.replace(stage, qualified));
        context.reject(chunk.position(row), recordJson(values).getBytes(StandardCharsets.UTF_8), message.toString());
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }

    /** A row the table refuses: data exceptions (class 22) and constraint violations (23). */
    private static boolean refusedData(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("22") || state.startsWith("23"));
    }

    /** Errors worth retrying on a fresh connection: the server or network, not the rows. */
    static boolean transient_(SQLException e) {
        String state = e.getSQLState();
        if (state == null) {
            return false;
        }
        return state.startsWith("08") // connection exceptions
                || state.equals("40001") // serialization failure
                || state.equals("40P01") // deadlock detected
                || state.equals("57P01") // admin shutdown
                || state.equals("57P02") // crash shutdown
                || state.equals("57P03") // cannot connect now (starting up)
                || state.equals("53300"); // too many connections
    }

    private interface SqlAction {
        void run() throws SQLException;
    }

    /**
     * Runs {@code action}; on a transient error reconnects with backoff and writes this epoch's
     * earlier chunks again first (the lost transaction held them), at most {@code max_retries}
     * times, then fails the run with the last error.
     */
    private void withRetries(String what, boolean lastChunkIsTheAction, SqlAction action) throws Exception {
        int attempt = 0;
        long backoff = 200;
        boolean reconnect = false;
        while (true) {
            try {
                if (reconnect) {
                    if (connection != null) {
                        pool.discard(connection);
                        connection = null;
                    }
                    direct = null; // went with the connection
                    connection = connect();
                    prepareStage();
                    // The aborted transaction held the epoch's chunks before this one: again,
                    // through the stage.
                    for (int i = 0; i < epoch.size() - (lastChunkIsTheAction ? 1 : 0); i++) {
                        epoch.set(i, apply(i));
                    }
                }
                action.run();
                return;
            } catch (SQLException e) {
                if (!transient_(e)) {
                    throw new IllegalStateException(what + " failed: " + e.getMessage(), e);
                }
                if (attempt >= maxRetries) {
                    throw new IllegalStateException(
                            what + " failed after " + (attempt + 1) + " attempts (max_retries " + maxRetries + "): "
                                    + e.getMessage(),
                            e);
                }
                attempt++;
                try (var node = MDC.putCloseable("node", context.nodeName())) {
                    LOG.warn(
                            "node '{}': {}: {} (SQLState {}); retry {} of {} in {} ms",
                            context.nodeName(),
                            what,
                            e.getMessage(),
                            e.getSQLState(),
                            attempt,
                            maxRetries,
                            backoff);
                }
                Thread.sleep(backoff);
                backoff = Math.min(backoff * 2, Duration.ofSeconds(10).toMillis());
                reconnect = true;
            }
        }
    }

    // ---- barrier --------------------------------------------------------------------------------

    /** Flushes the buffer and commits the epoch's transaction: the epoch is durable on return. */
    @Override
    public void onBarrier(Barrier barrier) throws Exception {
        flush();
        if (epoch.isEmpty()) {
            return;
        }
        withRetries("committing to table " + table(), false, () -> {
            endDirect();
            connection.commit();
        });
        epoch.clear();
    }

    private void closeQuietly() {
        if (connection != null) {
            try {
                connection.close(); // an open transaction is rolled back: a restart replays it
            } catch (SQLException ignored) {
                // already gone
            }
            connection = null;
        }
    }

    @Override
    public void close() {
        closeQuietly();
        if (pool != null) {
            pool.close();
        }
    }
}
