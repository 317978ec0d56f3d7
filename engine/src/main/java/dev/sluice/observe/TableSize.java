package dev.sluice.observe;

/**
 * The size of one dynamic table as last seen by the lane that fills it: live rows and the bytes
 * of its Arrow buffers, and for a lookup table (a cache of a backend) its hits, misses and loads.
 * Written by that lane after each change (a lookup table's at each checkpoint), read by metrics
 * from any thread.
 */
public final class TableSize {

    private final String table;
    private volatile long rows;
    private volatile long bytes;
    private volatile long hits;
    private volatile long misses;
    private volatile long loads;

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

    /** A lookup table's keys found held (hits) and loaded (misses), and its loader calls, so far. */
    public void lookups(long hits, long misses, long loads) {
        this.hits = hits;
        this.misses = misses;
        this.loads = loads;
    }

    public long hits() {
        return hits;
    }

    public long misses() {
        return misses;
    }

    public long loads() {
        return loads;
    }
}
