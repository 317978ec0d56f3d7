package dev.sluice.bridge;

import dev.sluice.plugin.Batch;
import java.util.function.Consumer;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/** A record batch held by the core. Passing it between native stages copies nothing. */
public final class NativeBatch extends NativeHandle implements Batch {

    private long rows = -1;

    public NativeBatch(long handle) {
        super("batch", handle);
    }

    /** Wraps a handle, or returns null for 0 (the core's "none"). */
    public static NativeBatch ofNullable(long handle) {
        return handle == 0 ? null : new NativeBatch(handle);
    }

    /**
     * Moves the columns of {@code root} into the core, zero-copy: the core references the same
     * buffers, which stay alive until it releases them. {@code root} stays usable. The C structs
     * are written by {@link DirectExport} (Arrow Java's export for types it does not write).
     */
    public static NativeBatch fromVectors(BufferAllocator allocator, VectorSchemaRoot root) {
        return new NativeBatch(
                DirectExport.exportTo(allocator, root, (array, schema) -> core().batchImport(array, schema)));
    }

    /**
     * Takes a batch that foreign code (a native plugin) wrote into the C struct at
     * {@code arrayAddress} as a struct array of {@code schema}'s columns: the core moves the
     * struct's content out, zero-copy, and calls its {@code release} when the batch is freed.
     * The struct is left released, also when the call fails.
     */
    public static NativeBatch adopt(
            BufferAllocator allocator, long arrayAddress, org.apache.arrow.vector.types.pojo.Schema schema) {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            long schemaAddress = ArrowC.exportSchema(arena, allocator, schema).address();
            return new NativeBatch(core().batchImport(arrayAddress, schemaAddress));
        }
    }

    /**
     * Writes the batch's columns as a struct array into the C struct at {@code outArray}, for
     * foreign code that takes it over (and releases it): zero-copy, the batch stays valid.
     */
    public void exportArray(BufferAllocator allocator, long outArray) {
        try (ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            core().batchExport(address(), outArray, schema.memoryAddress());
            schema.release();
        }
    }

    /**
     * Calls {@code action} with {@code batch} as a native batch: the batch itself when it is one (no
     * copy), else its columns moved into the core for the call and released after it. For stages
     * that hand any {@link Batch} they are given to a native call (a file writer, an encoder).
     */
    public static void with(Batch batch, BufferAllocator allocator, Consumer<NativeBatch> action) {
        if (batch instanceof NativeBatch nativeBatch) {
            action.accept(nativeBatch);
            return;
        }
        try (VectorSchemaRoot root = batch.toVectors(allocator);
                NativeBatch copy = fromVectors(allocator, root)) {
            action.accept(copy);
        }
    }

    @Override
    public long rowCount() {
        if (rows < 0) {
            rows = core().batchNumRows(address());
        }
        return rows;
    }

    @Override
    public VectorSchemaRoot toVectors(BufferAllocator allocator) {
        try (ArrowArray array = ArrowArray.allocateNew(allocator);
                ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            core().batchExport(address(), array.memoryAddress(), schema.memoryAddress());
            return Data.importVectorSchemaRoot(allocator, array, schema, null);
        }
    }

    /** Rows {@code offset .. offset + length} of this batch as a new batch, zero-copy. */
    public NativeBatch slice(long offset, long length) {
        return new NativeBatch(core().batchSlice(address(), offset, length));
    }

    /** Address of a column buffer as the core sees it (validity excluded), for zero-copy checks. */
    public long bufferAddress(int column, int buffer) {
        return core().batchBufferAddress(address(), column, buffer);
    }

    /** Hands the batch to the core (a callback's result the core frees): this object is closed. */
    public long handOver() {
        return release();
    }

    /** The native handle, for calls that take a batch. */
    public long handle() {
        return address();
    }

    @Override
    protected void free(long address) {
        core().batchFree(address);
    }
}
