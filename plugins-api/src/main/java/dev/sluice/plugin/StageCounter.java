package dev.sluice.plugin;

/**
 * A count a stage keeps of its own work (requests sent, retries), exported with the node's
 * metrics ({@link StageContext#counter}). Thread-safe: a stage's worker threads may add to it.
 */
@FunctionalInterface
public interface StageCounter {

    /** Adds {@code n} (not negative). */
    void add(long n);

    default void increment() {
        add(1);
    }
}
