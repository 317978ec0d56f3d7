package dev.sluice.plugin;

/** Where a stage sends its output. The runtime takes ownership of every emitted batch. */
@FunctionalInterface
public interface Emitter {
    void emit(Batch batch);

    /**
     * Emits a batch whose oldest record happened at {@code sourceTimeMillis} (epoch milliseconds,
     * e.g. its Kafka record timestamp): sinks measure event-to-sink latency from it. Sources that
     * know their records' time call this; {@link #emit(Batch)} means "now" (ingestion time).
     */
    default void emit(Batch batch, long sourceTimeMillis) {
        emit(batch);
    }
}
