import java.sql.*;
import java.nio.charset.StandardCharsets;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * How the postgres sink should write a flush: COPY into a temporary table + one INSERT … SELECT …
 * ON CONFLICT (what PostgresSink does), against multi-row INSERT … VALUES … ON CONFLICT with typed
 * or text-bound values. 200 000 rows of bigint, text, double, timestamp, inserted then upserted,
 * at flush sizes of 1 000 and 10 000 rows, 5 rounds; prints rows/s of every round.
 *
 * <p>Run against the test server (ci/postgres.sh start):
 * {@code java -cp ~/.m2/repository/org/postgresql/postgresql/42.7.14/postgresql-42.7.14.jar benchmarks/postgres/WriteStrategyBench.java}
 * (it drops and creates table {@code b}). Output of 2026-12-02: results/postgres-write-strategy-20261202T035400Z.txt.
 */
public class WriteStrategyBench {
    public static void main(String[] a) throws Exception {
        Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:55432/postgres", "postgres", "");
        c.setAutoCommit(false);
        int total = 200_000;
        for (int batch : new int[] {1_000, 10_000}) {
            for (int round = 0; round < 5; round++) {
                for (String strategy : new String[] {"copy", "multirow", "multitext"}) {
                    try (Statement s = c.createStatement()) {
                        s.execute("DROP TABLE IF EXISTS b; CREATE TABLE b (id bigint PRIMARY KEY, name text, amount double precision, at timestamp)");
                        s.execute("DROP TABLE IF EXISTS st; CREATE TEMP TABLE st (id bigint, name text, amount double precision, at timestamp, op \"char\")");
                    }
                    c.commit();
                    for (String phase : new String[] {"insert", "upsert"}) {
                        long t0 = System.nanoTime();
                        for (int start = 0; start < total; start += batch) {
                            if (strategy.equals("copy")) copy(c, start, batch, phase); else if (strategy.equals("multirow")) multi(c, start, batch, phase); else multiText(c, start, batch, phase);
                        }
                        c.commit();
                        double s = (System.nanoTime() - t0) / 1e9;
                        System.out.printf("batch %6d round %d %-8s %-6s %8.0f rows/s%n", batch, round, strategy, phase, total / s);
                    }
                }
            }
        }
    }
    static void copy(Connection c, int start, int n, String phase) throws Exception {
        
        StringBuilder sb = new StringBuilder();
        for (int i = start; i < start + n; i++) {
            sb.append(i).append('\t').append("name-").append(i).append(phase).append('\t').append(i * 1.5).append('\t').append("2024-01-01T12:00:00.123456").append("\tu\n");
        }
        byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
        CopyIn in = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY st FROM STDIN");
        in.writeToCopy(b, 0, b.length); in.endCopy();
        try (Statement s = c.createStatement()) {
            s.execute("INSERT INTO b AS t (id, name, amount, at) SELECT id, name, amount, at FROM st WHERE op <> 'd' ON CONFLICT (id) DO UPDATE SET name = excluded.name, amount = excluded.amount, at = excluded.at; TRUNCATE st");
        }
    }
    static void multi(Connection c, int start, int n, String phase) throws Exception {
        int per = Math.min(n, 1000);
        StringBuilder sql = new StringBuilder("INSERT INTO b AS t (id, name, amount, at) VALUES ");
        for (int i = 0; i < per; i++) sql.append(i > 0 ? "," : "").append("(?,?,?,?)");
        sql.append(" ON CONFLICT (id) DO UPDATE SET name = excluded.name, amount = excluded.amount, at = excluded.at");
        try (PreparedStatement p = c.prepareStatement(sql.toString())) {
            java.sql.Timestamp ts = java.sql.Timestamp.valueOf("2024-01-01 12:00:00.123456");
            for (int off = start; off < start + n; off += per) {
                int k = 1;
                for (int i = off; i < off + per; i++) {
                    p.setLong(k++, i); p.setString(k++, "name-" + i + phase); p.setDouble(k++, i * 1.5); p.setTimestamp(k++, ts);
                }
                p.executeUpdate();
            }
        }
    }

    static void multiText(Connection c, int start, int n, String phase) throws Exception {
        int per = Math.min(n, 1000);
        StringBuilder sql = new StringBuilder("INSERT INTO b AS t (id, name, amount, at) VALUES ");
        for (int i = 0; i < per; i++) sql.append(i > 0 ? "," : "").append("(?::bigint,?::text,?::double precision,?::timestamp)");
        sql.append(" ON CONFLICT (id) DO UPDATE SET name = excluded.name, amount = excluded.amount, at = excluded.at");
        try (PreparedStatement p = c.prepareStatement(sql.toString())) {
            for (int off = start; off < start + n; off += per) {
                int k = 1;
                for (int i = off; i < off + per; i++) {
                    p.setString(k++, Long.toString(i)); p.setString(k++, "name-" + i + phase); p.setString(k++, Double.toString(i * 1.5)); p.setString(k++, "2024-01-01T12:00:00.123456");
                }
                p.executeUpdate();
            }
        }
    }
}
