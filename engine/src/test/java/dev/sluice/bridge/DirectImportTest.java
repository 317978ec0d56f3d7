package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.TransferPair;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every type {@link DirectImport} reads directly goes Arrow Java → C struct (Arrow Java's export,
 * then sliced by rewriting the struct's offset and length) → {@link DirectImport} and reads back
 * the same values as the input and as Arrow Java's own importer; with and without nulls, at
 * offsets that are and are not whole bytes, with a NULL validity buffer and an unknown null
 * count. Borrowed structs are never released by the import; buffers that outlive the borrow keep
 * the struct. Every test ends with no Arrow memory and no live export left.
 */
class DirectImportTest {

    private static final long LENGTH = dev.sluice.ffm.ArrowArray.length$offset();
    private static final long NULL_COUNT = dev.sluice.ffm.ArrowArray.null_count$offset();
    private static final long OFFSET = dev.sluice.ffm.ArrowArray.offset$offset();
    private static final long N_BUFFERS = dev.sluice.ffm.ArrowArray.n_buffers$offset();
    private static final long N_CHILDREN = dev.sluice.ffm.ArrowArray.n_children$offset();
    private static final long BUFFERS = dev.sluice.ffm.ArrowArray.buffers$offset();
    private static final long RELEASE = dev.sluice.ffm.ArrowArray.release$offset();

    private BufferAllocator allocator;
    private long exportsBefore;

    @BeforeEach
    void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("direct-import", 0, Long.MAX_VALUE);
        exportsBefore = DirectExport.liveExports();
    }

    @AfterEach
    void tearDown() {
        assertEquals(exportsBefore, DirectExport.liveExports(), "exports not released");
        assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory leaked");
        allocator.close();
    }

    private static final List<ArrowType> SUPPORTED = FlatTypes.written();

    /** A vector of {@code type} with {@code rows} values; with {@code nulls}, every third is null. */
    private FieldVector filled(ArrowType type, int rows, boolean nulls) {
        FieldVector v = Field.nullable("v", type).createVector(allocator);
        v.setInitialCapacity(rows);
        v.allocateNew();
        for (int r = 0; r < rows; r++) {
            if (nulls && r % 3 == 2) {
                continue; // validity bit stays 0
            }
            byte[] text = ("v" + r + "-ü").getBytes(StandardCharsets.UTF_8);
            switch (v) {
                case BaseVariableWidthVector variable -> variable.setSafe(r, text);
                case BaseLargeVariableWidthVector variable -> variable.setSafe(r, text);
                case BitVector bits -> bits.setSafe(r, r % 2);
                case BaseFixedWidthVector fixed -> {
                    BitVectorHelper.setBit(fixed.getValidityBuffer(), r);
                    long value = r * 37L + 11;
                    for (int b = 0; b < fixed.getTypeWidth(); b++) {
                        fixed.getDataBuffer()
                                .setByte((long) r * fixed.getTypeWidth() + b, b < 8 ? (byte) (value >>> (8 * b)) : 0);
                    }
                }
                default -> throw new AssertionError("unexpected vector " + v.getClass());
            }
        }
        v.setValueCount(rows);
        return v;
    }

    /** Values {@code from} to {@code from + count} of {@code v}, one line each. */
    private static String render(FieldVector v, int from, int count) {
        StringBuilder out = new StringBuilder();
        for (int i = from; i < from + count; i++) {
            Object value = v.getObject(i);
            out.append(value instanceof byte[] bytes ? Arrays.toString(bytes) : String.valueOf(value))
                    .append('\n');
        }
        return out.toString();
    }

    /** {@code v} exported by Arrow Java into a C struct; the caller releases and closes it. */
    private ArrowArray exported(FieldVector v) {
        ArrowArray array = ArrowArray.allocateNew(allocator);
        Data.exportVector(allocator, v, null, array);
        return array;
    }

    private static MemorySegment struct(ArrowArray array) {
        return MemorySegment.ofAddress(array.memoryAddress()).reinterpret(DirectExport.ARRAY_SIZE);
    }

    private static MemorySegment bufferPointers(ArrowArray array) {
        MemorySegment s = struct(array);
        return MemorySegment.ofAddress(s.get(JAVA_LONG, BUFFERS)).reinterpret(8 * s.get(JAVA_LONG, N_BUFFERS));
    }

    private static boolean released(ArrowArray array) {
        return struct(array).get(JAVA_LONG, RELEASE) == 0;
    }

    private static void releaseAndClose(ArrowArray array) {
        if (!released(array)) {
            array.release();
        }
        array.close();
    }

    /**
     * Imports {@code struct} into {@code vector}, runs {@code check}, then closes the vector and
     * ends the borrow, in that order, as the UDF host does.
     */
    private void importDirectly(FieldVector vector, MemorySegment struct, Consumer<FieldVector> check) {
        DirectImport.Borrow borrow = null;
        try {
            borrow = DirectImport.importInto(allocator, struct, vector);
            check.accept(vector);
        } finally {
            vector.close();
            if (borrow != null) {
                borrow.close();
            }
        }
    }

    private FieldVector newVector(ArrowType type) {
        return Field.nullable("arg", type).createVector(allocator);
    }

    @ParameterizedTest(name = "{0} rows, nulls={1}, offset {2}")
    @CsvSource({
        "0, true, 0",
        "1, true, 0",
        "1000, true, 0",
        "1000, false, 0",
        "1000, true, 3",
        "1000, false, 3",
        "1000, true, 8",
        "1, true, 5",
        "0, false, 7"
    })
    void everySupportedTypeReadsTheValuesItWasGiven(int rows, boolean nulls, int offset) {
        for (ArrowType type : SUPPORTED) {
            try (FieldVector input = filled(type, offset + rows, nulls)) {
                ArrowArray array = exported(input);
                try {
                    MemorySegment s = struct(array);
                    s.set(JAVA_LONG, OFFSET, offset);
                    s.set(JAVA_LONG, LENGTH, rows);
                    s.set(JAVA_LONG, NULL_COUNT, -1); // the slice's count is not the whole vector's
                    String expected = render(input, offset, rows);
                    String[] direct = new String[1];
                    importDirectly(newVector(type), s, vector -> {
                        assertTrue(DirectImport.supports(vector), type.toString());
                        assertEquals(rows, vector.getValueCount(), type.toString());
                        direct[0] = render(vector, 0, rows);
                        assertEquals(expected, direct[0], type + " at offset " + offset);
                    });
                    assertFalse(released(array), "a borrowed struct is not released by the import");
                    if (offset == 0) { // Arrow Java's importer ignores offsets
                        try (FieldVector arrowJava = newVector(type)) {
                            Data.importIntoVector(allocator, ArrowArray.wrap(array.memoryAddress()), arrowJava, null);
                            assertEquals(direct[0], render(arrowJava, 0, rows), type.toString());
                        }
                    }
                } finally {
                    releaseAndClose(array);
                }
            }
        }
    }

    @Test
    void buffersAreTheStructsOwnMemory() {
        try (FieldVector input = filled(ArrowType.Utf8.INSTANCE, 100, true)) {
            ArrowArray array = exported(input);
            long before = allocator.getAllocatedMemory();
            try {
                importDirectly(newVector(ArrowType.Utf8.INSTANCE), struct(array), vector -> {
                    MemorySegment pointers = bufferPointers(array);
                    assertEquals(
                            pointers.get(JAVA_LONG, 0),
                            vector.getValidityBuffer().memoryAddress());
                    assertEquals(
                            pointers.get(JAVA_LONG, 8), vector.getOffsetBuffer().memoryAddress());
                    assertEquals(
                            pointers.get(JAVA_LONG, 16), vector.getDataBuffer().memoryAddress());
                    assertEquals(before, allocator.getAllocatedMemory(), "nothing allocated");
                });
            } finally {
                releaseAndClose(array);
            }
        }
    }

    @Test
    void aNullValidityBufferMeansNoNulls() {
        for (ArrowType type : SUPPORTED) {
            try (FieldVector input = filled(type, 100, false)) {
                ArrowArray array = exported(input);
                try {
                    bufferPointers(array).set(JAVA_LONG, 0, 0);
                    struct(array).set(JAVA_LONG, NULL_COUNT, 0);
                    long before = allocator.getAllocatedMemory();
                    importDirectly(newVector(type), struct(array), vector -> {
                        assertEquals(before, allocator.getAllocatedMemory(), "nothing allocated");
                        assertEquals(0, vector.getNullCount(), type.toString());
                        assertEquals(render(input, 0, 100), render(vector, 0, 100), type.toString());
                    });
                } finally {
                    releaseAndClose(array);
                }
            }
        }
    }

    @Test
    void buffersTransferredOutOfTheBorrowKeepTheStructUntilReleased() {
        ArrowArray array;
        String expected;
        try (FieldVector input = filled(ArrowType.Utf8.INSTANCE, 100, true)) {
            expected = render(input, 0, 100);
            array = exported(input);
        }
        FieldVector kept;
        try (FieldVector vector = newVector(ArrowType.Utf8.INSTANCE)) {
            DirectImport.Borrow borrow = DirectImport.importInto(allocator, struct(array), vector);
            TransferPair transfer = vector.getTransferPair(allocator);
            transfer.transfer();
            kept = (FieldVector) transfer.getTo();
            vector.close();
            borrow.close();
        }
        assertTrue(released(array), "moved out: its producer must not release it");
        assertEquals(expected, render(kept, 0, 100));
        kept.close(); // releases the moved struct, hence the input's buffers (checked in tearDown)
        array.close();
    }

    @Test
    void anAllValidBitmapWrittenIntoByAResultIsNotHandedOutAgain() {
        ArrowType int64 = new ArrowType.Int(64, true);
        try (FieldVector input = filled(int64, 100, false)) {
            ArrowArray first = exported(input);
            ArrowArray second = exported(input);
            for (ArrowArray array : List.of(first, second)) {
                bufferPointers(array).set(JAVA_LONG, 0, 0);
                struct(array).set(JAVA_LONG, NULL_COUNT, 0);
            }
            FieldVector[] kept = new FieldVector[1];
            importDirectly(newVector(int64), struct(first), vector -> {
                TransferPair transfer = vector.getTransferPair(allocator);
                transfer.transfer();
                kept[0] = (FieldVector) transfer.getTo();
                ((BigIntVector) kept[0]).setNull(5); // writes into the bitmap the import gave
            });
            importDirectly(newVector(int64), struct(second), vector -> {
                assertEquals(0, vector.getNullCount(), "a fresh all-valid bitmap");
                assertEquals(render(input, 0, 100), render(vector, 0, 100));
            });
            assertTrue(kept[0].isNull(5));
            assertEquals(1, kept[0].getNullCount());
            kept[0].close(); // releases the first struct, moved out by the transfer
            first.close();
            releaseAndClose(second);
        }
    }

    @Test
    void aResultExportedFromBorrowedBuffersReleasesTheArgumentWithIt() {
        ArrowType float64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
        ArrowArray array;
        String expected;
        try (FieldVector input = filled(float64, 64, true)) {
            expected = render(input, 0, 64);
            array = exported(input);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(DirectExport.ARRAY_SIZE, 8);
            try (FieldVector vector = newVector(float64)) {
                DirectImport.Borrow borrow = DirectImport.importInto(allocator, struct(array), vector);
                TransferPair transfer = vector.getTransferPair(allocator);
                transfer.transfer();
                try (FieldVector result = (FieldVector) transfer.getTo()) {
                    DirectExport.exportVector(allocator, result, out);
                }
                vector.close();
                borrow.close();
            }
            assertTrue(released(array), "moved out: its producer must not release it");
            try (FieldVector back = new Float8Vector("back", allocator)) {
                Data.importIntoVector(allocator, ArrowArray.wrap(out.address()), back, null);
                assertEquals(expected, render(back, 0, 64));
            } // releases the export, then the moved struct (checked in tearDown)
        }
        array.close();
    }

    @Test
    void typesNotReadDirectlyGoThroughArrowJava() {
        try (ListVector input = ListVector.empty("list", allocator)) {
            UnionListWriter writer = input.getWriter();
            for (int r = 0; r < 10; r++) {
                writer.setPosition(r);
                writer.startList();
                for (int k = 0; k < r % 3; k++) {
                    writer.integer().writeInt(r * 10 + k);
                }
                writer.endList();
            }
            input.setValueCount(10);
            Field field = input.getField();
            ArrowArray array = exported(input);
            try {
                importDirectly(field.createVector(allocator), struct(array), vector -> {
                    assertFalse(DirectImport.supports(vector));
                    assertEquals(render(input, 0, 10), render(vector, 0, 10));
                });
                assertTrue(released(array), "Arrow Java's import moves the struct out");
            } finally {
                releaseAndClose(array);
            }
            ArrowArray sliced = exported(input);
            try (FieldVector vector = field.createVector(allocator)) {
                struct(sliced).set(JAVA_LONG, OFFSET, 2);
                struct(sliced).set(JAVA_LONG, LENGTH, 8);
                IllegalArgumentException e = assertThrows(
                        IllegalArgumentException.class,
                        () -> DirectImport.importInto(allocator, struct(sliced), vector));
                assertTrue(e.getMessage().contains("offset 2"), e.getMessage());
            } finally {
                releaseAndClose(sliced);
            }
        }
    }

    @Test
    void structsThatContradictTheirTypeAreRefused() {
        ArrowType int32 = new ArrowType.Int(32, true);
        assertRefused(int32, s -> s.set(JAVA_LONG, N_BUFFERS, 3), "n_buffers 3, expected 2");
        assertRefused(int32, s -> s.set(JAVA_LONG, N_CHILDREN, 1), "children");
        assertRefused(int32, s -> s.set(JAVA_LONG, LENGTH, -1), "length -1");
        assertRefused(int32, s -> s.set(JAVA_LONG, LENGTH, 1L << 31), "length 2147483648");
        assertRefused(int32, s -> s.set(JAVA_LONG, NULL_COUNT, 11), "null_count 11");
        assertRefused(
                int32,
                s -> {
                    MemorySegment.ofAddress(s.get(JAVA_LONG, BUFFERS))
                            .reinterpret(16)
                            .set(JAVA_LONG, 0, 0);
                    s.set(JAVA_LONG, NULL_COUNT, 3);
                },
                "no validity buffer");
        assertRefused(
                int32,
                s -> MemorySegment.ofAddress(s.get(JAVA_LONG, BUFFERS))
                        .reinterpret(16)
                        .set(JAVA_LONG, 8, 0),
                "NULL data buffer");
        assertRefused(
                ArrowType.Utf8.INSTANCE,
                s -> {
                    MemorySegment offsets = MemorySegment.ofAddress(MemorySegment.ofAddress(s.get(JAVA_LONG, BUFFERS))
                                    .reinterpret(24)
                                    .get(JAVA_LONG, 8))
                            .reinterpret(44);
                    offsets.set(ValueLayout.JAVA_INT, 40, -5);
                },
                "offsets from 0 to -5");
    }

    @Test
    void aReleasedStructIsRefused() {
        try (IntVector input = (IntVector) filled(new ArrowType.Int(32, true), 10, true)) {
            ArrowArray array = exported(input);
            array.release();
            try (FieldVector vector = newVector(input.getField().getType())) {
                IllegalArgumentException e = assertThrows(
                        IllegalArgumentException.class,
                        () -> DirectImport.importInto(allocator, struct(array), vector));
                assertTrue(e.getMessage().contains("released"), e.getMessage());
            } finally {
                array.close();
            }
        }
    }

    private void assertRefused(ArrowType type, Consumer<MemorySegment> corrupt, String message) {
        try (FieldVector input = filled(type, 10, true)) {
            ArrowArray array = exported(input);
            byte[] intact = struct(array).toArray(ValueLayout.JAVA_BYTE);
            try (FieldVector vector = newVector(type)) {
                corrupt.accept(struct(array));
                IllegalArgumentException e = assertThrows(
                        IllegalArgumentException.class,
                        () -> DirectImport.importInto(allocator, struct(array), vector));
                assertTrue(e.getMessage().contains(message), e.getMessage());
                assertEquals(0, vector.getValueCount());
            } finally {
                // Arrow Java's release walks the struct's children: give it back its own fields.
                struct(array).copyFrom(MemorySegment.ofArray(intact));
                releaseAndClose(array);
            }
        }
    }
}
