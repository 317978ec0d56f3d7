package dev.sluice.plugin;

import org.apache.arrow.vector.types.pojo.Schema;

/** The end of a pipeline: writes batches somewhere. */
public interface Sink extends AutoCloseable {

    /**
     * Prepares the sink for batches of {@code schema}: checks its settings against the schema,
     * builds encoders, runs read-only checks (does the topic exist). It must leave the
     * destination untouched — no file created or truncated, no connection that writes —
     * because {@code sluice validate} stops here; {@link #start} opens the destination.
     */
    void open(StageContext context, Schema schema) throws Exception;

    /**
     * Opens the destination (creates or replaces the file, starts the producer). Called once,
     * only when the pipeline is about to run, after every stage has opened and every check
     * passed; never by validation. Default: nothing to open.
     */
    default void start() throws Exception {}

    /** Writes one batch (borrowed). May buffer. */
    void write(Batch batch) throws Exception;

    /**
     * Makes everything written before the barrier durable, then returns; returning
     * acknowledges the epoch. Writes must be idempotent under replay of the epoch.
     */
    void onBarrier(Barrier barrier) throws Exception;

    /**
     * What this sink had made durable at the barrier of {@code epoch}, as key → JSON (a file
     * sink's length), saved in the state DB with the sources' positions. A run that resumes
     * from that epoch hands them back through {@link StageContext#restoredPositions()}, so that
     * the sink continues its destination instead of replacing it; a run that starts over (its
     * sources have no positions) gets none. Default: none.
     */
    default java.util.Map<String, String> positions(long epoch) {
        return java.util.Map.of();
    }

    /**
     * Epoch {@code epoch} is finalized: every sink made it durable and the runtime recorded the
     * sources' positions (a transactional sink may commit here). Default: nothing to do.
     */
    default void onCheckpointComplete(long epoch) throws Exception {}

    @Override
    void close() throws Exception;
}
