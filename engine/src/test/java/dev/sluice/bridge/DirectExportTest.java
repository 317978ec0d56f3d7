package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.TransferPair;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every type {@link DirectExport} writes goes Java → C structs written directly →
 * {@code sluice_batch_import} → back out of the core → Arrow Java's import, and comes back equal
 * to the input and to what Arrow Java's own export gives; with nulls, at 0, 1 and many rows,
 * from sliced vectors, through SQL pushes and decoder extras. Every test ends with no live
 * export, no native handle and no Arrow memory left.
 */
class DirectExportTest {

    private BufferAllocator allocator;
    private long handlesBefore;
    private long exportsBefore;

    @BeforeEach
    void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("direct-export", 0, Long.MAX_VALUE);
        handlesBefore = NativeTestSupport.liveHandles();
        exportsBefore = DirectExport.liveExports();
    }

    @AfterEach
    void tearDown() {
        assertEquals(exportsBefore, DirectExport.liveExports(), "exports not released");
        NativeTestSupport.assertNoLeaks(handlesBefore, allocator);
        allocator.close();
    }

    /** One column per type DirectExport writes directly. */
    private static List<Field> supportedFields(boolean nullable) {
        List<Field> fields = new ArrayList<>();
        int i = 0;
        for (ArrowType type : FlatTypes.written()) {
            fields.add(new Field("c" + i++ + "_" + type.getTypeID(), new FieldType(nullable, type, null), null));
        }
        return fields;
    }

    /** A root of {@code fields} with {@code rows} rows; in nullable columns every third row is null. */
    private VectorSchemaRoot filled(Schema schema, int rows) {
        List<FieldVector> vectors = new ArrayList<>();
        for (Field field : schema.getFields()) {
            FieldVector v = field.createVector(allocator);
            vectors.add(v);
            v.setInitialCapacity(rows);
            v.allocateNew();
            for (int r = 0; r < rows; r++) {
                if (field.isNullable() && r % 3 == 2) {
                    continue; // validity bit stays 0; variable-width holes are filled by setValueCount
                }
                byte[] text = ("v" + r + "-ü").getBytes(StandardCharsets.UTF_8);
                switch (v) {
                    case BaseVariableWidthVector variable -> variable.setSafe(r, text);
                    case BaseLargeVariableWidthVector variable -> variable.setSafe(r, text);
                    case BitVector bits -> bits.setSafe(r, r % 2);
                    case BaseFixedWidthVector fixed -> {
                        BitVectorHelper.setBit(fixed.getValidityBuffer(), r);
                        writeSmallValue(
                                fixed.getDataBuffer(),
                                (long) r * fixed.getTypeWidth(),
                                fixed.getTypeWidth(),
                                r * 37L + 11);
                    }
                    default -> throw new AssertionError("unexpected vector " + v.getClass());
                }
            }
            v.setValueCount(rows);
        }
        return new VectorSchemaRoot(schema, vectors, rows);
    }

    /** Writes {@code value} little-endian into {@code width} bytes (zero-extended): valid for every fixed-width type here. */
    private static void writeSmallValue(ArrowBuf data, long at, int width, long value) {
        for (int b = 0; b < width; b++) {
            data.setByte(at + b, b < 8 ? (byte) (value >>> (8 * b)) : 0);
        }
    }

    @ParameterizedTest(name = "{0} rows, nullable={1}")
    @CsvSource({"0, true", "1, true", "1000, true", "0, false", "1, false", "1000, false"})
    void everySupportedTypeRoundTripsThroughTheCore(int rows, boolean nullable) {
        Schema schema = new Schema(supportedFields(nullable));
        assertTrue(DirectExport.supports(schema));
        try (VectorSchemaRoot input = filled(schema, rows)) {
            assertRoundTrips(input);
        }
    }

    @Test
    void metadataOfFieldsAndSchemaCrossesUnchanged() {
        Field id = new Field(
                "id", new FieldType(true, new ArrowType.Int(64, true), null, Map.of("unit", "µs", "k", "")), null);
        Field name =
                new Field("name", new FieldType(false, ArrowType.Utf8.INSTANCE, null, Map.of("origin", "kafka")), null);
        Schema schema = new Schema(List.of(id, name), Map.of("pipeline", "p1", "version", "2"));
        try (VectorSchemaRoot input = filled(schema, 10)) {
            assertRoundTrips(input);
        }
    }

    @Test
    void slicedVectorsRoundTrip() {
        Schema schema = new Schema(supportedFields(true));
        try (VectorSchemaRoot whole = filled(schema, 100)) {
            List<FieldVector> slices = new ArrayList<>();
            for (FieldVector v : whole.getFieldVectors()) {
                TransferPair pair = v.getTransferPair(allocator);
                pair.splitAndTransfer(7, 50); // start not on a byte boundary of the validity bitmap
                slices.add((FieldVector) pair.getTo());
            }
            try (VectorSchemaRoot slice = new VectorSchemaRoot(schema, slices, 50)) {
                assertEquals(
                        render(whole)
                                .lines()
                                .skip(7)
                                .limit(50)
                                .map(l -> l + "\n")
                                .reduce("", String::concat),
                        render(slice));
                assertRoundTrips(slice);
            }
        }
    }

    /** One vector exported alone (a Java UDF's result) reads back equal, sliced or not, and is released once. */
    @Test
    void aSingleVectorExportsWithoutAStruct() {
        Schema schema = new Schema(supportedFields(true));
        try (VectorSchemaRoot whole = filled(schema, 100)) {
            for (FieldVector v : whole.getFieldVectors()) {
                TransferPair pair = v.getTransferPair(allocator);
                pair.splitAndTransfer(7, 50);
                try (FieldVector slice = (FieldVector) pair.getTo()) {
                    for (FieldVector vector : List.of(v, slice)) {
                        try (ArrowArray array = ArrowArray.allocateNew(allocator);
                                ArrowSchema field = ArrowSchema.allocateNew(allocator)) {
                            DirectExport.exportVector(
                                    allocator, vector, MemorySegment.ofAddress(array.memoryAddress()));
                            Data.exportField(allocator, vector.getField(), null, field);
                            try (FieldVector back = Data.importVector(allocator, array, field, null)) {
                                assertEquals(vector.getValueCount(), back.getValueCount());
                                for (int i = 0; i < vector.getValueCount(); i++) {
                                    assertEquals(
                                            shown(vector.getObject(i)),
                                            shown(back.getObject(i)),
                                            vector.getField() + " row " + i);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    private static String shown(Object value) {
        return value instanceof byte[] bytes ? java.util.Arrays.toString(bytes) : String.valueOf(value);
    }

    /** Direct export → core → Arrow Java import equals the input and Arrow Java's own export → core → import. */
    private void assertRoundTrips(VectorSchemaRoot input) {
        String expected = render(input);
        try (NativeBatch direct = NativeBatch.fromVectors(allocator, input)) {
            assertEquals(exportsBefore + 1, DirectExport.liveExports(), "the core holds the direct export's buffers");
            try (VectorSchemaRoot back = direct.toVectors(allocator);
                    NativeBatch viaArrowJava = importWithArrowJava(input);
                    VectorSchemaRoot backViaArrowJava = viaArrowJava.toVectors(allocator)) {
                assertEquals(input.getRowCount(), back.getRowCount());
                assertEquals(input.getSchema(), back.getSchema());
                assertEquals(backViaArrowJava.getSchema(), back.getSchema());
                assertEquals(expected, render(back));
                assertEquals(expected, render(backViaArrowJava));
            }
        }
        assertEquals(exportsBefore, DirectExport.liveExports());
    }

    private NativeBatch importWithArrowJava(VectorSchemaRoot root) {
        try (ArrowArray array = ArrowArray.allocateNew(allocator);
                ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            Data.exportVectorSchemaRoot(allocator, root, null, array, schema);
            return new NativeBatch(NativeCore.bridge().batchImport(array.memoryAddress(), schema.memoryAddress()));
        }
    }

    @Test
    void nullCountsAgreeWithArrowJavas() {
        for (int rows : new int[] {1, 7, 8, 63, 64, 65, 1000, 4097}) {
            for (int every : new int[] {1, 2, 3, 64, rows + 1}) { // every n-th row null; rows + 1: none
                try (IntVector v = new IntVector("v", allocator)) {
                    v.allocateNew(rows);
                    for (int r = 0; r < rows; r++) {
                        if (r % every != every - 1) {
                            v.set(r, r);
                        }
                    }
                    v.setValueCount(rows);
                    assertEquals(
                            v.getNullCount(), DirectExport.nullCount(v), rows + " rows, every " + every + "th null");
                }
            }
        }
    }

    @Test
    void nullCountsAgreeWhenTheOnlyNullsComeLate() {
        // The count skips leading all-valid bytes in spans of 64 Ki rows: nulls after long valid
        // runs, in the last partial byte, across a span boundary and in later spans.
        int[][] cases = {
            {9, 8},
            {15, 14},
            {64, 63},
            {65, 64},
            {4097, 4096},
            {65536, 65535},
            {65537, 65536},
            {70000, 65535, 65536, 69999},
            {140000, 7, 131071, 131072, 139999},
            {200000}
        };
        for (int[] c : cases) {
            int rows = c[0];
            try (IntVector v = new IntVector("v", allocator)) {
                v.allocateNew(rows);
                for (int r = 0; r < rows; r++) {
                    v.set(r, r);
                }
                for (int i = 1; i < c.length; i++) {
                    v.setNull(c[i]);
                }
                v.setValueCount(rows);
                assertEquals(c.length - 1, v.getNullCount());
                assertEquals(v.getNullCount(), DirectExport.nullCount(v), rows + " rows, nulls " + Arrays.toString(c));
            }
        }
    }

    @Test
    void theCoreReferencesTheVectorsOwnBuffers() {
        Schema schema = new Schema(List.of(
                Field.notNullable("id", new ArrowType.Int(64, true)), Field.nullable("name", ArrowType.Utf8.INSTANCE)));
        try (VectorSchemaRoot root = filled(schema, 4096);
                NativeBatch batch = NativeBatch.fromVectors(allocator, root)) {
            BigIntVector id = (BigIntVector) root.getVector(0);
            VarCharVector name = (VarCharVector) root.getVector(1);
            assertEquals(id.getDataBufferAddress(), batch.bufferAddress(0, 0), "values copied");
            assertEquals(name.getOffsetBufferAddress(), batch.bufferAddress(1, 0), "offsets copied");
            assertEquals(name.getDataBufferAddress(), batch.bufferAddress(1, 1), "bytes copied");
        }
    }

    @Test
    void theBatchOutlivesItsRoot() {
        Schema schema = new Schema(supportedFields(true));
        VectorSchemaRoot input = filled(schema, 100);
        String expected = render(input);
        NativeBatch batch = NativeBatch.fromVectors(allocator, input);
        input.close();
        assertTrue(allocator.getAllocatedMemory() > 0, "the export keeps the buffers alive");
        try (batch;
                VectorSchemaRoot back = batch.toVectors(allocator)) {
            assertEquals(expected, render(back));
        }
    }

    @Test
    void releaseOnAnotherThreadGivesTheBuffersBack() throws InterruptedException {
        try (VectorSchemaRoot input = filled(new Schema(supportedFields(true)), 100)) {
            NativeBatch batch = NativeBatch.fromVectors(allocator, input);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread other = Thread.ofPlatform().start(() -> {
                try {
                    batch.close();
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            other.join();
            assertNull(failure.get());
            assertEquals(exportsBefore, DirectExport.liveExports());
        }
    }

    @Test
    void concurrentExportsAndReleasesBalance() throws InterruptedException {
        Schema schema = new Schema(supportedFields(true));
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try (VectorSchemaRoot input = filled(schema, 64)) {
                    for (int i = 0; i < 300; i++) {
                        NativeBatch.fromVectors(allocator, input).close();
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertNull(failure.get());
    }

    @Test
    void aSecondReleaseOfTheSameExportIsIgnored() {
        try (Arena arena = Arena.ofConfined();
                VectorSchemaRoot input = filled(new Schema(supportedFields(true)), 10)) {
            MemorySegment array = arena.allocate(DirectExport.ARRAY_SIZE, 8);
            MemorySegment schema = arena.allocate(CSchemaLayout.SIZE, 8);
            MemorySegment copy = arena.allocate(DirectExport.ARRAY_SIZE, 8);
            DirectExport.export(allocator, input, array, schema);
            assertEquals(exportsBefore + 2, DirectExport.liveExports(), "one export for the array, one for the schema");
            copy.copyFrom(array);
            DirectExport.releaseIfSet(array);
            DirectExport.releaseSchemaIfSet(schema);
            assertEquals(0, array.get(JAVA_LONG, 64), "release sets release to NULL");
            assertEquals(exportsBefore, DirectExport.liveExports());
            long ignored = DirectExport.ignoredReleases();
            DirectExport.releaseIfSet(copy); // a consumer bug: the same struct released twice
            assertEquals(ignored + 1, DirectExport.ignoredReleases());
        }
        // Closing the input gave the last reference back: had the second release counted, this would have failed.
    }

    @Test
    void sqlPushesWriteTheArrayDirectly() {
        Schema schema = new Schema(supportedFields(true).subList(0, 20));
        try (VectorSchemaRoot input = filled(schema, 300);
                NativeTransform plan =
                        NativeTransform.plan(allocator, "SELECT * FROM t", List.of("t"), List.of(schema))) {
            for (int round = 0; round < 2; round++) {
                plan.push(0, input);
                try (NativeBatch out = plan.drain();
                        VectorSchemaRoot back = out.toVectors(allocator)) {
                    assertNull(plan.drain());
                    assertEquals(render(input), render(back));
                }
            }
        }
    }

    @Test
    void decoderExtrasAreWrittenDirectlyAndReleasedOnError() {
        Schema decoded = new Schema(List.of(Field.nullable("a", new ArrowType.Int(64, true))));
        Schema extra = new Schema(List.of(
                Field.notNullable("_partition", new ArrowType.Int(32, true)),
                Field.notNullable("_offset", new ArrowType.Int(64, true))));
        byte[] records = "{\"a\":1}{\"a\":2}{\"a\":3}".getBytes(StandardCharsets.UTF_8);
        try (Arena arena = Arena.ofConfined();
                NativeDecoder decoder = NativeDecoder.create(allocator, "json", ",", decoded);
                VectorSchemaRoot three = filled(extra, 3);
                VectorSchemaRoot two = filled(extra, 2)) {
            MemorySegment data = arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, records);
            MemorySegment offsets = arena.allocateFrom(JAVA_LONG, 0, 7, 14, 21);
            NativeDecoder.Decoded out = decoder.decode(data, offsets, 3, three);
            try (NativeBatch batch = out.batch();
                    VectorSchemaRoot back = batch.toVectors(allocator)) {
                assertNull(out.errors());
                assertEquals(
                        List.of("a", "_partition", "_offset"),
                        back.getSchema().getFields().stream()
                                .map(Field::getName)
                                .toList());
                assertEquals("[11, 48, 85]", Arrays.toString(new long[] {
                    ((BigIntVector) back.getVector(2)).get(0),
                    ((BigIntVector) back.getVector(2)).get(1),
                    ((BigIntVector) back.getVector(2)).get(2)
                }));
            }
            NativeException e = assertThrows(NativeException.class, () -> decoder.decode(data, offsets, 3, two));
            assertTrue(e.getMessage().contains("2 extra rows for 3 records"), e.getMessage());
            assertEquals(exportsBefore, DirectExport.liveExports(), "the core released the extra columns on error");
        }
    }

    @Test
    void nestedTypesFallBackToArrowJava() {
        try (ListVector list = ListVector.empty("list", allocator)) {
            list.addOrGetVector(FieldType.nullable(new ArrowType.Int(32, true)));
            list.allocateNew();
            var writer = list.getWriter();
            for (int r = 0; r < 5; r++) {
                writer.setPosition(r);
                writer.startList();
                writer.writeInt(r);
                writer.endList();
            }
            list.setValueCount(5);
            try (VectorSchemaRoot root = VectorSchemaRoot.of(list)) {
                assertFalse(DirectExport.supports(root.getSchema()));
                try (NativeBatch batch = NativeBatch.fromVectors(allocator, root)) {
                    assertEquals(exportsBefore, DirectExport.liveExports(), "Arrow Java exported it");
                    try (VectorSchemaRoot back = batch.toVectors(allocator)) {
                        assertNotNull(back);
                        assertEquals(render(root), render(back));
                    }
                }
            }
        }
    }

    /** Every cell as text (byte arrays by content). */
    private static String render(VectorSchemaRoot root) {
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < root.getRowCount(); r++) {
            for (FieldVector v : root.getFieldVectors()) {
                Object value = v.getObject(r);
                out.append(value instanceof byte[] bytes ? Arrays.toString(bytes) : String.valueOf(value))
                        .append('|');
            }
            out.append('\n');
        }
        return out.toString();
    }
}
