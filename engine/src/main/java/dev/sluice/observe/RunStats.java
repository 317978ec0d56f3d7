package dev.sluice.observe;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The counters of a pipeline run: per node, and the totals the progress line shows. */
public final class RunStats {

    private final Map<String, NodeStats> nodes = new LinkedHashMap<>();
    private final List<String> sources;
    private final List<String> sinks;
    private final long startNanos = System.nanoTime();
    private final long startMillis = System.currentTimeMillis();
    /** When the pipeline was open (stages planned and opened, state read); 0 before. */
    private volatile long openedNanos;
    /** When the run ended (every lane returned); 0 while it runs. */
    private volatile long finishedNanos;

    private final CheckpointStats checkpoints = new CheckpointStats();
    /** Dynamic tables by name. */
    private final Map<String, TableSize> tables = new java.util.concurrent.ConcurrentSkipListMap<>();

    private volatile long firstRecordMillis;

    /**
     * Counters for the nodes {@code allNodes}; each node samples up to {@code sampleRows} rows
     * per {@code sampleWindowNanos} of its output for the inspector (0: none).
     */
    public RunStats(
            List<String> allNodes, List<String> sources, List<String> sinks, int sampleRows, long sampleWindowNanos) {
        for (String n : allNodes) {
            nodes.put(n, new NodeStats(n, new RowSamples(sampleRows, sampleWindowNanos)));
        }
        this.sources = List.copyOf(sources);
        this.sinks = List.copyOf(sinks);
    }

    public NodeStats node(String name) {
        NodeStats s = nodes.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no node " + name);
        }
        return s;
    }

    public Collection<NodeStats> nodes() {
        return nodes.values();
    }

    /** The sinks' counters, in file order. */
    public List<NodeStats> sinkNodes() {
        return sinks.stream().map(this::node).toList();
    }

    /** The highest p99 event-to-sink latency of the sinks over their windows, in ms; -1 if none yet. */
    public long sinkLatencyP99Millis() {
        long worst = -1;
        for (NodeStats sink : sinkNodes()) {
            RecentValues.Snapshot latency = sink.latency().snapshot();
            if (latency.count() > 0) {
                worst = Math.max(worst, latency.p99());
            }
        }
        return worst;
    }

    /** Rows emitted by all sources. */
    public long recordsIn() {
        return sources.stream().mapToLong(n -> node(n).rowsOut()).sum();
    }

    /** Rows written by all sinks. */
    public long recordsOut() {
        return sinks.stream().mapToLong(n -> node(n).rowsIn()).sum();
    }

    /** Notes that the pipeline is open and about to run (kept once). */
    public void opened() {
        if (openedNanos == 0) {
            openedNanos = System.nanoTime();
        }
    }

    /** Seconds from these counters' creation to {@link #opened}: planning and opening; -1 before. */
    public double openSeconds() {
        long opened = openedNanos;
        return opened == 0 ? -1 : (opened - startNanos) / 1e9;
    }

    /** Milliseconds from JVM start to these counters' creation: the JVM's start, the CLI, the config. */
    public long createdAfterJvmStartMillis() {
        return startMillis
                - java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
    }

    /** Notes the wall-clock time of the first record a source emitted (kept once). */
    public void firstRecord() {
        if (firstRecordMillis == 0) {
            firstRecordMillis = System.currentTimeMillis();
        }
    }

    /** Milliseconds from JVM start to the first emitted record, or -1 if none yet. */
    public long firstRecordAfterJvmStartMillis() {
        long first = firstRecordMillis;
        return first == 0
                ? -1
                : first
                        - java.lang.management.ManagementFactory.getRuntimeMXBean()
                                .getStartTime();
    }

    /** The size of dynamic table {@code name}, made on first use. */
    public TableSize table(String name) {
        return tables.computeIfAbsent(name, TableSize::new);
    }

    /** Every dynamic table's size, by name. */
    public Collection<TableSize> tables() {
        return tables.values();
    }

    public CheckpointStats checkpoints() {
        return checkpoints;
    }

    public long rejected() {
        return nodes.values().stream().mapToLong(NodeStats::rejected).sum();
    }

    /**
     * Marks the end of the run (every lane returned: the last batch delivered, the final
     * checkpoint taken). {@link #elapsedSeconds} stops there, so the summary, its JSON for the
     * benchmarks and the service's status do not count their own printing and look-ups (the first
     * use of {@code Formatter} and the management beans, a few ms).
     */
    public void finished() {
        if (finishedNanos == 0) {
            finishedNanos = System.nanoTime();
        }
    }

    /** Seconds from these counters' creation (planning the pipeline) to the run's end, or to now while it runs. */
    public double elapsedSeconds() {
        long end = finishedNanos;
        return ((end == 0 ? System.nanoTime() : end) - startNanos) / 1e9;
    }
}
