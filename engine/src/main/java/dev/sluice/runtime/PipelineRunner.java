package dev.sluice.runtime;

import dev.sluice.config.NodeKind;
import dev.sluice.observe.Progress;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Source;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

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
    private long epoch;

    public PipelineRunner(Pipeline pipeline, Progress progress) {
        this.pipeline = pipeline;
        this.progress = progress;
        for (PipelineNode node : pipeline.nodes()) {
            node.emitter = batch -> deliver(node, batch);
        }
    }

    /** Runs until every source ends or {@code stop} is set. */
    public Outcome run(AtomicBoolean stop) {
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
            if (progress != null) {
                progress.tick();
            }
            if (!emitted && !active.isEmpty()) {
                LockSupport.parkNanos(IDLE_PARK_NANOS);
            }
        }
        barrier(true);
        return active.isEmpty() ? Outcome.COMPLETED : Outcome.STOPPED;
    }

    private Source.Poll poll(PipelineNode source) {
        try {
            return source.source().poll(source.emitter);
        } catch (StageFailure e) {
            throw e;
        } catch (Exception e) {
            throw new StageFailure(source.name(), e);
        }
    }

    /**
     * Sends a barrier through every node in topological order; because delivery is
     * synchronous, everything emitted before it has already arrived everywhere.
     */
    public void barrier(boolean last) {
        Barrier barrier = new Barrier(++epoch, last);
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
    }

    /** Hands {@code batch} (owned by the runtime from here) to every downstream node, then frees it. */
    private void deliver(PipelineNode from, Batch batch) {
        try {
            long rows = batch.rowCount();
            from.stats.addOut(rows);
            for (PipelineNode.Edge edge : from.downstream) {
                PipelineNode to = edge.to();
                to.stats.addIn(rows);
                try {
                    if (to.kind() == NodeKind.SINK) {
                        to.sink().write(batch);
                    } else {
                        to.transform().process(edge.input(), batch, to.emitter);
                    }
                } catch (StageFailure e) {
                    throw e;
                } catch (Exception e) {
                    throw new StageFailure(to.name(), e);
                }
            }
        } finally {
            batch.close();
        }
    }
}
