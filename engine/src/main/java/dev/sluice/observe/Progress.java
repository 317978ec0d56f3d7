package dev.sluice.observe;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The live progress line on stderr: records in and out, rate, elapsed. On a terminal it
 * rewrites one line; otherwise it prints a line every few seconds. The summary at the end
 * lists every node.
 */
public final class Progress {

    private final String pipeline;
    private final RunStats stats;
    private final PrintStream err;
    private final boolean terminal;
    private final long intervalNanos;
    private long lastPrint = System.nanoTime();
    private long lastIn;
    private long lastNanos = System.nanoTime();
    private boolean printedLive;

    public Progress(String pipeline, RunStats stats, PrintStream err, boolean terminal) {
        this.pipeline = pipeline;
        this.stats = stats;
        this.err = err;
        this.terminal = terminal;
        this.intervalNanos = terminal ? 250_000_000L : 5_000_000_000L;
    }

    /** Prints the line if its interval has passed. Cheap to call often. */
    public void tick() {
        long now = System.nanoTime();
        if (now - lastPrint < intervalNanos) {
            return;
        }
        lastPrint = now;
        long in = stats.recordsIn();
        double rate = (in - lastIn) / ((now - lastNanos) / 1e9);
        lastIn = in;
        lastNanos = now;
        String line = String.format(
                Locale.ROOT,
                "[%s] in %,d | out %,d | %,.0f rec/s | %s",
                pipeline,
                in,
                stats.recordsOut(),
                rate,
                elapsed(stats.elapsedSeconds()));
        if (stats.rejected() > 0) {
            line += String.format(Locale.ROOT, " | rejected %,d", stats.rejected());
        }
        long p99 = stats.sinkLatencyP99Millis();
        if (p99 >= 0) {
            line += String.format(Locale.ROOT, " | p99 %,d ms", p99);
        }
        CheckpointStats checkpoints = stats.checkpoints();
        if (checkpoints.completed() > 0) {
            line += String.format(
                    Locale.ROOT, " | epoch %d (%d ms)", checkpoints.lastEpoch(), checkpoints.lastMillis());
        }
        if (checkpoints.timedOut() > 0) {
            line += String.format(Locale.ROOT, " | %d checkpoints timed out", checkpoints.timedOut());
        }
        if (terminal) {
            err.print("\r\033[K" + line);
            printedLive = true;
        } else {
            err.println(line);
        }
        err.flush();
    }

    /** The closing summary: totals, average rate and one line per node. */
    public void summary(String outcome) {
        if (printedLive) {
            err.print("\r\033[K");
        }
        double seconds = stats.elapsedSeconds();
        long in = stats.recordsIn();
        err.printf(
                Locale.ROOT,
                "[%s] %s: in %,d | out %,d | %,.0f rec/s | %s%n",
                pipeline,
                outcome,
                in,
                stats.recordsOut(),
                seconds > 0 ? in / seconds : 0.0,
                elapsed(seconds));
        if (stats.firstRecordAfterJvmStartMillis() >= 0) {
            err.printf(
                    Locale.ROOT,
                    "  first record %,d ms after the JVM started%n",
                    stats.firstRecordAfterJvmStartMillis());
        }
        CheckpointStats checkpoints = stats.checkpoints();
        err.printf(
                Locale.ROOT,
                "  checkpoints: %d completed (last epoch %d took %d ms), %d timed out, %d failed%n",
                checkpoints.completed(),
                checkpoints.lastEpoch(),
                checkpoints.lastMillis(),
                checkpoints.timedOut(),
                checkpoints.failed());
        java.util.Set<NodeStats> sinks = new java.util.HashSet<>(stats.sinkNodes());
        for (NodeStats n : stats.nodes()) {
            RecentValues.Snapshot latency = sinks.contains(n) ? n.latency().snapshot() : null;
            err.printf(
                    Locale.ROOT,
                    "  %-24s in %,14d  out %,14d%s%s%s%n",
                    n.node(),
                    n.rowsIn(),
                    n.rowsOut(),
                    n.rejected() > 0 ? String.format(Locale.ROOT, "  rejected %,d", n.rejected()) : "",
                    n.skipped() > 0 ? String.format(Locale.ROOT, "  skipped %,d (blank lines)", n.skipped()) : "",
                    latency != null && latency.count() > 0
                            ? String.format(
                                    Locale.ROOT,
                                    "  latency p50 %,d / p99 %,d / max %,d ms (last 30-60 s)",
                                    latency.p50(),
                                    latency.p99(),
                                    latency.max())
                            : "");
        }
        for (TableSize table : stats.tables()) {
            long asked = table.hits() + table.misses();
            if (asked > 0) {
                err.printf(
                        Locale.ROOT,
                        "  table %-18s rows %,d  lookups %,d: %,d held, %,d loaded in %,d round trips (hit rate %.1f %%)%n",
                        table.table(),
                        table.rows(),
                        asked,
                        table.hits(),
                        table.misses(),
                        table.loads(),
                        100.0 * table.hits() / asked);
            }
        }
        err.flush();
    }

    static String elapsed(double seconds) {
        long s = (long) seconds;
        return String.format(Locale.ROOT, "%02d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
    }
}
