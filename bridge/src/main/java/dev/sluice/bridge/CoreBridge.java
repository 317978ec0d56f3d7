package dev.sluice.bridge;

import java.util.List;

/**
 * The calls into the native core, one method per C ABI function, with handles and C struct
 * pointers as plain addresses ({@code long}) so that an FFM and a JNI implementation can stand
 * behind the same interface. Every method throws a {@link NativeException} subclass when the
 * core returns an error status. Engine code uses the handle classes ({@link NativeBatch},
 * {@link NativeTransform}, …) rather than this interface directly.
 */
public interface CoreBridge {

    /** "ffm" or "jni". */
    String name();

    int abiVersion();

    long liveHandles();

    long planCount();

    /**
     * Panics inside the core on purpose (tests). Only the test library (rust/debug-exports, which
     * the engine's tests load) exports {@code sluice_debug_panic}; with the production library the
     * call fails with a {@link LinkageError}.
     */
    void debugPanic(String message);

    List<String> sqlTableReferences(String sql);

    /** Runs a bounded query once over one batch (C array and schema, moved); returns a batch handle. */
    long sqlQuery(String optionsJson, long arrowArray, long arrowSchema);

    // Batches

    /** Moves the C array and schema at the given addresses into a new native batch. */
    long batchImport(long arrowArray, long arrowSchema);

    /** Exports a batch into C structs at the given addresses ({@code arrowSchema} may be 0). */
    void batchExport(long batch, long arrowArray, long arrowSchema);

    long batchNumRows(long batch);

    long batchBufferAddress(long batch, long column, long buffer);

    void batchFree(long batch);

    // SQL transforms

    /** Plans a transform; {@code arrowSchemas} points to {@code count} consecutive C schemas (moved). */
    long transformCreate(String optionsJson, long arrowSchemas, long count);

    void transformOutputSchema(long transform, long arrowSchema);

    void transformPush(long transform, long input, long arrowArray);

    void transformPushBatch(long transform, long input, long batch);

    /** The next output batch handle, or 0 when none is left. */
    long transformDrain(long transform);

    void transformFree(long transform);

    // Codecs

    long decoderCreate(String optionsJson, long arrowSchema);

    /**
     * Decodes {@code records} records ({@code data} + {@code records + 1} offsets); the extra
     * C array and schema (moved, or both 0) add one row per record as columns. Returns
     * {batch, errors-or-0}.
     */
    long[] decoderDecode(long decoder, long data, long offsets, long records, long extraArray, long extraSchema);

    void decoderFree(long decoder);

    /** Infers the schema of JSON records ({@code data} + {@code records + 1} offsets) into a C schema. */
    void inferJsonSchema(long data, long offsets, long records, long arrowSchema);

    /** Encodes a batch; returns a buffer handle. */
    long encode(long batch, String optionsJson);

    /** Returns {address, length} of a buffer's bytes. */
    long[] bufferData(long buffer);

    /** Returns {address, count} of a buffer's record offsets (count 0 unless asked for). */
    long[] bufferOffsets(long buffer);

    /** Returns {keys address, offsets address, offsets count} of a buffer's keys. */
    long[] bufferKeys(long buffer);

    void bufferFree(long buffer);

    // Files

    /** {@code arrowSchema} may be 0 to infer the schema. */
    long fileReaderOpen(String optionsJson, long arrowSchema);

    void fileReaderSchema(long reader, long arrowSchema);

    /** Returns {batch-or-0 at end, errors-or-0}. */
    long[] fileReaderNext(long reader);

    void fileReaderFree(long reader);

    long fileWriterOpen(String optionsJson);

    void fileWriterWrite(long writer, long batch);

    void fileWriterFlush(long writer);

    void fileWriterFinish(long writer);

    void fileWriterFree(long writer);

    // Nexmark generator

    long generatorCreate(String optionsJson);

    void generatorSchema(long generator, long arrowSchema);

    /** The next batch handle, or 0 when the sequence ended. */
    long generatorNext(long generator, long maxRows);

    long generatorPosition(long generator);

    void generatorFree(long generator);
}
