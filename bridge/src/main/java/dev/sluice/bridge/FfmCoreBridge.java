package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.sluice.ffm.sluice_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * {@link CoreBridge} over the Foreign Function & Memory API, through the jextract-shaped
 * bindings in {@code dev.sluice.ffm}. Out-parameters use a small per-thread scratch segment,
 * so a hot-path call allocates nothing.
 */
public final class FfmCoreBridge implements CoreBridge {

    /** Two pointer-sized out-slots per thread, reused by every call. */
    private static final ThreadLocal<MemorySegment> SCRATCH =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16, 8));

    /** Three out-slots, for the one call that has three outputs. */
    private static final ThreadLocal<MemorySegment> KEYS_SCRATCH =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(24, 8));

    private static final MemorySegment NULL = MemorySegment.NULL;

    FfmCoreBridge() {}

    @Override
    public String name() {
        return "ffm";
    }

    private static MemorySegment scratch() {
        return SCRATCH.get();
    }

    private static MemorySegment at(long address) {
        return address == 0 ? NULL : MemorySegment.ofAddress(address);
    }

    private static void check(int status) {
        if (status != 0) {
            throw failure(status);
        }
    }

    private static NativeException failure(int status) {
        MemorySegment out = scratch();
        long message = sluice_h.sluice_last_error(out) == 0 ? out.get(ADDRESS, 0).address() : 0;
        return BridgeSupport.failure(status, message);
    }

    private static long handleOut(int status) {
        check(status);
        return scratch().get(JAVA_LONG, 0);
    }

    @Override
    public int abiVersion() {
        MemorySegment out = scratch();
        check(sluice_h.sluice_abi_version(out));
        return out.get(JAVA_INT, 0);
    }

    @Override
    public long liveHandles() {
        return handleOut(sluice_h.sluice_live_handles(scratch()));
    }

    @Override
    public long planCount() {
        return handleOut(sluice_h.sluice_plan_count(scratch()));
    }

    @Override
    public void debugPanic(String message) {
        try (Arena arena = Arena.ofConfined()) {
            check(sluice_h.sluice_debug_panic(arena.allocateFrom(message)));
        }
    }

    @Override
    public List<String> sqlTableReferences(String sql) {
        long buffer;
        try (Arena arena = Arena.ofConfined()) {
            buffer = handleOut(sluice_h.sluice_sql_table_references(arena.allocateFrom(sql), scratch()));
        }
        return BridgeSupport.tableList(this, buffer);
    }

    @Override
    public long sqlQuery(String optionsJson, long arrowArray, long arrowSchema) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_sql_query(arena.allocateFrom(optionsJson), at(arrowArray), at(arrowSchema), scratch()));
        }
    }

    @Override
    public long batchImport(long arrowArray, long arrowSchema) {
        return handleOut(sluice_h.sluice_batch_import(at(arrowArray), at(arrowSchema), scratch()));
    }

    @Override
    public void batchExport(long batch, long arrowArray, long arrowSchema) {
        check(sluice_h.sluice_batch_export(at(batch), at(arrowArray), at(arrowSchema)));
    }

    @Override
    public long batchNumRows(long batch) {
        return handleOut(sluice_h.sluice_batch_num_rows(at(batch), scratch()));
    }

    @Override
    public long batchBufferAddress(long batch, long column, long buffer) {
        return handleOut(sluice_h.sluice_batch_buffer_address(at(batch), column, buffer, scratch()));
    }

    @Override
    public void batchFree(long batch) {
        check(sluice_h.sluice_batch_free(at(batch)));
    }

    @Override
    public long transformCreate(String optionsJson, long arrowSchemas, long count) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_transform_create(arena.allocateFrom(optionsJson), at(arrowSchemas), count, scratch()));
        }
    }

    @Override
    public void transformOutputSchema(long transform, long arrowSchema) {
        check(sluice_h.sluice_transform_output_schema(at(transform), at(arrowSchema)));
    }

    @Override
    public void transformPush(long transform, long input, long arrowArray) {
        check(sluice_h.sluice_transform_push(at(transform), input, at(arrowArray)));
    }

    @Override
    public void transformPushBatch(long transform, long input, long batch) {
        check(sluice_h.sluice_transform_push_batch(at(transform), input, at(batch)));
    }

    @Override
    public long transformDrain(long transform) {
        return handleOut(sluice_h.sluice_transform_drain(at(transform), scratch()));
    }

    @Override
    public void transformFree(long transform) {
        check(sluice_h.sluice_transform_free(at(transform)));
    }

    @Override
    public long decoderCreate(String optionsJson, long arrowSchema) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_decoder_create(arena.allocateFrom(optionsJson), at(arrowSchema), scratch()));
        }
    }

    @Override
    public long[] decoderDecode(long decoder, long data, long offsets, long records, long extraArray, long extraSchema) {
        MemorySegment out = scratch();
        check(sluice_h.sluice_decoder_decode(at(decoder), at(data), at(offsets), records, at(extraArray), at(extraSchema),
                out, out.asSlice(8)));
        return new long[] {out.get(JAVA_LONG, 0), out.get(JAVA_LONG, 8)};
    }

    @Override
    public void inferJsonSchema(long data, long offsets, long records, long arrowSchema) {
        check(sluice_h.sluice_infer_json_schema(at(data), at(offsets), records, at(arrowSchema)));
    }

    @Override
    public void decoderFree(long decoder) {
        check(sluice_h.sluice_decoder_free(at(decoder)));
    }

    @Override
    public long encode(long batch, String optionsJson) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_encode(at(batch), arena.allocateFrom(optionsJson), scratch()));
        }
    }

    @Override
    public long[] bufferData(long buffer) {
        MemorySegment out = scratch();
        check(sluice_h.sluice_buffer_data(at(buffer), out, out.asSlice(8)));
        return new long[] {out.get(JAVA_LONG, 0), out.get(JAVA_LONG, 8)};
    }

    @Override
    public long[] bufferOffsets(long buffer) {
        MemorySegment out = scratch();
        check(sluice_h.sluice_buffer_offsets(at(buffer), out, out.asSlice(8)));
        return new long[] {out.get(JAVA_LONG, 0), out.get(JAVA_LONG, 8)};
    }

    @Override
    public long[] bufferKeys(long buffer) {
        MemorySegment out = KEYS_SCRATCH.get();
        check(sluice_h.sluice_buffer_keys(at(buffer), out, out.asSlice(8), out.asSlice(16)));
        return new long[] {out.get(JAVA_LONG, 0), out.get(JAVA_LONG, 8), out.get(JAVA_LONG, 16)};
    }

    @Override
    public void bufferFree(long buffer) {
        check(sluice_h.sluice_buffer_free(at(buffer)));
    }

    @Override
    public long fileReaderOpen(String optionsJson, long arrowSchema) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_file_reader_open(arena.allocateFrom(optionsJson), at(arrowSchema), scratch()));
        }
    }

    @Override
    public void fileReaderSchema(long reader, long arrowSchema) {
        check(sluice_h.sluice_file_reader_schema(at(reader), at(arrowSchema)));
    }

    @Override
    public long[] fileReaderNext(long reader) {
        MemorySegment out = scratch();
        check(sluice_h.sluice_file_reader_next(at(reader), out, out.asSlice(8)));
        return new long[] {out.get(JAVA_LONG, 0), out.get(JAVA_LONG, 8)};
    }

    @Override
    public void fileReaderFree(long reader) {
        check(sluice_h.sluice_file_reader_free(at(reader)));
    }

    @Override
    public long fileWriterOpen(String optionsJson) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_file_writer_open(arena.allocateFrom(optionsJson), scratch()));
        }
    }

    @Override
    public void fileWriterWrite(long writer, long batch) {
        check(sluice_h.sluice_file_writer_write(at(writer), at(batch)));
    }

    @Override
    public void fileWriterFlush(long writer) {
        check(sluice_h.sluice_file_writer_flush(at(writer)));
    }

    @Override
    public void fileWriterFinish(long writer) {
        check(sluice_h.sluice_file_writer_finish(at(writer)));
    }

    @Override
    public void fileWriterFree(long writer) {
        check(sluice_h.sluice_file_writer_free(at(writer)));
    }

    @Override
    public long generatorCreate(String optionsJson) {
        try (Arena arena = Arena.ofConfined()) {
            return handleOut(sluice_h.sluice_generator_create(arena.allocateFrom(optionsJson), scratch()));
        }
    }

    @Override
    public void generatorSchema(long generator, long arrowSchema) {
        check(sluice_h.sluice_generator_schema(at(generator), at(arrowSchema)));
    }

    @Override
    public long generatorNext(long generator, long maxRows) {
        return handleOut(sluice_h.sluice_generator_next(at(generator), maxRows, scratch()));
    }

    @Override
    public long generatorPosition(long generator) {
        return handleOut(sluice_h.sluice_generator_position(at(generator), scratch()));
    }

    @Override
    public void generatorFree(long generator) {
        check(sluice_h.sluice_generator_free(at(generator)));
    }
}
