package dev.sluice.bridge;

import java.util.Map;

/** Writes batches to a JSON-lines, CSV or Parquet file in the core. */
public final class NativeFileWriter extends NativeHandle {

    private NativeFileWriter(long handle) {
        super("file writer", handle);
    }

    /** {@code options}: path, format (json|csv|parquet), header. */
    public static NativeFileWriter open(Map<String, ?> options) {
        return new NativeFileWriter(core().fileWriterOpen(Json.object(options)));
    }

    public void write(NativeBatch batch) {
        core().fileWriterWrite(address(), batch.handle());
    }

    /** Makes what was written durable (Parquet: closes the row group; readable after finish). */
    public void flush() {
        core().fileWriterFlush(address());
    }

    /** Completes the file; errors surface here rather than at close. */
    public void finish() {
        core().fileWriterFinish(address());
    }

    @Override
    protected void free(long address) {
        core().fileWriterFree(address);
    }
}
