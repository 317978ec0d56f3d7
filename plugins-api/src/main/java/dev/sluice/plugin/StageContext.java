package dev.sluice.plugin;

import java.nio.file.Path;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/** What the runtime gives a stage when it opens. */
public interface StageContext {

    /** The stage's node name in the pipeline file. */
    String nodeName();

    /** The upstream nodes this node reads, in order (empty for a source). */
    default java.util.List<String> inputNames() {
        return java.util.List.of();
    }

    /** The pipeline's name. */
    String pipelineName();

    /** The directory of the pipeline file; relative paths in its config resolve against it. */
    Path pipelineDirectory();

    /** The allocator for Arrow Java memory of this stage; the runtime checks it is empty at close. */
    BufferAllocator allocator();

    /**
     * Makes a batch of the columns of {@code root} for {@link Emitter#emit}, zero-copy: the
     * batch shares the root's buffers. Do not write into those buffers afterwards; call
     * {@code root.allocateNew()} (or {@code clear()}) before refilling the root.
     */
    Batch batchOf(VectorSchemaRoot root);

    /**
     * The positions this node reported for the last finalized checkpoint of a previous run
     * (key → JSON, as returned by {@link Source#positions} or {@link Sink#positions}); empty on
     * a first run. A sink gets them only when the run resumes (some source has positions).
     */
    default java.util.Map<String, String> restoredPositions() {
        return java.util.Map.of();
    }

    /** The pipeline's delivery guarantee ({@code delivery:}). Default: at-least-once. */
    default Delivery delivery() {
        return Delivery.AT_LEAST_ONCE;
    }

    /** Time between two checkpoints of the pipeline ({@code checkpoint.interval}). */
    default java.time.Duration checkpointInterval() {
        return java.time.Duration.ofSeconds(10);
    }

    /**
     * An object shared by the stages of this lane (one copy of the pipeline on one thread): the
     * first stage that asks for {@code key} creates it with {@code create}, later ones get the
     * same instance, and the runtime closes it after every stage of the lane has closed. Stages of
     * one connector coordinate through it (the Kafka source and sinks of a lane share one
     * transaction). Creating it must have no effect outside the process: validation opens stages
     * too.
     *
     * @throws ClassCastException if another stage made {@code key} an object of another type
     */
    default <T extends AutoCloseable> T laneShared(String key, Class<T> type, java.util.function.Supplier<T> create) {
        throw new UnsupportedOperationException("this stage context shares no objects between stages");
    }

    /**
     * Asks the runtime for a checkpoint now, taken before this call returns when called on
     * the stage's lane (e.g. from a Kafka rebalance callback, before partitions are released).
     */
    default void requestCheckpoint() {}

    /**
     * Runs {@code check} on its own thread while the rest of the pipeline opens, for checks
     * that wait on the network (does the topic exist, may this principal read it). The pipeline
     * starts only after every check has passed; an exception from one fails the start exactly
     * as if {@code open} had thrown it. Default: runs the check right away.
     */
    default void checkWhileOpening(Runnable check) {
        check.run();
    }

    /**
     * Records a row that could not be processed, with why. Depending on the node's
     * {@code on_error} it is written to the dead letter, skipped or fails the run.
     *
     * @param position where the row came from (a line number, an offset)
     */
    void reject(long position, byte[] record, String error);

    /**
     * A counter of this node's own, exported as {@code sluice_<name>_total} (dots become
     * underscores) with the pipeline's and the node's tags plus {@code tags}, e.g.
     * {@code counter("http.requests", "...", Map.of("result", "ok"))}. The name has two or more
     * dot-separated parts of lowercase letters and digits, the first naming the stage's kind of
     * work, not one of Sluice's own ({@code node}, {@code checkpoints}, {@code source},
     * {@code sink}, {@code table}); the same name and tags give the same counter, also in other
     * lanes, and a name keeps one set of tag keys everywhere (Prometheus requires it). Ask for counters in {@code open}: a run's metrics are registered once its stages are
     * open. Default: a counter that counts nowhere.
     *
     * @throws IllegalArgumentException if the name is not of that form
     */
    default StageCounter counter(String name, String description, java.util.Map<String, String> tags) {
        return n -> {};
    }

    /**
     * Counts input that was passed over on purpose and is no record (a blank line of a
     * JSON-lines or CSV file), so that the run summary accounts for every line.
     *
     * @param position where it was (a line number)
     */
    default void skipped(long position) {}
}
