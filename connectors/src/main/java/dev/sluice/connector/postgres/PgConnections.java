package dev.sluice.connector.postgres;

import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.Validator;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.ds.PGSimpleDataSource;

/** The connection settings the PostgreSQL sink, source and lookups share, and how they connect. */
public final class PgConnections {

    static final String URL = "url";
    static final String HOST = "host";
    static final String PORT = "port";
    static final String DATABASE = "database";
    static final String USER = "user";
    static final String PASSWORD = "password";
    static final String SCHEMA = "schema";
    static final String TABLE = "table";

    private PgConnections() {}

    /** Adds url, host, port, database, user and password to {@code def}. */
    static ConfigDef define(ConfigDef def) {
        return def.define(
                        URL,
                        ConfigType.STRING,
                        null,
                        false,
                        "JDBC URL, e.g. `jdbc:postgresql://db:5432/shop`. Instead of it: `host`, `port`, `database`.")
                .define(
                        HOST,
                        ConfigType.STRING,
                        null,
                        false,
                        "Server host (when `url` is not set). Default: localhost.")
                .define(
                        PORT,
                        ConfigType.INT,
                        5432,
                        false,
                        "Server port (when `url` is not set).",
                        Validator.between(1, 65535))
                .define(
                        DATABASE,
                        ConfigType.STRING,
                        null,
                        false,
                        "Database (when `url` is not set). Default: the user's name.")
                .define(USER, ConfigType.STRING, null, false, "User name.")
                .define(
                        PASSWORD,
                        ConfigType.STRING,
                        null,
                        false,
                        "Password; write an environment reference such as `${PG_PASSWORD}`. Never logged or shown in errors.");
    }

    /**
     * Adds the connection keys ({@link #define}), then {@code schema} (default public) and {@code
     * table}, documented as {@code tableDoc}.
     */
    static ConfigDef defineTable(ConfigDef def, boolean tableRequired, String tableDoc) {
        return define(def)
                .define(
                        SCHEMA,
                        ConfigType.STRING,
                        "public",
                        false,
                        "Schema of the table (used exactly as written, quoted).")
                .define(TABLE, ConfigType.STRING, null, tableRequired, tableDoc, Validator.nonEmpty());
    }

    /** Refuses a url together with host/port/database. */
    static void checkExclusive(Settings config) {
        if (config.getString(URL) != null
                && (config.getString(HOST) != null || config.getString(DATABASE) != null || config.has(PORT))) {
            throw new InvalidSettingException(URL, "give either url or host/port/database, not both");
        }
    }

    /** The setting a connection failure is reported at. */
    static String addressKey(Settings config) {
        return config.getString(URL) != null ? URL : HOST;
    }

    /**
     * Where to connect: a JDBC {@code url}, or {@code host}/{@code port}/{@code database}
     * (nulls: the driver's defaults), and the credentials.
     */
    public record Target(String url, String host, int port, String database, String user, String password) {

        static Target of(Settings config) {
            return new Target(
                    config.getString(URL),
                    config.getString(HOST),
                    config.getInt(PORT),
                    config.getString(DATABASE),
                    config.getString(USER),
                    config.getString(PASSWORD));
        }

        /** The server, for messages: no user, no password, no URL parameters. */
        public String describe() {
            if (url != null) {
                int q = url.indexOf('?');
                String base = q < 0 ? url : url.substring(0, q);
                return "PostgreSQL at " + base.replaceFirst("//[^/@]*@", "//");
            }
            return "PostgreSQL at " + (host == null ? "localhost" : host) + ":" + port + "/"
                    + (database == null ? "" : database);
        }

        @Override
        public String toString() {
            return describe(); // never the password
        }
    }

    /** The server, for messages: no user, no password, no URL parameters. */
    static String target(Settings config) {
        return Target.of(config).describe();
    }

    /** How a node's connections are named in {@code pg_stat_activity}. */
    static String applicationName(StageContext context) {
        return "sluice " + context.pipelineName() + "/" + context.nodeName();
    }

    /**
     * A new connection of its own, outside the pool, autocommit off, named {@code applicationName}
     * in {@code pg_stat_activity}: for a session that must stay the same for the whole run (a
     * {@code LISTEN}), and for the one-off checks of validation. Everything else borrows from a
     * {@link PgPool}.
     */
    static Connection connect(Target target, String applicationName, boolean readOnly) throws SQLException {
        Connection c = dataSource(target, applicationName).getConnection();
        try (Statement s = c.createStatement()) {
            s.execute(SESSION_SETUP);
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
        c.setReadOnly(readOnly);
        c.setAutoCommit(false);
        return c;
    }

    /**
     * Run once on every new session. The server reads a time without a zone written into a
     * {@code timestamptz} column (as text) in the session's time zone, and the driver's default
     * is the JVM's: UTC makes those values mean what they mean everywhere else in Sluice, and the
     * same pipeline write the same instants on every machine.
     */
    static final String SESSION_SETUP = "SET TIME ZONE 'UTC'";

    /** The driver's data source for {@code target}. */
    static PGSimpleDataSource dataSource(Target target, String applicationName) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        if (target.url() != null) {
            if (!target.url().startsWith("jdbc:postgresql:")) {
                throw new InvalidSettingException(URL, "not a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db)");
            }
            ds.setURL(target.url());
        } else {
            ds.setServerNames(new String[] {target.host() == null ? "localhost" : target.host()});
            ds.setPortNumbers(new int[] {target.port()});
            if (target.database() != null) {
                ds.setDatabaseName(target.database());
            }
        }
        if (target.user() != null) {
            ds.setUser(target.user());
        }
        if (target.password() != null) {
            ds.setPassword(target.password());
        }
        ds.setApplicationName(applicationName);
        ds.setConnectTimeout(10);
        ds.setTcpKeepAlive(true);
        return ds;
    }
}
