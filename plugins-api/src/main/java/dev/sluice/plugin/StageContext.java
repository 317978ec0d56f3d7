package dev.sluice.plugin;

import java.nio.file.Path;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/** What the runtime gives a stage when it opens. */
public interface StageContext {

    /** The stage's node name in the pipeline file. */
    String nodeName();

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
     * Records a row that could not be processed, with why. Depending on the node's
     * {@code on_error} it is written to the dead letter, skipped or fails the run.
     *
     * @param position where the row came from (a line number, an offset)
     */
    void reject(long position, byte[] record, String error);
}
