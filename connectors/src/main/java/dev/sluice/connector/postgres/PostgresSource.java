package dev.sluice.connector.postgres;

import static dev.sluice.connector.postgres.PgTypes.ident;

import dev.sluice.bridge.NativeDecoder;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Source;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The {@code postgres} source: a table's rows, then — with {@code notify_channel} — its changes as
 * other programs make them, as a change stream ({@code _op}) that fills a dynamic table or feeds
 * any node.
 *
 * <p>At start it LISTENs on the channel, emits one {@code t} (truncate) row, then every row of the
 * table ({@code r}) from one consistent snapshot; listening first means no change committed during
 * the snapshot is missed. From then on each notification's payload is a key whose row changed
 * (the writer, or a trigger, runs {@code pg_notify(channel, key::text)}); the keys that arrived
 * since the last poll are read back in one round trip, and each comes out as an upsert ({@code u})
 * of its current row or a delete ({@code d}) when the row is gone. The source keeps no positions: a
 * restart takes a new snapshot, and the truncate row lets a dynamic table drop what the last
 * checkpoint held. A lost connection fails the run (notifications sent while it was down would
 * be lost); a restart resynchronises. Without {@code notify_channel} the source is bounded: the
 * snapshot, then the end.
 */
public final class PostgresSource implements Source {

    public static final String SCHEMA = PgConnections.SCHEMA;
    public static final String TABLE = PgConnections.TABLE;
    public static final String KEY = "key";
    public static final String COLUMNS = "columns";
    public static final String NOTIFY_CHANNEL = "notify_channel";
    static final String OP = "_op";
    /** Most notified keys read back in one query. */
    static final int KEYS_PER_QUERY = 10_000;

    /** The {@code postgres} source's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = PgConnections.defineTable(
                        new ConfigDef(), true, "The table to read (used exactly as written, quoted).")
                .define(
                        KEY,
                        ConfigType.STRING,
                        null,
                        true,
                        "The column that identifies a row (a notification's payload).")
                .define(
                        COLUMNS,
                        ConfigType.MAP,
                        null,
                        true,
                        "The columns to read and their types, e.g. {id: bigint, name: string}; the key among them. "
                                + "Types: " + ColumnTypes.ACCEPTED + ".")
                .define(
                        NOTIFY_CHANNEL,
                        ConfigType.STRING,
                        null,
                        false,
                        "LISTEN on this channel after the snapshot; each notification's payload is a changed row's key "
                                + "(as text). Absent: read the table once and end.")
                .define(
                        StandardKeys.BATCH_SIZE,
                        ConfigType.INT,
                        8192,
                        false,
                        "Most rows per emitted batch.",
                        Validator.positive());

        public Type() {
            super(
                    NodeKind.SOURCE,
                    "postgres",
                    "Reads a PostgreSQL table, then follows its changes through LISTEN/NOTIFY, as a change stream "
                            + "(_op: t truncate first, r snapshot rows, u upserts, d deletes) that can fill a dynamic table.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public PostgresSource create(Settings settings) {
            return new PostgresSource(settings);
        }
    }

    private enum Phase {
        TRUNCATE,
        SNAPSHOT,
        FOLLOW,
        DONE
    }

    private final Settings config;
    private final String qualified;
    private final String key;
    private final String channel;
    private final int batchSize;
    private StageContext context;
    private Schema columns;
    private String keyType;
    /** The table's column types, by column name: how each declared column is read ({@link PgRows#rowJson}). */
    private Map<String, String> tableTypes;

    private NativeDecoder decoder;
    private Connection connection;
    private Statement snapshotStatement;
    private ResultSet snapshot;
    private Phase phase = Phase.TRUNCATE;
    private final Set<String> notified = new LinkedHashSet<>();

    PostgresSource(Settings config) {
        this.config = config;
        this.qualified = ident(config.getString(SCHEMA)) + "." + ident(config.getString(TABLE));
        this.key = config.getString(KEY);
        this.channel = config.getString(NOTIFY_CHANNEL);
        this.batchSize = config.getInt(StandardKeys.BATCH_SIZE);
    }

    @Override
    public Schema open(StageContext context) {
        this.context = context;
        PgConnections.checkExclusive(config);
        Map<String, String> declared = new LinkedHashMap<>();
        config.getMap(COLUMNS).forEach((name, type) -> declared.put(name, String.valueOf(type)));
        try {
            columns = ColumnTypes.schema(declared);
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(COLUMNS, e.getMessage());
        }
        if (!declared.containsKey(key)) {
            throw new InvalidSettingException(
                    KEY, "key column '" + key + "' is not among the columns " + declared.keySet());
        }
        if (declared.containsKey(OP)) {
            throw new InvalidSettingException(COLUMNS, "_op is the column this source adds; rename the table's column");
        }
        // Read-only: the table and its columns exist (validation calls open).
        context.checkWhileOpening(() -> {
            // A connection of its own, not the pool's: an unreachable server fails at once with
            // the driver's reason, instead of after the pool's wait.
            try (Connection c = PgConnections.connect(
                    PgConnections.Target.of(config), PgConnections.applicationName(context), true)) {
                keyType = checkTable(c, declared.keySet());
            } catch (SQLException e) {
                throw new InvalidSettingException(
                        PgConnections.addressKey(config),
                        "cannot reach " + PgConnections.target(config) + ": " + e.getMessage());
            }
        });
        List<Field> fields = new ArrayList<>(columns.getFields());
        fields.add(new Field(OP, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null));
        Schema output = new Schema(fields);
        decoder = NativeDecoder.create(context.allocator(), "json", ",", output);
        return output;
    }

    /** The PostgreSQL type of the key column, after checking every declared column exists. */
    private String checkTable(Connection c, Set<String> wanted) throws SQLException {
        Map<String, String> types = PgRows.columnTypes(c, qualified);
        if (types.isEmpty()) {
            throw new InvalidSettingException(
                    TABLE, "table " + qualified + " does not exist in " + PgConnections.target(config));
        }
        tableTypes = types;
        List<String> missing =
                wanted.stream().filter(w -> !types.containsKey(w)).toList();
        if (!missing.isEmpty()) {
            throw new InvalidSettingException(
                    COLUMNS,
                    "table " + qualified + " has no column " + String.join(", ", missing) + " (it has " + types.keySet()
                            + ")");
        }
        return types.get(key);
    }

    @Override
    public void start() throws SQLException {
        // Its own session, not a pooled one: LISTEN belongs to the session. Not read-only: LISTEN
        // is refused in a read-only session. It only ever reads.
        connection =
                PgConnections.connect(PgConnections.Target.of(config), PgConnections.applicationName(context), false);
        if (channel != null) {
            connection.setAutoCommit(true);
            try (Statement s = connection.createStatement()) {
                s.execute("LISTEN " + ident(channel));
            }
            connection.setAutoCommit(false);
        }
        // One transaction, read in chunks through a cursor (fetch size needs autocommit off).
        snapshotStatement = connection.createStatement();
        snapshotStatement.setFetchSize(batchSize);
        snapshot = snapshotStatement.executeQuery("SELECT " + rowJson("t", "r") + " FROM " + qualified + " t");
    }

    private String rowJson(String t, String op) {
        return PgRows.rowJson(columns, tableTypes, t, op);
    }

    @Override
    public Poll poll(Emitter out) throws SQLException {
        switch (phase) {
            case TRUNCATE -> {
                emit(List.of("{\"_op\":\"t\"}"), out);
                phase = Phase.SNAPSHOT;
                return Poll.EMITTED;
            }
            case SNAPSHOT -> {
                List<String> rows = new ArrayList<>();
                while (rows.size() < batchSize && snapshot.next()) {
                    rows.add(snapshot.getString(1));
                }
                if (rows.size() < batchSize) {
                    snapshot.close();
                    snapshotStatement.close();
                    connection.commit();
                    phase = channel == null ? Phase.DONE : Phase.FOLLOW;
                }
                if (!rows.isEmpty()) {
                    emit(rows, out);
                    return Poll.EMITTED;
                }
                return phase == Phase.DONE ? Poll.END : Poll.IDLE;
            }
            case FOLLOW -> {
                return follow(out);
            }
            default -> {
                return Poll.END;
            }
        }
    }

    /** Reads back the rows of the keys notified since the last poll. */
    private Poll follow(Emitter out) throws SQLException {
        PGNotification[] notifications =
                connection.unwrap(PGConnection.class).getNotifications(); // never blocks (0 would wait forever)
        if (notifications != null) {
            for (PGNotification n : notifications) {
                notified.add(n.getParameter());
            }
        }
        if (notified.isEmpty()) {
            return Poll.IDLE;
        }
        List<String> keys = new ArrayList<>();
        var it = notified.iterator();
        while (it.hasNext() && keys.size() < KEYS_PER_QUERY) {
            keys.add(it.next());
            it.remove();
        }
        String k = ident(key);
        // The notified keys are qualified by their alias: a bare name would be the table's column
        // of that name where it has one (a key column called k made every key "still there").
        String sql = "SELECT " + rowJson("t", "u") + " FROM " + qualified + " t WHERE t." + k + " = ANY(CAST(? AS "
                + keyType + "[])) UNION ALL SELECT jsonb_build_object('" + key.replace("'", "''")
                + "', " + PgRows.value(columns.findField(key), tableTypes.get(key), "gone.notified")
                + ", '_op', 'd')::text FROM unnest(CAST(? AS " + keyType
                + "[])) AS gone(notified) WHERE NOT EXISTS (SELECT 1 FROM "
                + qualified + " t WHERE t." + k + " = gone.notified)";
        List<String> rows = new ArrayList<>();
        try (PreparedStatement s = connection.prepareStatement(sql)) {
            java.sql.Array array = connection.createArrayOf("text", keys.toArray());
            s.setArray(1, array);
            s.setArray(2, array);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    rows.add(rs.getString(1));
                }
            }
        } catch (SQLException e) {
            if ("22P02".equals(e.getSQLState())) {
                // A payload that is no key of this type: say which, do not retry forever.
                throw new IllegalStateException(
                        "a notification on '" + channel + "' carries a payload that is no "
                                + keyType + " key (" + keys.size() + " keys: "
                                + String.join(", ", keys.subList(0, Math.min(5, keys.size())))
                                + "): " + e.getMessage(),
                        e);
            }
            throw e;
        } finally {
            connection.commit();
        }
        for (int from = 0; from < rows.size(); from += batchSize) {
            emit(rows.subList(from, Math.min(rows.size(), from + batchSize)), out);
        }
        return Poll.EMITTED;
    }

    /** Decodes JSON rows in the core and emits them as one batch. */
    private void emit(List<String> rows, Emitter out) {
        out.emit(PgRows.decode(decoder, rows, qualified, context.allocator()));
    }

    @Override
    public void close() throws SQLException {
        if (decoder != null) {
            decoder.close();
        }
        if (connection != null) {
            connection.close();
        }
    }
}
