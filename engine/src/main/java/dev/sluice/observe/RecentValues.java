package dev.sluice.observe;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A distribution of the values recorded over the last 30–60 s — a sink's event-to-sink latencies
 * in milliseconds, a node's rows per batch: recorded once per batch on the lane (a lock-free
 * HdrHistogram {@link Recorder}, 2 significant digits), read from any thread (the progress line, a
 * metrics scrape) as percentiles of the window.
 */
public final class RecentValues {

    private static final long ROTATE_NANOS = 30_000_000_000L;

    private final Recorder recorder = new Recorder(2);
    /** What was recorded since the last rotation, and in the 30 s before it. */
    private final Histogram current = new Histogram(2);

    private Histogram previous;
    private Histogram recycled;
    private long rotatedNanos = System.nanoTime();

    /** The percentiles of the window; {@code count} 0 when nothing was recorded in it. */
    public record Snapshot(long count, long p50, long p99, long max) {}

    /** Records one value (negative ones, e.g. latencies from clocks apart, count as 0). */
    public void record(long value) {
        recorder.recordValue(Math.max(0, value));
    }

    public synchronized Snapshot snapshot() {
        Histogram interval = recorder.getIntervalHistogram(recycled);
        current.add(interval);
        recycled = interval;
        long now = System.nanoTime();
        if (now - rotatedNanos >= ROTATE_NANOS) {
            previous = current.copy();
            current.reset();
            rotatedNanos = now;
        }
        Histogram window = current.copy();
        if (previous != null) {
            window.add(previous);
        }
        return window.getTotalCount() == 0
                ? new Snapshot(0, 0, 0, 0)
                : new Snapshot(
                        window.getTotalCount(),
                        window.getValueAtPercentile(50),
                        window.getValueAtPercentile(99),
                        window.getMaxValue());
    }
}
