package dev.sluice.connector.postgres;

import static dev.sluice.connector.postgres.PgTypes.ident;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDecoder;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.LookupBackend;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL backend of a dynamic table ({@code backend: postgres}): the table holds a bounded
 * cache of a PostgreSQL table's rows, and the keys of each batch it does not hold are read here
 * in one query ({@code WHERE key = ANY(…)}, or {@code (k1, k2) IN (SELECT * FROM unnest(…))} for a
 * key of several columns), on the thread of the transform that asked.
 *
 * <p>Cached rows are dropped when they may have changed: each notification on {@code
 * notify_channel} names a key (the writers, or a trigger, run {@code pg_notify(channel,
 * key::text)}, or for a key of several columns {@code pg_notify(channel, json_build_array(k1,
 * k2)::text)}), read on a connection of its own by a listener thread; every {@code
 * refresh_interval} the whole cache is dropped. When the listener loses its connection it drops
 * the whole cache (notifications sent meanwhile are lost) and connects again.
 */
public final class PostgresLookup implements LookupBackend.Lookup {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresLookup.class);
    private static final JsonFactory JSON = new JsonFactory();
    /** How long the listener waits for notifications before looking whether it should stop. */
    private static final int LISTEN_WAIT_MILLIS = 200;
    /** Attempts of a lookup query that lost its connection (the first included). */
    private static final int QUERY_ATTEMPTS = 3;

    static final String SCHEMA = PgConnections.SCHEMA;
    static final String TABLE = PgConnections.TABLE;
    static final String NOTIFY_CHANNEL = "notify_channel";
    static final String REFRESH_INTERVAL = "refresh_interval";

    /** The {@code postgres} lookup backend, registered in META-INF/services/dev.sluice.plugin.LookupBackend. */
    public static final class Backend implements LookupBackend {

        private static final ConfigDef CONFIG = PgConnections.defineTable(
                        new ConfigDef(),
                        false,
                        "The table whose rows are looked up (used exactly as written, quoted). Default: the dynamic "
                                + "table's name.")
                .define(
                        NOTIFY_CHANNEL,
                        ConfigType.STRING,
                        null,
                        false,
                        "LISTEN on this channel: each notification's payload is the key (as text) of a row that "
                                + "changed, and its cached row is dropped, so the next batch needing it reads it again. "
                                + "For a key of several columns the payload is a JSON array of their values in the "
                                + "key's order (`json_build_array(region, id)::text`); a payload that is not one drops "
                                + "the whole cache.")
                .define(
                        REFRESH_INTERVAL,
                        ConfigType.DURATION,
                        null,
                        false,
                        "Drop the whole cache this often (with or without notify_channel; one of them is required).");

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public String name() {
            return "postgres";
        }

        @Override
        public ConfigDef config() {
            return CONFIG;
        }

        @Override
        public PostgresLookup open(Settings settings, Schema columns, List<String> key, Context context) {
            PgConnections.checkExclusive(settings);
            Duration refresh = settings.getDuration(REFRESH_INTERVAL);
            if (settings.getString(NOTIFY_CHANNEL) == null && refresh == null) {
                throw new InvalidSettingException(
                        NOTIFY_CHANNEL,
                        "give notify_channel (a cached row is dropped when its key is notified) or refresh_interval "
                                + "(the whole cache is dropped that often), or both: without either a cached row would "
                                + "never see a change");
            }
            if (refresh != null && (refresh.isZero() || refresh.isNegative())) {
                throw new InvalidSettingException(REFRESH_INTERVAL, "must be positive, got " + refresh);
            }
            String table = settings.getString(TABLE) == null ? context.table() : settings.getString(TABLE);
            return new PostgresLookup(
                    PgConnections.Target.of(settings),
                    ident(settings.getString(SCHEMA)) + "." + ident(table),
                    settings.getString(NOTIFY_CHANNEL),
                    refresh,
                    columns,
                    key,
                    "sluice " + context.pipeline() + "/tables." + context.table(),
                    context.allocator());
        }
    }

    private final PgConnections.Target target;
    private final String notifyChannel;
    private final Duration refreshInterval;
    private final String qualified;
    private final List<String> key;
    private final Schema columns;
    private final String applicationName;
    private final BufferAllocator allocator;
    private final NativeDecoder decoder;
    /** The lease on the server's connection pool, taken at the first lookup. */
    private PgPool pool;

    private Connection connection;
    /** The key columns' PostgreSQL types, read when the table is checked. */
    private List<String> keyTypes;
    /** The table's column types, by column name: how each declared column is read ({@link PgRows#rowJson}). */
    private Map<String, String> tableTypes;

    private volatile boolean closed;
    private Thread listener;

    /** Lookups in table {@code qualified}, of {@code columns} keyed by {@code key}; it connects when first asked. */
    private PostgresLookup(
            PgConnections.Target target,
            String qualified,
            String notifyChannel,
            Duration refreshInterval,
            Schema columns,
            List<String> key,
            String applicationName,
            BufferAllocator allocator) {
        this.target = target;
        this.qualified = qualified;
        this.notifyChannel = notifyChannel;
        this.refreshInterval = refreshInterval;
        this.key = key;
        this.columns = columns;
        this.applicationName = applicationName;
        this.allocator = allocator;
        this.decoder = NativeDecoder.create(allocator, "json", ",", columns);
    }

    /** Starts the thread that drops notified keys and, every {@code refresh_interval}, everything. */
    @Override
    public void follow(LookupBackend.Changes changes) {
        listener =
                Thread.ofPlatform().daemon().name("sluice-lookup " + qualified).start(() -> listen(changes));
    }

    @Override
    public synchronized NativeBatch load(Batch keys) throws SQLException {
        List<List<String>> values = new ArrayList<>(); // one list per key column
        try (VectorSchemaRoot root = keys.toVectors(allocator)) {
            for (String column : key) {
                IntFunction<String> text = PgTypes.text(root.getVector(column));
                List<String> texts = new ArrayList<>(root.getRowCount());
                for (int i = 0; i < root.getRowCount(); i++) {
                    texts.add(text.apply(i));
                }
                values.add(texts);
            }
        }
        List<String> rows = query(values);
        return rows.isEmpty() ? null : PgRows.decode(decoder, rows, qualified, allocator);
    }

    /** The JSON rows of {@code keys} (a list per key column), reconnecting when the connection was lost. */
    private List<String> query(List<List<String>> keys) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                Connection c = connection();
                List<String> arrays = new ArrayList<>();
                for (String type : keyTypes) {
                    arrays.add("CAST(? AS " + type + "[])");
                }
                String where = key.size() == 1
                        ? "t." + ident(key.get(0)) + " = ANY(" + arrays.get(0) + ")"
                        : "("
                                + String.join(
                                        ", ",
                                        key.stream().map(k -> "t." + ident(k)).toList()) + ") IN (SELECT * FROM unnest("
                                + String.join(", ", arrays) + "))";
                String sql = "SELECT " + PgRows.rowJson(columns, tableTypes, "t", null) + " FROM " + qualified
                        + " t WHERE " + where;
                List<String> rows = new ArrayList<>();
                try (PreparedStatement s = c.prepareStatement(sql)) {
                    for (int k = 0; k < keys.size(); k++) {
                        s.setArray(k + 1, c.createArrayOf("text", keys.get(k).toArray()));
                    }
                    try (ResultSet rs = s.executeQuery()) {
                        while (rs.next()) {
                            rows.add(rs.getString(1));
                        }
                    }
                } finally {
                    c.rollback();
                }
                return rows;
            } catch (SQLException e) {
                if (!lostConnection(e) || attempt == QUERY_ATTEMPTS) {
                    throw new SQLException(
                            "looking up " + keys.get(0).size() + " keys in " + qualified + " (" + target + "): "
                                    + e.getMessage(),
                            e.getSQLState(),
                            e);
                }
                LOG.warn("lookup in {} lost its connection ({}); connecting again", qualified, e.getMessage());
                discardConnection();
                sleep(200L * attempt);
            }
        }
    }

    /** The lookup connection, opened (and the table checked) when first needed. */
    private Connection connection() throws SQLException {
        if (connection == null || connection.isClosed()) {
            if (pool == null) {
                pool = PgPool.open(target);
            }
            Connection c = pool.connection(applicationName, true);
            try {
                keyTypes = checkTable(c);
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
            connection = c;
        }
        return connection;
    }

    /** The key columns' types, after checking that the table has every declared column. */
    private List<String> checkTable(Connection c) throws SQLException {
        Map<String, String> types = PgRows.columnTypes(c, qualified);
        if (types.isEmpty()) {
            throw new IllegalStateException("table " + qualified + " does not exist in " + target);
        }
        tableTypes = types;
        List<String> missing = columns.getFields().stream()
                .map(Field::getName)
                .filter(name -> !types.containsKey(name))
                .toList();
        if (!missing.isEmpty()) {
            throw new IllegalStateException("table " + qualified + " has no column " + String.join(", ", missing)
                    + " (it has " + types.keySet() + ")");
        }
        // Keys are sent as their text forms, cast by the server to the key column's type: bytes
        // as \x-hex, which only a bytea column reads as bytes (a text column would match nothing).
        for (String k : key) {
            ArrowType declared = columns.findField(k).getType();
            boolean binary = declared instanceof ArrowType.Binary || declared instanceof ArrowType.LargeBinary;
            if (binary && !types.get(k).equals("bytea")) {
                throw new IllegalStateException("key column '" + k + "' is declared binary but is " + types.get(k)
                        + " in table " + qualified + ": declare it with the column's type (string for text)");
            }
        }
        return key.stream().map(types::get).toList();
    }

    /** The listener thread: drops notified keys, and everything at each refresh or reconnection. */
    private void listen(LookupBackend.Changes table) {
        long refreshNanos = refreshInterval == null ? 0 : refreshInterval.toNanos();
        long nextRefresh = System.nanoTime() + refreshNanos;
        Connection listening = null;
        while (!closed) {
            try {
                if (notifyChannel != null && listening == null) {
                    // Its own session, not a pooled one: LISTEN belongs to the session.
                    listening = PgConnections.connect(target, applicationName + " (listener)", false);
                    listening.setAutoCommit(true);
                    try (Statement s = listening.createStatement()) {
                        s.execute("LISTEN " + ident(notifyChannel));
                    }
                    // Anything may have changed while nobody listened.
                    table.forgetAll();
                }
                if (refreshNanos > 0 && System.nanoTime() >= nextRefresh) {
                    table.forgetAll();
                    nextRefresh = System.nanoTime() + refreshNanos;
                }
                if (listening == null) {
                    sleep(LISTEN_WAIT_MILLIS);
                    continue;
                }
                PGNotification[] notifications =
                        listening.unwrap(PGConnection.class).getNotifications(LISTEN_WAIT_MILLIS);
                if (notifications != null && notifications.length > 0) {
                    Set<List<String>> keys = new LinkedHashSet<>();
                    boolean unreadable = false;
                    for (PGNotification n : notifications) {
                        List<String> notified = key.size() == 1 ? List.of(n.getParameter()) : keyOf(n.getParameter());
                        if (notified == null) {
                            unreadable = true;
                        } else {
                            keys.add(notified);
                        }
                    }
                    if (unreadable) {
                        table.forgetAll();
                    } else {
                        table.forget(keys);
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    break;
                }
                LOG.warn(
                        "listening on '{}' for changes of {}: {}; connecting again",
                        notifyChannel,
                        qualified,
                        e.getMessage());
                close(listening);
                listening = null;
                sleep(1000);
            }
        }
        close(listening);
    }

    /**
     * A notified key of several columns: a JSON array of one scalar per key column. Null (and a
     * warning: the caller then drops the whole cache, which is never wrong) for anything else.
     */
    private List<String> keyOf(String payload) {
        List<String> values = new ArrayList<>();
        try (JsonParser json = JSON.createParser(payload)) {
            if (json.nextToken() == JsonToken.START_ARRAY) {
                for (JsonToken t = json.nextToken(); t != null && t != JsonToken.END_ARRAY; t = json.nextToken()) {
                    if (!t.isScalarValue() || t == JsonToken.VALUE_NULL) {
                        values = null;
                        break;
                    }
                    values.add(json.getText());
                }
                if (values != null && values.size() == key.size() && json.nextToken() == null) {
                    return values;
                }
            }
        } catch (IOException e) {
            // not JSON: reported below
        }
        LOG.warn(
                "a notification on '{}' for {} is not a JSON array of the {} key columns {}: '{}'; dropping the whole cache",
                notifyChannel,
                qualified,
                key.size(),
                key,
                payload.length() > 200 ? payload.substring(0, 200) + "…" : payload);
        return null;
    }

    private static boolean lostConnection(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("57P01"));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void close(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // closing a broken connection
            }
        }
    }

    /** Drops the lookup connection after it failed (see {@link PgPool#discard}). */
    private synchronized void discardConnection() {
        if (connection != null) {
            pool.discard(connection);
            connection = null;
        }
    }

    private synchronized void closeConnection() {
        close(connection);
        connection = null;
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        if (listener != null) {
            listener.join();
        }
        closeConnection();
        synchronized (this) {
            if (pool != null) {
                pool.close();
            }
        }
        decoder.close();
    }
}
