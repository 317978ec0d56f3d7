package dev.sluice.observe;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A small rotating sample of the rows one node emitted (sinks: received), for live inspection.
 * At most {@code rowsPerWindow} rows are taken in any window of {@code windowNanos} (windows are
 * aligned to the first take); within a window, takes are spread out so the sample follows the
 * stream instead of holding its first rows. The last {@code rowsPerWindow} rows are kept.
 *
 * <p>The lanes of a run share one instance per node: {@link #reserve} is the cheap check on the
 * hot path (one volatile read when nothing is due), {@link #add} stores what the caller encoded.
 */
public final class RowSamples {

    /** One sampled row: its sequence number (increasing per node), when it was taken, its JSON. */
    public record Row(long seq, long atMillis, String json) {}

    /** Rows taken at once, so that a window holds several points of the stream. */
    private static final int ROWS_PER_TAKE = 3;

    private final int rowsPerWindow;
    private final long windowNanos;
    private final long spacingNanos;
    private final ArrayDeque<Row> kept = new ArrayDeque<>();
    /** Nothing is due before this time: the hot path reads only this. */
    private volatile long nextTakeNanos;

    private long windowStartNanos;
    private boolean started;
    private int takenInWindow;
    private long taken;
    private long seq;

    /** {@code rowsPerWindow} 0 disables sampling. */
    public RowSamples(int rowsPerWindow, long windowNanos) {
        this.rowsPerWindow = rowsPerWindow;
        this.windowNanos = windowNanos;
        int takes = Math.max(1, (rowsPerWindow + ROWS_PER_TAKE - 1) / ROWS_PER_TAKE);
        this.spacingNanos = windowNanos / takes;
        this.nextTakeNanos = rowsPerWindow == 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }

    public int rowsPerWindow() {
        return rowsPerWindow;
    }

    /**
     * How many rows the caller may take now (0: none). A positive answer is a promise kept by
     * counting them against the window at once, so lanes asking together never exceed the cap.
     */
    public int reserve(long nowNanos) {
        if (nowNanos < nextTakeNanos) {
            return 0;
        }
        synchronized (this) {
            if (nowNanos < nextTakeNanos) {
                return 0;
            }
            if (!started || nowNanos - windowStartNanos >= windowNanos) {
                // A new window starts at a multiple of the window after the first one.
                windowStartNanos = started
                        ? windowStartNanos + (nowNanos - windowStartNanos) / windowNanos * windowNanos
                        : nowNanos;
                started = true;
                takenInWindow = 0;
            }
            int rows = Math.min(ROWS_PER_TAKE, rowsPerWindow - takenInWindow);
            takenInWindow += rows;
            taken += rows;
            nextTakeNanos = takenInWindow >= rowsPerWindow
                    ? windowStartNanos + windowNanos
                    : Math.min(nowNanos + spacingNanos, windowStartNanos + windowNanos);
            return rows;
        }
    }

    /** Stores rows the caller took after {@link #reserve} (fewer if the batch was smaller). */
    public synchronized void add(List<String> rows, long atMillis) {
        for (String json : rows) {
            kept.addLast(new Row(++seq, atMillis, json));
            if (kept.size() > rowsPerWindow) {
                kept.removeFirst();
            }
        }
    }

    /** The kept rows with a sequence number above {@code afterSeq}, oldest first. */
    public synchronized List<Row> since(long afterSeq) {
        List<Row> rows = new ArrayList<>();
        for (Row row : kept) {
            if (row.seq() > afterSeq) {
                rows.add(row);
            }
        }
        return rows;
    }

    /** Rows reserved since the start (the cap's bookkeeping; tests hold it against the windows). */
    public synchronized long reserved() {
        return taken;
    }
}
