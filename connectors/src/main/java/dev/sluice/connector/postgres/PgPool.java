package dev.sluice.connector.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Connections to one PostgreSQL server (one {@link PgConnections.Target}: address and
 * credentials), pooled by HikariCP and shared by every node of every pipeline in this process
 * that reaches that server — a service running many pipelines opens a server's connections once.
 *
 * <p>A stage {@link #open opens} a lease when it starts and closes it when it closes; the pool is
 * closed with its last lease. Connections come out with autocommit off; closing one gives it
 * back (HikariCP rolls back an open transaction and drops a connection that failed with a
 * connection error). The pool keeps no idle connections beyond a minute and none at all when
 * nobody needs them. A session that must stay the same for the whole run (a {@code LISTEN}) does
 * not come from here: see {@link PgConnections#connect}.
 */
final class PgPool implements AutoCloseable {

    /** Most connections open to one server at a time; a lane's sink holds one for its run. */
    static final int MAX_CONNECTIONS = 32;

    private static final Map<PgConnections.Target, Shared> POOLS = new HashMap<>();

    private record Shared(HikariDataSource pool, int[] leases) {}

    private final PgConnections.Target target;
    private final HikariDataSource pool;
    private boolean closed;

    private PgPool(PgConnections.Target target, HikariDataSource pool) {
        this.target = target;
        this.pool = pool;
    }

    /** A lease on the pool of {@code target}'s server, made when it is the first. */
    static PgPool open(PgConnections.Target target) {
        synchronized (POOLS) {
            Shared shared = POOLS.computeIfAbsent(target, t -> new Shared(create(t), new int[1]));
            shared.leases()[0]++;
            return new PgPool(target, shared.pool());
        }
    }

    private static HikariDataSource create(PgConnections.Target target) {
        PGSimpleDataSource ds = PgConnections.dataSource(target, "sluice");
        HikariConfig config = new HikariConfig();
        config.setDataSource(ds);
        config.setPoolName("sluice " + target.describe());
        config.setAutoCommit(false);
        config.setConnectionInitSql(PgConnections.SESSION_SETUP);
        config.setIsolateInternalQueries(true); // commits the SET above (autocommit is off)
        config.setMaximumPoolSize(MAX_CONNECTIONS);
        config.setMinimumIdle(0);
        config.setIdleTimeout(60_000);
        // How long a borrower waits: for a free connection, or for a new one while the server
        // cannot be reached (then the driver's reason is thrown, and the caller's retries apply).
        config.setConnectionTimeout(5_000);
        // No connection at start: a pipeline that cannot reach the server fails where it asks
        // for one, with the driver's reason.
        config.setInitializationFailTimeout(-1);
        return new HikariDataSource(config);
    }

    /**
     * A connection, autocommit off, {@code readOnly} as asked, named {@code applicationName} in
     * {@code pg_stat_activity}. Closing it gives it back.
     */
    Connection connection(String applicationName, boolean readOnly) throws SQLException {
        if (closed) {
            throw new IllegalStateException("the connection pool lease for " + target + " is closed");
        }
        Connection c;
        try {
            c = pool.getConnection();
        } catch (SQLException e) {
            // HikariCP's timeout names the pool; the driver's reason, when there is one, is the
            // cause. Without one it is still a connection failure (SQLState class 08), which
            // callers retry, not a fault of the rows.
            if (e.getCause() instanceof SQLException cause) {
                throw cause;
            }
            throw new SQLException(e.getMessage(), e.getSQLState() != null ? e.getSQLState() : "08001", e);
        }
        try {
            // Read-only first: it cannot change inside a transaction, and the SET below opens
            // one (autocommit is off), whose commit keeps the name.
            c.setReadOnly(readOnly);
            c.setClientInfo("ApplicationName", applicationName);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            discard(c); // failed: not given back
            throw e;
        }
        return c;
    }

    /**
     * Drops a borrowed connection that failed, instead of giving it back: HikariCP closes it on a
     * thread of its own, so a driver still waiting on a session the server ended (a COPY in
     * progress) never holds the caller, and the connection never serves anyone again.
     */
    void discard(Connection c) {
        pool.evictConnection(c);
    }

    /** Ends the lease; the last one closes the pool and its connections. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        synchronized (POOLS) {
            Shared shared = POOLS.get(target);
            if (shared != null && --shared.leases()[0] == 0) {
                POOLS.remove(target);
                shared.pool().close();
            }
        }
    }

    /** Open pools, for tests: every lease closed must leave none. */
    static int openPools() {
        synchronized (POOLS) {
            return POOLS.size();
        }
    }
}
