package dev.sluice.plugin;

import org.apache.arrow.vector.types.pojo.Schema;

/** The end of a pipeline: writes batches somewhere. */
public interface Sink extends AutoCloseable {

    /** Opens the sink for batches of {@code schema}. */
    void open(StageContext context, Schema schema) throws Exception;

    /** Writes one batch (borrowed). May buffer. */
    void write(Batch batch) throws Exception;

    /**
     * Makes everything written before the barrier durable, then returns; returning
     * acknowledges the epoch. Writes must be idempotent under replay of the epoch.
     */
    void onBarrier(Barrier barrier) throws Exception;

    @Override
    void close() throws Exception;
}
