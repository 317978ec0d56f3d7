package dev.sluice.connector.postgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * Talks to the real PostgreSQL that ci/test.sh starts (ci/postgres.sh); its JDBC URL comes from
 * SLUICE_PG_URL (user postgres, no password).
 */
public final class PgTestSupport {

    private PgTestSupport() {}

    public static String url() {
        String url = System.getenv("SLUICE_PG_URL");
        Assumptions.assumeTrue(
                url != null && !url.isBlank(),
                "SLUICE_PG_URL is not set: start a server with ci/postgres.sh start and export "
                        + "SLUICE_PG_URL=$(ci/postgres.sh url) (ci/test.sh does)");
        return url;
    }

    public static Connection connect() throws SQLException {
        return DriverManager.getConnection(url(), "postgres", "");
    }

    public static String uniqueTable(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().substring(0, 8);
    }

    public static void execute(String... sql) throws SQLException {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            for (String statement : sql) {
                s.execute(statement);
            }
        }
    }

    /** Every row of {@code query}, each as its columns' text joined by '|' (NULL for null). */
    public static List<String> rows(String query) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(query)) {
            ResultSetMetaData meta = rs.getMetaData();
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    if (i > 1) {
                        row.append('|');
                    }
                    String v = rs.getString(i);
                    row.append(v == null ? "NULL" : v);
                }
                out.add(row.toString());
            }
        }
        return out;
    }

    /** Whether a table exists. */
    public static boolean exists(String table) throws SQLException {
        return rows("SELECT to_regclass('public.\"" + table + "\"') IS NOT NULL")
                .get(0)
                .equals("t");
    }
}
