package dev.sluice.observe;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * One run's counters as Micrometer meters, tagged with the pipeline (and node): rows in and out,
 * batches, rejected and skipped rows per node; checkpoints completed, failed and timed out, the
 * last epoch and its duration; each source partition's lag. The meters read the run's
 * {@link RunStats} when scraped, so they cost nothing on the hot path. {@link #close} removes
 * them (the next run of the pipeline registers its own).
 */
public final class PipelineMetrics implements AutoCloseable {

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final MultiGauge lag;
    private final String pipeline;
    private final Supplier<Map<String, Map<String, Long>>> lagByNode;

    private PipelineMetrics(
            MeterRegistry registry, String pipeline, Supplier<Map<String, Map<String, Long>>> lagByNode) {
        this.registry = registry;
        this.pipeline = pipeline;
        this.lagByNode = lagByNode;
        this.lag = MultiGauge.builder("sluice.source.lag")
                .description("Records of the partition not read yet, as the source last saw it")
                .baseUnit("records")
                .register(registry);
    }

    /** Registers the meters of one run of {@code pipeline}; {@code lag} is read at each {@link #refresh}. */
    public static PipelineMetrics register(
            MeterRegistry registry, String pipeline, RunStats stats, Supplier<Map<String, Map<String, Long>>> lag) {
        PipelineMetrics metrics = new PipelineMetrics(registry, pipeline, lag);
        for (NodeStats node : stats.nodes()) {
            Tags tags = Tags.of("pipeline", pipeline, "node", node.node());
            metrics.counter("sluice.node.rows.in", "Rows that reached the node", tags, node, NodeStats::rowsIn);
            metrics.counter("sluice.node.rows.out", "Rows the node emitted", tags, node, NodeStats::rowsOut);
            metrics.counter("sluice.node.batches.out", "Batches the node emitted", tags, node, NodeStats::batchesOut);
            metrics.counter(
                    "sluice.node.rejected",
                    "Rows the node dead-lettered or failed on",
                    tags,
                    node,
                    NodeStats::rejected);
            metrics.counter(
                    "sluice.node.skipped", "Rows the node skipped (on_error: skip)", tags, node, NodeStats::skipped);
            metrics.meters.add(FunctionCounter.builder("sluice.node.processing", node, n -> n.processingNanos() / 1e9)
                    .description("Seconds spent in the node's own calls, without the downstream nodes they feed")
                    .baseUnit("seconds")
                    .tags(tags)
                    .register(registry));
            metrics.meters.add(FunctionCounter.builder("sluice.node.downstream", node, n -> n.downstreamNanos() / 1e9)
                    .description("Seconds the node's calls spent waiting on the nodes downstream (backpressure)")
                    .baseUnit("seconds")
                    .tags(tags)
                    .register(registry));
            metrics.window(
                    "sluice.node.batch.rows", "Rows per batch over the last 30-60 s", "rows", tags, node.batchRows());
            for (NodeStats.StageCount count : node.stageCounts()) {
                Tags own = tags;
                for (Map.Entry<String, String> tag : count.tags().entrySet()) {
                    own = own.and(tag.getKey(), tag.getValue());
                }
                metrics.counter("sluice." + count.name(), count.description(), own, count.count(), LongAdder::sum);
            }
        }
        for (NodeStats sink : stats.sinkNodes()) {
            // Event-to-sink latency over the last 30-60 s: from the batch's oldest record (Kafka
            // record time, else when the source emitted it) to the sink taking it.
            Tags tags = Tags.of("pipeline", pipeline, "node", sink.node());
            metrics.latency(tags.and("quantile", "0.5"), sink, RecentValues.Snapshot::p50);
            metrics.latency(tags.and("quantile", "0.99"), sink, RecentValues.Snapshot::p99);
            metrics.latency(tags.and("quantile", "1.0"), sink, RecentValues.Snapshot::max);
        }
        for (TableSize table : stats.tables()) {
            Tags tableTags = Tags.of("pipeline", pipeline, "table", table.table());
            metrics.meters.add(Gauge.builder("sluice.table.rows", table, TableSize::rows)
                    .description("Live rows of the dynamic table")
                    .baseUnit("rows")
                    .tags(tableTags)
                    .register(registry));
            metrics.meters.add(Gauge.builder("sluice.table.size", table, TableSize::bytes)
                    .description("Bytes of the dynamic table's Arrow buffers (what max_bytes limits)")
                    .baseUnit("bytes")
                    .tags(tableTags)
                    .register(registry));
            // Lookup tables (backend: postgres); 0 for the others. Updated at each checkpoint.
            metrics.counter(
                    "sluice.table.lookups",
                    "Keys a lookup table was asked for: held (hit, present or known absent) or loaded (miss)",
                    tableTags.and("result", "hit"),
                    table,
                    TableSize::hits);
            metrics.counter(
                    "sluice.table.lookups",
                    "Keys a lookup table was asked for: held (hit, present or known absent) or loaded (miss)",
                    tableTags.and("result", "miss"),
                    table,
                    TableSize::misses);
            metrics.counter(
                    "sluice.table.loads",
                    "Round trips of a lookup table to its backend (one per batch with a miss)",
                    tableTags,
                    table,
                    TableSize::loads);
        }
        Tags tags = Tags.of("pipeline", pipeline);
        CheckpointStats checkpoints = stats.checkpoints();
        metrics.counter(
                "sluice.checkpoints.started",
                "Epochs begun (a barrier sent through a lane)",
                tags,
                checkpoints,
                CheckpointStats::startedCount);
        metrics.counter(
                "sluice.checkpoints.completed", "Epochs finalized", tags, checkpoints, CheckpointStats::completed);
        metrics.counter(
                "sluice.checkpoints.failed", "Epochs that failed the run", tags, checkpoints, CheckpointStats::failed);
        metrics.counter(
                "sluice.checkpoints.timed.out",
                "Epochs given up on the timeout",
                tags,
                checkpoints,
                CheckpointStats::timedOut);
        metrics.meters.add(Gauge.builder("sluice.checkpoint.last.epoch", checkpoints, CheckpointStats::lastEpoch)
                .description("The last finalized epoch")
                .tags(tags)
                .register(registry));
        metrics.meters.add(TimeGauge.builder(
                        "sluice.checkpoint.last.duration",
                        checkpoints,
                        TimeUnit.MILLISECONDS,
                        CheckpointStats::lastMillis)
                .description("How long the last finalized epoch took, barrier to commit")
                .tags(tags)
                .register(registry));
        metrics.refresh();
        return metrics;
    }

    private <T> void counter(
            String name, String description, Tags tags, T source, java.util.function.ToDoubleFunction<T> value) {
        meters.add(FunctionCounter.builder(name, source, value)
                .description(description)
                .tags(tags)
                .register(registry));
    }

    private void latency(Tags tags, NodeStats sink, java.util.function.ToLongFunction<RecentValues.Snapshot> value) {
        meters.add(TimeGauge.builder("sluice.sink.latency", sink, TimeUnit.MILLISECONDS, s ->
                        (double) value.applyAsLong(s.latency().snapshot()))
                .description("Event-to-sink latency of the last 30-60 s (0 when no batch arrived in it)")
                .tags(tags)
                .register(registry));
    }

    private void window(String name, String description, String unit, Tags tags, RecentValues values) {
        for (var quantile : List.<Map.Entry<String, java.util.function.ToLongFunction<RecentValues.Snapshot>>>of(
                Map.entry("0.5", RecentValues.Snapshot::p50),
                Map.entry("0.99", RecentValues.Snapshot::p99),
                Map.entry("1.0", RecentValues.Snapshot::max))) {
            meters.add(Gauge.builder(
                            name, values, v -> (double) quantile.getValue().applyAsLong(v.snapshot()))
                    .description(description + " (0 when none)")
                    .baseUnit(unit)
                    .tags(tags.and("quantile", quantile.getKey()))
                    .register(registry));
        }
    }

    /** Reads the sources' lag into the lag gauge (partitions come and go with rebalances). */
    public void refresh() {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        lagByNode
                .get()
                .forEach((node, partitions) -> partitions.forEach((partition, records) -> rows.add(MultiGauge.Row.of(
                        Tags.of("pipeline", pipeline, "node", node, "partition", partition), records))));
        lag.register(rows, true);
    }

    @Override
    public void close() {
        lag.register(List.of(), true);
        meters.forEach(registry::remove);
        meters.clear();
    }
}
