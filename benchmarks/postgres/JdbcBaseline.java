import java.io.BufferedReader;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.LocalDateTime;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * The baselines of benchmarks/postgres_bench.py: the rows of a CSV file (id,name,amount,at) written
 * into table sink_bench the way a user would without Sluice, timed from the first line read to the
 * commit (JVM start excluded, as the engine's own rows/s excludes it). Prints "rows/s N".
 *
 * <pre>java -cp postgresql.jar JdbcBaseline.java MODE BATCH FILE URL</pre>
 *
 * MODE: {@code insert} (a batched INSERT, the driver's reWriteBatchedInserts turning each batch into
 * multi-row statements, executeBatch every BATCH rows), {@code upsert} (the same with ON CONFLICT (id)
 * DO UPDATE), {@code copy} (COPY … FROM STDIN in CSV, one COPY per BATCH rows). One transaction.
 */
public class JdbcBaseline {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int batch = Integer.parseInt(args[1]);
        Path file = Path.of(args[2]);
        String url = args[3] + (args[3].contains("?") ? "&" : "?") + "reWriteBatchedInserts=true";
        try (Connection c = DriverManager.getConnection(url, "postgres", "")) {
            c.setAutoCommit(false);
            long started = System.nanoTime();
            long rows = mode.equals("copy") ? copy(c, batch, file) : insert(c, batch, file, mode.equals("upsert"));
            c.commit();
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("rows %d seconds %.3f rows/s %.0f%n", rows, seconds, rows / seconds);
        }
    }

    static long insert(Connection c, int batch, Path file, boolean upsert) throws Exception {
        String sql = "INSERT INTO sink_bench (id, name, amount, at) VALUES (?, ?, ?, ?)"
                + (upsert ? " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, amount = EXCLUDED.amount, "
                        + "at = EXCLUDED.at" : "");
        long rows = 0;
        try (BufferedReader in = Files.newBufferedReader(file);
                PreparedStatement s = c.prepareStatement(sql)) {
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.split(",", 4);
                s.setLong(1, Long.parseLong(f[0]));
                s.setString(2, f[1]);
                s.setDouble(3, Double.parseDouble(f[2]));
                s.setTimestamp(4, Timestamp.valueOf(LocalDateTime.parse(f[3])));
                s.addBatch();
                if (++rows % batch == 0) {
                    s.executeBatch();
                }
            }
            s.executeBatch();
        }
        return rows;
    }

    static long copy(Connection c, int batch, Path file) throws Exception {
        CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
        long rows = 0;
        StringBuilder chunk = new StringBuilder();
        try (BufferedReader in = Files.newBufferedReader(file)) {
            for (String line; (line = in.readLine()) != null; ) {
                chunk.append(line).append('\n');
                if (++rows % batch == 0) {
                    copy.copyIn("COPY sink_bench (id, name, amount, at) FROM STDIN (FORMAT csv)", new StringReader(chunk.toString()));
                    chunk.setLength(0);
                }
            }
        }
        if (chunk.length() > 0) {
            copy.copyIn("COPY sink_bench (id, name, amount, at) FROM STDIN (FORMAT csv)", new StringReader(chunk.toString()));
        }
        return rows;
    }
}
