package dev.sluice.runtime;

import java.util.Map;

/**
 * Where finalized source positions live between runs (the state DB). The runtime writes the
 * positions of every finalized epoch and hands a node its saved positions when it opens.
 */
public interface PositionStore extends AutoCloseable {

    /** The positions node {@code node} reported at the last finalized epoch (key → JSON). */
    Map<String, String> load(String node);

    /** Saves, durably and atomically, the positions of all sources at {@code epoch}. */
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
