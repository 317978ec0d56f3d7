package dev.sluice.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.config.PipelineLoader;
import dev.sluice.config.StageTypes;
import dev.sluice.config.TestStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** A sink acknowledges epoch N only after every row emitted before barrier N reached it. */
class CheckpointOrderingTest {

    /** Rows the sink had when each barrier arrived, and what the source had emitted then. */
    private static final List<long[]> AT_BARRIERS = new ArrayList<>();

    private static Pipeline current;

    static final class RecordingSink implements Sink {
        private long rows;

        @Override
        public void open(StageContext context, Schema schema) {}

        @Override
        public void write(Batch batch) {
            rows += batch.rowCount();
        }

        @Override
        public void onBarrier(Barrier barrier) {
            AT_BARRIERS.add(new long[] {
                barrier.epoch(), rows, current.stats().node("bid").rowsOut()
            });
        }

        @Override
        public void close() {}
    }

    /** Remembers the positions saved per epoch, to check they follow the barriers. */
    static final class MemoryPositions implements PositionStore {
        final Map<Long, Map<String, Map<String, String>>> saved = new HashMap<>();

        @Override
        public Map<String, String> load(String node) {
            return Map.of();
        }

        @Override
        public void save(long epoch, Map<String, Map<String, String>> positionsByNode) {
            saved.put(epoch, positionsByNode);
        }

        @Override
        public PositionStore forAnotherLane() {
            return this;
        }

        @Override
        public void close() {}
    }

    @Test
    void everyBarrierFollowsAllRowsBeforeIt() {
        StageTypes types = StageTypes.installed();
        types.register(TestStageType.of(NodeKind.SINK, "recording", new ConfigDef(), config -> new RecordingSink()));
        var spec = PipelineLoader.parse("""
                name: ordering
                checkpoint: {interval: 1ms}
                sources:
                  bid: {type: generator, entity: bid, count: 200000, batch_size: 1000}
                transforms:
                  all: {type: sql, sql: "SELECT auction, price FROM bid"}
                sinks:
                  out: {type: recording, from: all}
                """, Path.of("ordering.yaml"));
        AT_BARRIERS.clear();
        MemoryPositions positions = new MemoryPositions();
        try (Pipeline pipeline = Pipeline.assemble(spec, types, positions)) {
            current = pipeline;
            assertEquals(PipelineRunner.Outcome.COMPLETED, new PipelineRunner(pipeline, null).run(new AtomicBoolean()));
        }
        assertTrue(AT_BARRIERS.size() > 10, "many epochs: " + AT_BARRIERS.size());
        for (long[] at : AT_BARRIERS) {
            assertEquals(at[2], at[1], "epoch " + at[0] + ": the sink had every row emitted before the barrier");
        }
        long[] last = AT_BARRIERS.get(AT_BARRIERS.size() - 1);
        assertEquals(184_000, last[1], "the final barrier follows all 200 000 events' bids");
        assertEquals(AT_BARRIERS.size(), positions.saved.size(), "every epoch was finalized");
    }

    /** Times out epochs 2 and 3, as a sink whose broker is away would. */
    static final class TimingOutSink implements Sink {
        static final List<Long> REMAINING_MILLIS = new ArrayList<>();

        @Override
        public void open(StageContext context, Schema schema) {}

        @Override
        public void write(Batch batch) {}

        @Override
        public void onBarrier(Barrier barrier) {
            REMAINING_MILLIS.add(barrier.remainingNanos() / 1_000_000);
            if (barrier.epoch() == 2 || barrier.epoch() == 3) {
                throw new dev.sluice.plugin.CheckpointTimeoutException("not acknowledged yet");
            }
        }

        @Override
        public void close() {}
    }

    @Test
    void anEpochThatTimesOutIsGivenUpAndTheRunGoesOn() {
        StageTypes types = StageTypes.installed();
        types.register(TestStageType.of(NodeKind.SINK, "timing-out", new ConfigDef(), config -> new TimingOutSink()));
        var spec = PipelineLoader.parse("""
                name: timeouts
                checkpoint: {interval: 1ms, timeout: 5s}
                sources:
                  bid: {type: generator, entity: bid, count: 50000, batch_size: 1000}
                sinks:
                  out: {type: timing-out, from: bid}
                """, Path.of("timeouts.yaml"));
        TimingOutSink.REMAINING_MILLIS.clear();
        MemoryPositions positions = new MemoryPositions();
        try (Pipeline pipeline = Pipeline.assemble(spec, types, positions)) {
            assertEquals(PipelineRunner.Outcome.COMPLETED, new PipelineRunner(pipeline, null).run(new AtomicBoolean()));
            var checkpoints = pipeline.stats().checkpoints();
            assertEquals(2, checkpoints.timedOut());
            assertEquals(0, checkpoints.failed());
            assertEquals(TimingOutSink.REMAINING_MILLIS.size() - 2, checkpoints.completed());
        }
        assertTrue(
                TimingOutSink.REMAINING_MILLIS.size() > 4,
                "epochs after the timeouts ran: " + TimingOutSink.REMAINING_MILLIS);
        for (long remaining : TimingOutSink.REMAINING_MILLIS) {
            assertTrue(remaining > 0 && remaining <= 5_000, "each barrier carries the 5 s deadline: " + remaining);
        }
        assertTrue(
                !positions.saved.containsKey(2L) && !positions.saved.containsKey(3L),
                "timed-out epochs are not finalized");
        assertTrue(
                positions.saved.containsKey(1L) && positions.saved.containsKey(4L),
                "the others are: " + positions.saved.keySet());
    }
}
