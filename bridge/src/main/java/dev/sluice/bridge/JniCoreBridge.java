package dev.sluice.bridge;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@link CoreBridge} over JNI ({@code --bridge=jni}): the twin of {@link FfmCoreBridge}, for
 * comparing the two ways of calling the core. Each {@code sluice*} native is implemented in
 * {@code rust/core/src/jni_bridge.rs} by a call to the C function of the same name, so status
 * codes, messages and panic safety are the C ABI's; failures become exceptions through
 * {@link BridgeSupport#failure}, as over FFM.
 *
 * <p>Natives return the status and write their outputs into a per-thread {@code long[]}
 * (reused, so a hot-path call allocates nothing); strings cross as UTF-8 bytes. The natives
 * are resolved in the library {@link NativeLibrary#load()} loaded.
 */
public final class JniCoreBridge implements CoreBridge {

    /** Three output slots per thread, for the call with the most outputs. */
    private static final ThreadLocal<long[]> OUT = ThreadLocal.withInitial(() -> new long[3]);

    JniCoreBridge() {}

    @Override
    public String name() {
        return "jni";
    }

    // --- the natives: one per C function, same order and arguments; `out` takes the outputs.

    private static native int sluiceAbiVersion(long[] out);
    private static native int sluiceLastError(long[] out);
    private static native int sluiceLiveHandles(long[] out);
    private static native int sluicePlanCount(long[] out);
    private static native int sluiceDebugPanic(byte[] message);
    private static native int sluiceSqlTableReferences(byte[] sql, long[] out);
    private static native int sluiceSqlQuery(byte[] options, long array, long schema, long[] out);
    private static native int sluiceBatchImport(long array, long schema, long[] out);
    private static native int sluiceBatchExport(long batch, long array, long schema);
    private static native int sluiceBatchNumRows(long batch, long[] out);
    private static native int sluiceBatchBufferAddress(long batch, long column, long buffer, long[] out);
    private static native int sluiceBatchFree(long batch);
    private static native int sluiceTransformCreate(byte[] options, long schemas, long count, long[] out);
    private static native int sluiceTransformOutputSchema(long transform, long schema);
    private static native int sluiceTransformPush(long transform, long input, long array);
    private static native int sluiceTransformPushBatch(long transform, long input, long batch);
    private static native int sluiceTransformDrain(long transform, long[] out);
    private static native int sluiceTransformFree(long transform);
    private static native int sluiceDecoderCreate(byte[] options, long schema, long[] out);
    private static native int sluiceDecoderDecode(long decoder, long data, long offsets, long records,
            long extraArray, long extraSchema, long[] out);
    private static native int sluiceInferJsonSchema(long data, long offsets, long records, long schema);
    private static native int sluiceDecoderFree(long decoder);
    private static native int sluiceEncode(long batch, byte[] options, long[] out);
    private static native int sluiceBufferData(long buffer, long[] out);
    private static native int sluiceBufferOffsets(long buffer, long[] out);
    private static native int sluiceBufferKeys(long buffer, long[] out);
    private static native int sluiceBufferFree(long buffer);
    private static native int sluiceFileReaderOpen(byte[] options, long schema, long[] out);
    private static native int sluiceFileReaderSchema(long reader, long schema);
    private static native int sluiceFileReaderNext(long reader, long[] out);
    private static native int sluiceFileReaderFree(long reader);
    private static native int sluiceFileWriterOpen(byte[] options, long[] out);
    private static native int sluiceFileWriterWrite(long writer, long batch);
    private static native int sluiceFileWriterFlush(long writer);
    private static native int sluiceFileWriterFinish(long writer);
    private static native int sluiceFileWriterFree(long writer);
    private static native int sluiceGeneratorCreate(byte[] options, long[] out);
    private static native int sluiceGeneratorSchema(long generator, long schema);
    private static native int sluiceGeneratorNext(long generator, long maxRows, long[] out);
    private static native int sluiceGeneratorPosition(long generator, long[] out);
    private static native int sluiceGeneratorFree(long generator);

    // --- status and outputs

    private static long[] out() {
        return OUT.get();
    }

    private static void check(int status) {
        if (status != 0) {
            throw failure(status);
        }
    }

    private static NativeException failure(int status) {
        long[] out = out();
        long message = sluiceLastError(out) == 0 ? out[0] : 0;
        return BridgeSupport.failure(status, message);
    }

    /** Checks the status and returns the first output. */
    private static long first(int status, long[] out) {
        check(status);
        return out[0];
    }

    /** Checks the status and returns a copy of the first {@code n} outputs. */
    private static long[] firstN(int status, long[] out, int n) {
        check(status);
        return java.util.Arrays.copyOf(out, n);
    }

    private static byte[] utf8(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    // --- CoreBridge

    @Override
    public int abiVersion() {
        long[] out = out();
        return (int) first(sluiceAbiVersion(out), out);
    }

    @Override
    public long liveHandles() {
        long[] out = out();
        return first(sluiceLiveHandles(out), out);
    }

    @Override
    public long planCount() {
        long[] out = out();
        return first(sluicePlanCount(out), out);
    }

    @Override
    public void debugPanic(String message) {
        check(sluiceDebugPanic(utf8(message)));
    }

    @Override
    public List<String> sqlTableReferences(String sql) {
        long[] out = out();
        return BridgeSupport.tableList(this, first(sluiceSqlTableReferences(utf8(sql), out), out));
    }

    @Override
    public long sqlQuery(String optionsJson, long arrowArray, long arrowSchema) {
        long[] out = out();
        return first(sluiceSqlQuery(utf8(optionsJson), arrowArray, arrowSchema, out), out);
    }

    @Override
    public long batchImport(long arrowArray, long arrowSchema) {
        long[] out = out();
        return first(sluiceBatchImport(arrowArray, arrowSchema, out), out);
    }

    @Override
    public void batchExport(long batch, long arrowArray, long arrowSchema) {
        check(sluiceBatchExport(batch, arrowArray, arrowSchema));
    }

    @Override
    public long batchNumRows(long batch) {
        long[] out = out();
        return first(sluiceBatchNumRows(batch, out), out);
    }

    @Override
    public long batchBufferAddress(long batch, long column, long buffer) {
        long[] out = out();
        return first(sluiceBatchBufferAddress(batch, column, buffer, out), out);
    }

    @Override
    public void batchFree(long batch) {
        check(sluiceBatchFree(batch));
    }

    @Override
    public long transformCreate(String optionsJson, long arrowSchemas, long count) {
        long[] out = out();
        return first(sluiceTransformCreate(utf8(optionsJson), arrowSchemas, count, out), out);
    }

    @Override
    public void transformOutputSchema(long transform, long arrowSchema) {
        check(sluiceTransformOutputSchema(transform, arrowSchema));
    }

    @Override
    public void transformPush(long transform, long input, long arrowArray) {
        check(sluiceTransformPush(transform, input, arrowArray));
    }

    @Override
    public void transformPushBatch(long transform, long input, long batch) {
        check(sluiceTransformPushBatch(transform, input, batch));
    }

    @Override
    public long transformDrain(long transform) {
        long[] out = out();
        return first(sluiceTransformDrain(transform, out), out);
    }

    @Override
    public void transformFree(long transform) {
        check(sluiceTransformFree(transform));
    }

    @Override
    public long decoderCreate(String optionsJson, long arrowSchema) {
        long[] out = out();
        return first(sluiceDecoderCreate(utf8(optionsJson), arrowSchema, out), out);
    }

    @Override
    public long[] decoderDecode(long decoder, long data, long offsets, long records, long extraArray, long extraSchema) {
        long[] out = out();
        return firstN(sluiceDecoderDecode(decoder, data, offsets, records, extraArray, extraSchema, out), out, 2);
    }

    @Override
    public void decoderFree(long decoder) {
        check(sluiceDecoderFree(decoder));
    }

    @Override
    public void inferJsonSchema(long data, long offsets, long records, long arrowSchema) {
        check(sluiceInferJsonSchema(data, offsets, records, arrowSchema));
    }

    @Override
    public long encode(long batch, String optionsJson) {
        long[] out = out();
        return first(sluiceEncode(batch, utf8(optionsJson), out), out);
    }

    @Override
    public long[] bufferData(long buffer) {
        long[] out = out();
        return firstN(sluiceBufferData(buffer, out), out, 2);
    }

    @Override
    public long[] bufferOffsets(long buffer) {
        long[] out = out();
        return firstN(sluiceBufferOffsets(buffer, out), out, 2);
    }

    @Override
    public long[] bufferKeys(long buffer) {
        long[] out = out();
        return firstN(sluiceBufferKeys(buffer, out), out, 3);
    }

    @Override
    public void bufferFree(long buffer) {
        check(sluiceBufferFree(buffer));
    }

    @Override
    public long fileReaderOpen(String optionsJson, long arrowSchema) {
        long[] out = out();
        return first(sluiceFileReaderOpen(utf8(optionsJson), arrowSchema, out), out);
    }

    @Override
    public void fileReaderSchema(long reader, long arrowSchema) {
        check(sluiceFileReaderSchema(reader, arrowSchema));
    }

    @Override
    public long[] fileReaderNext(long reader) {
        long[] out = out();
        return firstN(sluiceFileReaderNext(reader, out), out, 2);
    }

    @Override
    public void fileReaderFree(long reader) {
        check(sluiceFileReaderFree(reader));
    }

    @Override
    public long fileWriterOpen(String optionsJson) {
        long[] out = out();
        return first(sluiceFileWriterOpen(utf8(optionsJson), out), out);
    }

    @Override
    public void fileWriterWrite(long writer, long batch) {
        check(sluiceFileWriterWrite(writer, batch));
    }

    @Override
    public void fileWriterFlush(long writer) {
        check(sluiceFileWriterFlush(writer));
    }

    @Override
    public void fileWriterFinish(long writer) {
        check(sluiceFileWriterFinish(writer));
    }

    @Override
    public void fileWriterFree(long writer) {
        check(sluiceFileWriterFree(writer));
    }

    @Override
    public long generatorCreate(String optionsJson) {
        long[] out = out();
        return first(sluiceGeneratorCreate(utf8(optionsJson), out), out);
    }

    @Override
    public void generatorSchema(long generator, long arrowSchema) {
        check(sluiceGeneratorSchema(generator, arrowSchema));
    }

    @Override
    public long generatorNext(long generator, long maxRows) {
        long[] out = out();
        return first(sluiceGeneratorNext(generator, maxRows, out), out);
    }

    @Override
    public long generatorPosition(long generator) {
        long[] out = out();
        return first(sluiceGeneratorPosition(generator, out), out);
    }

    @Override
    public void generatorFree(long generator) {
        check(sluiceGeneratorFree(generator));
    }
}
