package dev.sluice.connector.postgres;

import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Assumptions;

/**
 * Talks to the real PostgreSQL that ci/test.sh starts (ci/postgres.sh); its JDBC URL comes from
 * SLUICE_PG_URL (user postgres, no password).
 */
public final class PgTestSupport {

    private PgTestSupport() {}

    /**
     * A test sink handing each row's {@code cid} and {@code name} ("NULL" for null) to {@code row}:
     * what the lookup and source tests read out of their pipelines.
     */
    static Sink cidNameSink(BiConsumer<Long, String> row) {
        return new Sink() {
            private BufferAllocator allocator;

            @Override
            public void open(StageContext context, Schema schema) {
                allocator = context.allocator();
            }

            @Override
            public void write(Batch batch) {
                try (VectorSchemaRoot root = batch.toVectors(allocator)) {
                    for (int i = 0; i < root.getRowCount(); i++) {
                        Object name = root.getVector("name").getObject(i);
                        row.accept((Long) root.getVector("cid").getObject(i), name == null ? "NULL" : name.toString());
                    }
                }
            }

            @Override
            public void onBarrier(Barrier barrier) {}

            @Override
            public void close() {}
        };
    }

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
