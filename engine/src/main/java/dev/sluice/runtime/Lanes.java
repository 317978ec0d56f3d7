package dev.sluice.runtime;

import dev.sluice.config.StageTypes;
import dev.sluice.observe.Progress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The lanes of one run: copies of the pipeline, each on its own thread with its own stages and
 * native plans, sharing the counters and the state DB. Kafka sources of different lanes are
 * consumers in one group, so the group spreads the partitions over the lanes as it would over
 * processes; no lock is taken on the hot path.
 */
public final class Lanes implements AutoCloseable {

    private final List<Pipeline> lanes;

    private Lanes(List<Pipeline> lanes) {
        this.lanes = lanes;
    }

    /** Adds to {@code first} the further lanes its sources' {@code parallelism} asks for. */
    public static Lanes of(Pipeline first, StageTypes types) {
        List<Pipeline> lanes = new ArrayList<>(List.of(first));
        try {
            for (int i = 1; i < first.lanes(); i++) {
                lanes.add(
                        Pipeline.assemble(first.spec(), types, first.positions().forAnotherLane(), first.stats(), i));
            }
        } catch (RuntimeException e) {
            new Lanes(lanes).closeQuietly(e);
            throw e;
        }
        return new Lanes(lanes);
    }

    /** Opens every lane's destinations and connections (see {@link Pipeline#start}). */
    public void start() {
        lanes.forEach(Pipeline::start);
    }

    public int count() {
        return lanes.size();
    }

    /** Every source's lag by partition, over all lanes (they read disjoint partitions). */
    public Map<String, Map<String, Long>> lag() {
        Map<String, Map<String, Long>> lag = new TreeMap<>();
        for (Pipeline lane : lanes) {
            lane.lag()
                    .forEach((node, partitions) ->
                            lag.computeIfAbsent(node, key -> new TreeMap<>()).putAll(partitions));
        }
        return lag;
    }

    /** The dead-letter report of every lane. */
    public List<String> deadLetterReport() {
        return lanes.stream().flatMap(lane -> lane.deadLetterReport().stream()).toList();
    }

    /**
     * Runs every lane until its sources end or {@code stop} is set; the first lane runs on the
     * calling thread and prints the progress. A failure in any lane stops all of them and is
     * rethrown.
     */
    public PipelineRunner.Outcome run(AtomicBoolean stop, Progress progress) {
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 1; i < lanes.size(); i++) {
            Pipeline lane = lanes.get(i);
            threads.add(Thread.ofPlatform().name("sluice-lane-" + i).start(() -> {
                try {
                    new PipelineRunner(lane, null).run(stop);
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                    stop.set(true);
                }
            }));
        }
        PipelineRunner.Outcome outcome;
        try {
            outcome = new PipelineRunner(lanes.get(0), progress).run(stop);
        } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
            stop.set(true);
            outcome = PipelineRunner.Outcome.STOPPED;
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stop.set(true);
            }
        }
        lanes.get(0).stats().finished();
        if (failure.get() != null) {
            throw failure.get();
        }
        return outcome;
    }

    /** Closes the extra lanes, then the first (which owns the state DB). */
    @Override
    public void close() {
        RuntimeException first = null;
        for (int i = lanes.size() - 1; i >= 0; i--) {
            try {
                lanes.get(i).close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private void closeQuietly(RuntimeException cause) {
        for (int i = lanes.size() - 1; i >= 1; i--) {
            try {
                lanes.get(i).close();
            } catch (RuntimeException e) {
                cause.addSuppressed(e);
            }
        }
    }
}
