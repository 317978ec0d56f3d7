package dev.sluice.plugin;

import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/** A transform of batches from one or more inputs. */
public interface Transform extends AutoCloseable {

    /**
     * Opens the transform for inputs with the given names and schemas (in input order) and
     * returns the schema of its output.
     */
    Schema open(StageContext context, List<String> inputNames, List<Schema> inputSchemas) throws Exception;

    /** Processes one batch (borrowed) of input {@code input}, emitting what it produces. */
    void process(int input, Batch batch, Emitter out) throws Exception;

    /**
     * All inputs have delivered the barrier: emit anything still held for the epoch, before
     * the runtime forwards the barrier. Default: a stateless transform holds nothing.
     */
    default void onBarrier(Barrier barrier, Emitter out) throws Exception {}

    @Override
    void close() throws Exception;
}
