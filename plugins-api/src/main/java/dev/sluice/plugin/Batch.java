package dev.sluice.plugin;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A record batch. Built-in stages keep batches in native memory between native stages; Java
 * code that needs the columns imports them with {@link #toVectors}.
 */
public interface Batch extends AutoCloseable {

    /** Number of rows. */
    long rowCount();

    /**
     * Imports the columns into Arrow Java (zero-copy: the vectors share the native buffers).
     * The caller closes the returned root; the batch stays valid.
     */
    VectorSchemaRoot toVectors(BufferAllocator allocator);

    /** Frees the batch. Idempotent. */
    @Override
    void close();
}
