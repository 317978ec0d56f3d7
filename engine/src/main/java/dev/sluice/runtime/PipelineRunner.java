package dev.sluice.runtime;

import ch.qos.logback.classic.Level;
import dev.sluice.observe.Logs;
import dev.sluice.observe.Progress;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.CheckpointTimeoutException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Source;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.MDC;

/**
 * Drives an assembled pipeline on the calling thread (one lane): polls the sources round-robin
 * and pushes each batch depth-first through the graph, so a batch has reached every sink
 * before the next is polled. Backpressure is therefore built in, and a barrier injected
 * between two polls follows exactly the batches before it.
 */
public final class PipelineRunner {

    /** How a run ended. */
    public enum Outcome {
        /** Every bounded source ended and all sinks acknowledged the final barrier. */
        COMPLETED,
        /** A stop was requested (Ctrl-C, SIGTERM); the final barrier was still taken. */
        STOPPED
    }

    private static final long IDLE_PARK_NANOS = 1_000_000;

    private final Pipeline pipeline;
    private final Progress progress;
    private final long intervalNanos;
    private final long timeoutNanos;
    private long epoch;
    private long nextCheckpointNanos;
    private boolean checkpointing;
    /**
     * The source time (epoch ms) of the source batch being delivered: delivery is depth-first, so
     * every batch a transform emits meanwhile stems from it, and sinks measure latency from it.
     */
    private long sourceTimeMillis;
    /** Nanoseconds the stage call in progress spent delivering downstream (not its own work). */
    private long nestedNanos;
    /** Takes a few rows of the nodes' batches for the inspector. */
    private final RowSampler sampler;

    public PipelineRunner(Pipeline pipeline, Progress progress) {
        this.pipeline = pipeline;
        this.progress = progress;
        this.intervalNanos = pipeline.checkpointSettings().interval().toNanos();
        this.timeoutNanos = pipeline.checkpointSettings().timeout().toNanos();
        this.nextCheckpointNanos = System.nanoTime() + intervalNanos;
        this.sampler = new RowSampler(pipeline.inspectSettings().maskColumns(), pipeline.allocator());
        for (PipelineNode node : pipeline.nodes()) {
            node.emitter = node.kind() == NodeKind.SOURCE ? new SourceEmitter(node) : batch -> deliver(node, batch);
            node.context.onCheckpointRequest(() -> checkpoint(false));
        }
    }

    /** Runs until every source ends or {@code stop} is set. */
    public Outcome run(AtomicBoolean stop) {
        // Log lines of the lane's thread (connectors' too) name the pipeline.
        MDC.put(Logs.PIPELINE, pipeline.name());
        try {
            pipeline.start(); // a no-op when the caller started it to report failures as configuration errors
            return drive(stop);
        } finally {
            // Stages closing later (a consumer leaving its group) must not start a checkpoint
            // through stages that are already closed.
            for (PipelineNode node : pipeline.nodes()) {
                node.context.onCheckpointRequest(() -> {});
            }
            MDC.remove(Logs.PIPELINE);
        }
    }

    private Outcome drive(AtomicBoolean stop) {
        List<PipelineNode> active = new ArrayList<>();
        for (PipelineNode node : pipeline.nodes()) {
            if (node.kind() == NodeKind.SOURCE) {
                active.add(node);
            }
        }
        while (!active.isEmpty() && !stop.get()) {
            boolean emitted = false;
            for (int i = 0; i < active.size(); i++) {
                PipelineNode source = active.get(i);
                Source.Poll poll = poll(source);
                if (poll == Source.Poll.END) {
                    active.remove(i--);
                } else if (poll == Source.Poll.EMITTED) {
                    emitted = true;
                }
            }
            if (System.nanoTime() >= nextCheckpointNanos) {
                checkpoint(false);
            }
            if (progress != null) {
                progress.tick();
            }
            if (!emitted && !active.isEmpty()) {
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        }
        checkpoint(true);
        return active.isEmpty() ? Outcome.COMPLETED : Outcome.STOPPED;
    }

    /**
     * Takes a checkpoint now: a barrier through every node (sinks make everything before it
     * durable), then the sources' positions go to the state DB and are committed. Called on
     * the lane only (the interval, a rebalance, the end); a request during a checkpoint is a
     * no-op, so only one epoch is ever in flight. An epoch whose sinks miss the timeout is
     * given up — counted, logged, not committed — and the run goes on: the next epoch covers
     * the same records. Any other failure ends the run (a restart resumes from the last
     * finalized epoch).
     */
    public void checkpoint(boolean last) {
        if (checkpointing) {
            return;
        }
        checkpointing = true;
        pipeline.stats().checkpoints().started();
        long start = System.nanoTime();
        try {
            long current = barrier(last, start + timeoutNanos);
            finalizeEpoch(current);
            pipeline.stats().checkpoints().completed(current, (System.nanoTime() - start) / 1_000_000);
        } catch (StageFailure e) {
            if (e.getCause() instanceof CheckpointTimeoutException timeout && !last) {
                pipeline.stats().checkpoints().recordTimeout();
                Logs.log(
                        Level.WARN,
                        pipeline.name(),
                        e.node(),
                        String.format(
                                java.util.Locale.ROOT,
                                "checkpoint %d timed out after %d ms in node '%s' (%s); "
                                        + "not committed, the next checkpoint covers it",
                                epoch,
                                (System.nanoTime() - start) / 1_000_000,
                                e.node(),
                                timeout.getMessage()));
                return;
            }
            pipeline.stats().checkpoints().recordFailure();
            throw e;
        } catch (RuntimeException e) {
            pipeline.stats().checkpoints().recordFailure();
            throw e;
        } finally {
            checkpointing = false;
            nextCheckpointNanos = System.nanoTime() + intervalNanos;
        }
    }

    /**
     * Every sink acknowledged {@code epoch}: persist the positions (the sources', and what sinks
     * and dead letters made durable), then let sources commit.
     */
    private void finalizeEpoch(long epoch) {
        Map<String, Map<String, String>> positions = new java.util.LinkedHashMap<>();
        for (PipelineNode node : pipeline.nodes()) {
            if (node.kind() == NodeKind.SOURCE) {
                Map<String, String> reached = node.source().positions(epoch);
                if (!reached.isEmpty() && !node.type.positionsResumeARun()) {
                    reached = new java.util.HashMap<>(reached);
                    reached.put(PositionStore.FOLLOWS, "{}");
                }
                positions.put(node.name(), reached);
            } else if (node.kind() == NodeKind.SINK) {
                Map<String, String> durable = node.sink().positions(epoch);
                if (!durable.isEmpty()) {
                    positions.put(node.sinkStateKey, durable);
                }
            }
            DeadLetterFile deadLetter = node.context.deadLetter();
            if (deadLetter != null && !deadLetter.positions().isEmpty()) {
                positions.put(deadLetter.stateKey(), deadLetter.positions());
            }
        }
        Map<String, Map<String, String>> tables = pipeline.tables().checkpoint(pipeline.allocator());
        positions.putAll(tables);
        pipeline.positions().save(epoch, positions);
        pipeline.tables().saved(tables);
        for (PipelineNode node : pipeline.nodes()) {
            if (node.kind() == NodeKind.SOURCE || node.kind() == NodeKind.SINK) {
                try {
                    if (node.kind() == NodeKind.SOURCE) {
                        node.source().onCheckpointComplete(epoch);
                    } else {
                        node.sink().onCheckpointComplete(epoch);
                    }
                } catch (Exception e) {
                    throw new StageFailure(node.name(), e);
                }
            }
        }
    }

    private Source.Poll poll(PipelineNode source) {
        long outerNested = nestedNanos;
        nestedNanos = 0;
        long start = System.nanoTime();
        try {
            return source.source().poll(source.emitter);
        } catch (StageFailure e) {
            throw e;
        } catch (Exception e) {
            throw new StageFailure(source.name(), e);
        } finally {
            charge(source, start, outerNested);
        }
    }

    /**
     * Charges a stage call that began at {@code startNanos} with its own time. Calls nest (a
     * source's or transform's emits deliver downstream inside its call), so what the nested calls
     * took ({@link #nestedNanos}) is not its own; the whole call is nested time of the caller,
     * whose count was {@code outerNested} when this call began.
     */
    private void charge(PipelineNode node, long startNanos, long outerNested) {
        long total = System.nanoTime() - startNanos;
        node.stats.addProcessingNanos(total - nestedNanos);
        node.stats.addDownstreamNanos(nestedNanos);
        nestedNanos = outerNested + total;
    }

    /**
     * Sends a barrier through every node in topological order; because delivery is
     * synchronous, everything emitted before it has already arrived everywhere.
     */
    private long barrier(boolean last, long deadlineNanos) {
        Barrier barrier = new Barrier(++epoch, last, deadlineNanos);
        sourceTimeMillis = System.currentTimeMillis(); // what transforms flush now was held until now
        for (PipelineNode node : pipeline.nodes()) {
            try {
                switch (node.kind()) {
                    case SOURCE -> node.source().onBarrier(barrier);
                    case TRANSFORM -> node.transform().onBarrier(barrier, node.emitter);
                    case SINK -> node.sink().onBarrier(barrier);
                }
                if (node.context.deadLetter() != null) {
                    node.context.deadLetter().flush();
                }
            } catch (StageFailure e) {
                throw e;
            } catch (IOException e) {
                throw new StageFailure(node.name(), e);
            } catch (Exception e) {
                throw new StageFailure(node.name(), e);
            }
        }
        return barrier.epoch();
    }

    /** A source's emitter: notes the batch's source time (now, unless the source knows better), then delivers. */
    private final class SourceEmitter implements dev.sluice.plugin.Emitter {
        private final PipelineNode source;

        SourceEmitter(PipelineNode source) {
            this.source = source;
        }

        @Override
        public void emit(Batch batch) {
            emit(batch, System.currentTimeMillis());
        }

        @Override
        public void emit(Batch batch, long sourceTime) {
            sourceTimeMillis = sourceTime;
            deliver(source, batch);
        }
    }

    /** Hands {@code batch} (owned by the runtime from here) to every downstream node, then frees it. */
    private void deliver(PipelineNode from, Batch batch) {
        try {
            long rows = batch.rowCount();
            if (from.kind() == NodeKind.SOURCE && rows > 0) {
                pipeline.stats().firstRecord();
            }
            from.stats.addOut(rows);
            sampler.offer(from.stats.samples(), batch, rows);
            // Tables first: the node's own downstream already sees the changes it carries.
            for (DynamicTables.Table table : from.tableFeeds) {
                try {
                    table.apply(batch, pipeline.allocator());
                } catch (RuntimeException e) {
                    throw new StageFailure(from.name(), e);
                }
            }
            for (PipelineNode.Edge edge : from.downstream) {
                PipelineNode to = edge.to();
                to.stats.addIn(rows);
                long outerNested = nestedNanos;
                nestedNanos = 0;
                long start = System.nanoTime();
                try {
                    if (to.kind() == NodeKind.SINK) {
                        to.sink().write(batch);
                        to.stats.addSinkBatch(rows);
                        sampler.offer(to.stats.samples(), batch, rows);
                        if (rows > 0) {
                            to.stats.recordLatency(System.currentTimeMillis() - sourceTimeMillis);
                        }
                    } else {
                        to.transform().process(edge.input(), batch, to.emitter);
                    }
                } catch (StageFailure e) {
                    throw e;
                } catch (Exception e) {
                    throw new StageFailure(to.name(), e);
                } finally {
                    charge(to, start, outerNested);
                }
            }
        } finally {
            batch.close();
        }
    }
}
