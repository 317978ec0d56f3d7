package dev.sluice.observe;

/**
 * The size of one dynamic table as last seen by the lane that fills it: live rows and the bytes
 * of its Arrow buffers. Written by that lane after each change, read by metrics from any thread.
 */
public final class TableSize {

    private final String table;
    private volatile long rows;
    private volatile long bytes;

    TableSize(String table) {
        this.table = table;
    }

    public String table() {
        return table;
    }

    public long rows() {
        return rows;
    }

    public long bytes() {
        return bytes;
    }

    public void set(long rows, long bytes) {
        this.rows = rows;
        this.bytes = bytes;
    }
}
