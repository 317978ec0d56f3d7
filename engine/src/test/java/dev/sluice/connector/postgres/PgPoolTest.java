package dev.sluice.connector.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The PostgreSQL connection pool against the real server of ci/postgres.sh. */
class PgPoolTest {

    private static final PgConnections.Target TARGET =
            new PgConnections.Target(PgTestSupport.url(), null, 5432, null, "postgres", null);

    private static String one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void leasesShareOneServersConnectionsAndTheLastLeaseClosesThePool() throws Exception {
        int before = PgPool.openPools();
        String pid;
        try (PgPool a = PgPool.open(TARGET);
                PgPool b = PgPool.open(TARGET)) {
            assertEquals(before + 1, PgPool.openPools(), "one pool per server");
            try (Connection c = a.connection("sluice pool-test/a", true)) {
                assertFalse(c.getAutoCommit());
                assertEquals("on", one(c, "SHOW transaction_read_only"));
                assertEquals("sluice pool-test/a", one(c, "SHOW application_name"));
                pid = one(c, "SELECT pg_backend_pid()");
                c.rollback();
            }
            // Given back and borrowed by another lease: the same session, renamed, writable.
            try (Connection c = b.connection("sluice pool-test/b", false)) {
                assertEquals(pid, one(c, "SELECT pg_backend_pid()"));
                assertEquals("off", one(c, "SHOW transaction_read_only"));
                assertEquals("sluice pool-test/b", one(c, "SHOW application_name"));
                // An uncommitted write is rolled back when the connection is given back.
                try (Statement s = c.createStatement()) {
                    s.execute("CREATE TABLE pool_test_uncommitted (x int)");
                }
            }
            try (Connection c = a.connection("sluice pool-test/a", false)) {
                assertEquals("f", one(c, "SELECT to_regclass('pool_test_uncommitted') IS NOT NULL"));
                c.rollback();
            }
            a.close();
            a.close(); // idempotent: b's lease still holds the pool
            assertThrows(IllegalStateException.class, () -> a.connection("closed", true));
            assertEquals(before + 1, PgPool.openPools());
            try (Connection c = b.connection("sluice pool-test/b", true)) {
                assertTrue(c.isValid(5));
            }
        }
        assertEquals(before, PgPool.openPools(), "the last lease closed the pool");
    }

    /** A borrower that finds every connection taken waits, then gets a connection-class error (retried). */
    @Test
    void anExhaustedPoolIsAConnectionFailure() throws Exception {
        java.util.List<Connection> held = new java.util.ArrayList<>();
        try (PgPool pool = PgPool.open(TARGET)) {
            try {
                for (int i = 0; i < PgPool.MAX_CONNECTIONS; i++) {
                    held.add(pool.connection("sluice pool-test/held", true));
                }
                SQLException e = assertThrows(SQLException.class, () -> pool.connection("sluice pool-test/late", true));
                assertTrue(e.getSQLState().startsWith("08"), e.getSQLState() + ": " + e.getMessage());
                assertTrue(e.getMessage().contains("not available"), e.getMessage());
            } finally {
                for (Connection c : held) {
                    c.close();
                }
            }
        }
    }

    @Test
    void anUnreachableServerFailsWithTheDriversReason() {
        PgConnections.Target nowhere =
                new PgConnections.Target("jdbc:postgresql://127.0.0.1:1/x", null, 5432, null, "postgres", "s3cr3t");
        try (PgPool pool = PgPool.open(nowhere)) {
            SQLException e = assertThrows(SQLException.class, () -> pool.connection("sluice pool-test", true));
            assertTrue(e.getMessage().contains("Connection to 127.0.0.1:1 refused"), e.getMessage());
            assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
        }
    }
}
