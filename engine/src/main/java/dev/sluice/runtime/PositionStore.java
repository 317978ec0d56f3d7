package dev.sluice.runtime;

import java.util.Map;

/**
 * Where finalized positions live between runs (the state DB). The runtime writes the positions
 * of every finalized epoch and hands a node its saved positions when it opens. A source's are
 * stored under its node name; other things that checkpoint take a name with a prefix below.
 */
public interface PositionStore extends AutoCloseable {

    /** Prefix of a sink's positions: what it had made durable (a file sink's length). */
    String SINK = "sink:";
    /** Prefix of a dead letter's positions: its length, per node and lane. */
    String DEAD_LETTER = "dead-letter:";
    /**
     * A key among a source's positions marking them as ones that resume a run only beside a
     * source whose positions do (a file source's: {@code StageType.positionsResumeARun}).
     */
    String FOLLOWS = "_follows";

    /** The positions node {@code node} reported at the last finalized epoch (key → JSON). */
    Map<String, String> load(String node);

    /** The sinks ({@code <node>} or {@code <node>.lane<n>}) that have positions saved. */
    default java.util.Set<String> sinksWithPositions() {
        return java.util.Set.of();
    }

    /** Saves, durably and atomically, every position recorded at {@code epoch}. */
    void save(long epoch, Map<String, Map<String, String>> positionsByNode);

    /** Waits until the store can be used (it may open in the background); rethrows why it cannot. */
    default void awaitOpen() {}

    /** The same store for another lane of this run; closing that view leaves this one open. */
    PositionStore forAnotherLane();

    /** A store that keeps nothing: a run without a state directory. */
    PositionStore NONE = new PositionStore() {
        @Override
        public Map<String, String> load(String node) {
            return Map.of();
        }

        @Override
        public void save(long epoch, Map<String, Map<String, String>> positionsByNode) {}

        @Override
        public PositionStore forAnotherLane() {
            return this;
        }

        @Override
        public void close() {}
    };

    @Override
    void close();
}
