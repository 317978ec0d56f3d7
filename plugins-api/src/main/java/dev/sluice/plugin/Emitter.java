package dev.sluice.plugin;

/** Where a stage sends its output. The runtime takes ownership of every emitted batch. */
@FunctionalInterface
public interface Emitter {
    void emit(Batch batch);
}
