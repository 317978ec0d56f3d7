package dev.sluice.observe;

import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Counters of one node, readable from any thread (the progress printer, later a metrics endpoint). */
public final class NodeStats {

    private final String node;
    private final LongAdder rowsIn = new LongAdder();
    private final LongAdder rowsOut = new LongAdder();
    private final LongAdder batchesOut = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    /** Sinks: the latency from a batch's source time to its write, in ms (see PipelineRunner). */
    private final RecentValues latency = new RecentValues();
    /** Rows per batch the node emitted (sinks: received). */
    private final RecentValues batchRows = new RecentValues();
    /** Time spent in the node's own calls, without the downstream nodes they deliver to. */
    private final LongAdder processingNanos = new LongAdder();
    /** Time in the node's calls spent delivering downstream: how long downstream held it up. */
    private final LongAdder downstreamNanos = new LongAdder();
    /** A few of the rows the node emitted (sinks: received), for live inspection. */
    private final RowSamples samples;
    /** When the node last emitted (sinks: received) a batch, epoch ms; 0 before the first. */
    private volatile long lastBatchMillis;

    /** A count a stage keeps of its own work, by name and tags (StageContext.counter). */
    public record StageCount(String name, String description, Map<String, String> tags, LongAdder count) {}

    private final Map<String, StageCount> stageCounts = new ConcurrentHashMap<>();

    public NodeStats(String node, RowSamples samples) {
        this.node = node;
        this.samples = samples;
    }

    /** The count of {@code name} with {@code tags}, made at the first ask (every lane gets the same). */
    public LongAdder stageCount(String name, String description, Map<String, String> tags) {
        Map<String, String> sorted = new TreeMap<>(tags);
        return stageCounts
                .computeIfAbsent(
                        name + sorted, key -> new StageCount(name, description, Map.copyOf(sorted), new LongAdder()))
                .count();
    }

    /** The counts the node's stages asked for so far. */
    public Collection<StageCount> stageCounts() {
        return stageCounts.values();
    }

    public RowSamples samples() {
        return samples;
    }

    public String node() {
        return node;
    }

    public void addIn(long rows) {
        rowsIn.add(rows);
    }

    public void addOut(long rows) {
        rowsOut.add(rows);
        batchesOut.increment();
        batchRows.record(rows);
        lastBatchMillis = System.currentTimeMillis();
    }

    /** When the node last emitted (sinks: received) a batch, epoch ms; 0 before the first. */
    public long lastBatchMillis() {
        return lastBatchMillis;
    }

    /** A sink received a batch of {@code rows}: its batch sizes (sinks emit none). */
    public void addSinkBatch(long rows) {
        batchRows.record(rows);
        lastBatchMillis = System.currentTimeMillis();
    }

    public RecentValues batchRows() {
        return batchRows;
    }

    public void addProcessingNanos(long nanos) {
        processingNanos.add(nanos);
    }

    /**
     * Time the node's calls spent handing batches to the nodes downstream of it: delivery is
     * synchronous, so this is the time it was held up by them (its backpressure).
     */
    public void addDownstreamNanos(long nanos) {
        downstreamNanos.add(nanos);
    }

    public long downstreamNanos() {
        return downstreamNanos.sum();
    }

    public long processingNanos() {
        return processingNanos.sum();
    }

    public void addRejected() {
        rejected.increment();
    }

    /** Input passed over on purpose that is no record (a blank line). */
    public void addSkipped() {
        skipped.increment();
    }

    public long skipped() {
        return skipped.sum();
    }

    public long rowsIn() {
        return rowsIn.sum();
    }

    public long rowsOut() {
        return rowsOut.sum();
    }

    public long batchesOut() {
        return batchesOut.sum();
    }

    /** A batch reached this sink {@code millis} after its oldest record happened. */
    public void recordLatency(long millis) {
        latency.record(millis);
    }

    public RecentValues latency() {
        return latency;
    }

    public long rejected() {
        return rejected.sum();
    }
}
