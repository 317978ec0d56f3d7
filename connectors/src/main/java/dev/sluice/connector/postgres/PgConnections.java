package dev.sluice.connector.postgres;

import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.Validator;
import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.ds.PGSimpleDataSource;

/** The connection settings the PostgreSQL sink and source share, and how they connect. */
final class PgConnections {

    static final String URL = "url";
    static final String HOST = "host";
    static final String PORT = "port";
    static final String DATABASE = "database";
    static final String USER = "user";
    static final String PASSWORD = "password";

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

    /** The server, for messages: no user, no password, no URL parameters. */
    static String target(Settings config) {
        String url = config.getString(URL);
        if (url != null) {
            int q = url.indexOf('?');
            String base = q < 0 ? url : url.substring(0, q);
            return "PostgreSQL at " + base.replaceFirst("//[^/@]*@", "//");
        }
        return "PostgreSQL at " + (config.getString(HOST) == null ? "localhost" : config.getString(HOST)) + ":"
                + config.getInt(PORT) + "/" + (config.getString(DATABASE) == null ? "" : config.getString(DATABASE));
    }

    /** A new connection, autocommit off, named after the node in {@code pg_stat_activity}. */
    static Connection connect(Settings config, StageContext context, boolean readOnly) throws SQLException {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        String url = config.getString(URL);
        if (url != null) {
            if (!url.startsWith("jdbc:postgresql:")) {
                throw new InvalidSettingException(URL, "not a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db)");
            }
            ds.setURL(url);
        } else {
            ds.setServerNames(new String[] {config.getString(HOST) == null ? "localhost" : config.getString(HOST)});
            ds.setPortNumbers(new int[] {config.getInt(PORT)});
            if (config.getString(DATABASE) != null) {
                ds.setDatabaseName(config.getString(DATABASE));
            }
        }
        if (config.getString(USER) != null) {
            ds.setUser(config.getString(USER));
        }
        if (config.getString(PASSWORD) != null) {
            ds.setPassword(config.getString(PASSWORD));
        }
        ds.setApplicationName("sluice " + context.pipelineName() + "/" + context.nodeName());
        ds.setConnectTimeout(10);
        ds.setTcpKeepAlive(true);
        Connection c = ds.getConnection();
        c.setReadOnly(readOnly);
        c.setAutoCommit(false);
        return c;
    }
}
