package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.TimeStampSecVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every Arrow type the engine uses goes Java → core → SQL ({@code SELECT *}) → Java and comes
 * back equal, with nulls, at 0, 1, 1 000 and 1 000 000 rows.
 */
class ArrowRoundTripTest {

    private BufferAllocator allocator;
    private long handlesBefore;

    @BeforeEach
    void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("round-trip", 0, Long.MAX_VALUE);
        handlesBefore = NativeTestSupport.liveHandles();
    }

    @AfterEach
    void tearDown() {
        NativeTestSupport.assertNoLeaks(handlesBefore, allocator);
        allocator.close();
    }

    /** A root with one column per type; every third row is null in every column. */
    private VectorSchemaRoot allTypes(int rows) {
        List<FieldVector> vectors = new ArrayList<>();
        TinyIntVector i8 = new TinyIntVector("i8", allocator);
        SmallIntVector i16 = new SmallIntVector("i16", allocator);
        IntVector i32 = new IntVector("i32", allocator);
        BigIntVector i64 = new BigIntVector("i64", allocator);
        Float4Vector f32 = new Float4Vector("f32", allocator);
        Float8Vector f64 = new Float8Vector("f64", allocator);
        BitVector bool = new BitVector("bool", allocator);
        VarCharVector utf8 = new VarCharVector("utf8", allocator);
        VarBinaryVector binary = new VarBinaryVector("binary", allocator);
        TimeStampSecVector tsSec = new TimeStampSecVector("ts_s", allocator);
        TimeStampMilliVector tsMilli = new TimeStampMilliVector("ts_ms", allocator);
        TimeStampMicroTZVector tsMicroUtc = new TimeStampMicroTZVector("ts_us_utc", allocator, "UTC");
        TimeStampNanoVector tsNano = new TimeStampNanoVector("ts_ns", allocator);
        DecimalVector decimal = new DecimalVector("dec", allocator, 18, 3);
        DateDayVector date = new DateDayVector("date", allocator);
        ListVector list = ListVector.empty("list", allocator);
        StructVector struct = StructVector.empty("struct", allocator);
        vectors.addAll(List.of(
                i8,
                i16,
                i32,
                i64,
                f32,
                f64,
                bool,
                utf8,
                binary,
                tsSec,
                tsMilli,
                tsMicroUtc,
                tsNano,
                decimal,
                date,
                list,
                struct));
        for (FieldVector v : vectors) {
            v.setInitialCapacity(rows);
            v.allocateNew();
        }
        // Declare the list's element type up front, so an empty batch has list<int> too.
        list.addOrGetVector(FieldType.nullable(new ArrowType.Int(32, true)));
        IntVector structA = struct.addOrGet("a", FieldType.nullable(new ArrowType.Int(32, true)), IntVector.class);
        VarCharVector structB = struct.addOrGet("b", FieldType.nullable(ArrowType.Utf8.INSTANCE), VarCharVector.class);
        structA.allocateNew();
        structB.allocateNew();
        UnionListWriter listWriter = list.getWriter();
        for (int r = 0; r < rows; r++) {
            boolean nul = r % 3 == 2;
            if (nul) {
                for (FieldVector v : vectors) {
                    if (v != list && v != struct) {
                        v.setNull(r);
                    }
                }
                struct.setNull(r);
                listWriter.setPosition(r);
                listWriter.writeNull();
                continue;
            }
            i8.setSafe(r, (byte) r);
            i16.setSafe(r, (short) (r * 7));
            i32.setSafe(r, r * 31);
            i64.setSafe(r, r * 1_000_000_007L);
            f32.setSafe(r, r * 0.5f);
            f64.setSafe(r, r / 3.0);
            bool.setSafe(r, r % 2);
            utf8.setSafe(r, ("row-" + r + "-ü").getBytes(StandardCharsets.UTF_8));
            binary.setSafe(r, new byte[] {(byte) r, 0, (byte) 0xff});
            tsSec.setSafe(r, 1_700_000_000L + r);
            tsMilli.setSafe(r, 1_700_000_000_000L + r);
            tsMicroUtc.setSafe(r, 1_700_000_000_000_000L + r);
            tsNano.setSafe(r, 1_700_000_000_000_000_000L + r);
            decimal.setSafe(r, BigDecimal.valueOf(r * 1001L, 3));
            date.setSafe(r, 19_000 + r);
            listWriter.setPosition(r);
            listWriter.startList();
            for (int k = 0; k < r % 4; k++) {
                listWriter.writeInt(r + k);
            }
            listWriter.endList();
            struct.setIndexDefined(r);
            structA.setSafe(r, r);
            structB.setSafe(r, ("s" + r).getBytes(StandardCharsets.UTF_8));
        }
        for (FieldVector v : vectors) {
            v.setValueCount(rows);
        }
        structA.setValueCount(rows);
        structB.setValueCount(rows);
        return new VectorSchemaRoot(vectors);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 1000})
    void everyTypeRoundTripsThroughSql(int rows) {
        try (VectorSchemaRoot input = allTypes(rows);
                NativeTransform plan =
                        NativeTransform.plan(allocator, "SELECT * FROM t", List.of("t"), List.of(input.getSchema()))) {
            assertEquals(fieldTypes(input), fieldTypes(plan.outputSchema()));
            plan.push(0, input);
            try (NativeBatch out = plan.drain()) {
                assertNull(plan.drain(), "one batch in, one batch out");
                try (VectorSchemaRoot back = out.toVectors(allocator)) {
                    assertEquals(rows, back.getRowCount());
                    assertEquals(render(input), render(back));
                }
            }
        }
    }

    @Test
    void emptyBatchesAndBatchesFilteredToNothingProduceNoOutput() {
        try (VectorSchemaRoot empty = allTypes(0);
                VectorSchemaRoot some = allTypes(10);
                NativeTransform plan = NativeTransform.plan(
                        allocator, "SELECT i32, utf8 FROM t WHERE i64 < 0", List.of("t"), List.of(empty.getSchema()))) {
            plan.push(0, empty);
            assertNull(plan.drain());
            plan.push(0, some);
            assertNull(plan.drain(), "every row filtered out: nothing to drain");
        }
    }

    @Test
    void aMillionRowBatchRoundTrips() {
        int rows = 1_000_000;
        try (BigIntVector ids = new BigIntVector("id", allocator);
                VarCharVector names = new VarCharVector("name", allocator)) {
            ids.allocateNew(rows);
            names.allocateNew(rows * 8L, rows);
            for (int i = 0; i < rows; i++) {
                ids.set(i, i);
                names.setSafe(i, ("n" + (i % 1000)).getBytes(StandardCharsets.UTF_8));
            }
            ids.setValueCount(rows);
            names.setValueCount(rows);
            try (VectorSchemaRoot input = VectorSchemaRoot.of(ids, names);
                    NativeTransform plan = NativeTransform.plan(
                            allocator,
                            "SELECT id * 2 AS twice, upper(name) AS name FROM t WHERE id % 2 = 0",
                            List.of("t"),
                            List.of(input.getSchema()))) {
                plan.push(0, input);
                long seen = 0;
                for (NativeBatch out = plan.drain(); out != null; out = plan.drain()) {
                    try (NativeBatch owned = out;
                            VectorSchemaRoot back = owned.toVectors(allocator)) {
                        BigIntVector twice = (BigIntVector) back.getVector("twice");
                        VarCharVector upper = (VarCharVector) back.getVector("name");
                        for (int i = 0; i < back.getRowCount(); i++) {
                            long id = (seen + i) * 2;
                            assertEquals(id * 2, twice.get(i));
                            assertEquals("N" + (id % 1000), new String(upper.get(i), StandardCharsets.UTF_8));
                        }
                        seen += back.getRowCount();
                    }
                }
                assertEquals(rows / 2, seen);
            }
        }
    }

    @Test
    void theCoreSeesTheBuffersTheJvmExported() {
        try (IntVector ints = new IntVector("i", allocator);
                VarCharVector strings = new VarCharVector("s", allocator)) {
            ints.allocateNew(4096);
            strings.allocateNew(4096 * 8L, 4096);
            for (int i = 0; i < 4096; i++) {
                ints.set(i, i);
                strings.setSafe(i, ("v" + i).getBytes(StandardCharsets.UTF_8));
            }
            ints.setValueCount(4096);
            strings.setValueCount(4096);
            try (VectorSchemaRoot root = VectorSchemaRoot.of(ints, strings);
                    NativeBatch batch = NativeBatch.fromVectors(allocator, root)) {
                assertEquals(ints.getDataBufferAddress(), batch.bufferAddress(0, 0), "int values copied");
                assertEquals(strings.getOffsetBufferAddress(), batch.bufferAddress(1, 0), "string offsets copied");
                assertEquals(strings.getDataBufferAddress(), batch.bufferAddress(1, 1), "string bytes copied");
                // And back: SELECT * passes the columns through, and Java imports them in place.
                try (NativeTransform plan =
                        NativeTransform.plan(allocator, "SELECT * FROM t", List.of("t"), List.of(root.getSchema()))) {
                    plan.push(0, batch);
                    try (NativeBatch out = plan.drain();
                            VectorSchemaRoot back = out.toVectors(allocator)) {
                        assertEquals(ints.getDataBufferAddress(), out.bufferAddress(0, 0));
                        assertEquals(
                                ints.getDataBufferAddress(), ((IntVector) back.getVector(0)).getDataBufferAddress());
                        assertTrue(back.getRowCount() == 4096);
                    }
                }
            }
        }
    }

    /** Every cell as text (byte arrays by content, which contentToTSVString does not do). */
    private static String render(VectorSchemaRoot root) {
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < root.getRowCount(); r++) {
            for (FieldVector v : root.getFieldVectors()) {
                Object value = v.getObject(r);
                out.append(value instanceof byte[] bytes ? java.util.Arrays.toString(bytes) : String.valueOf(value))
                        .append('|');
            }
            out.append('\n');
        }
        return out.toString();
    }

    private static List<String> fieldTypes(VectorSchemaRoot root) {
        return fieldTypes(root.getSchema());
    }

    private static List<String> fieldTypes(org.apache.arrow.vector.types.pojo.Schema schema) {
        return schema.getFields().stream().map(ArrowRoundTripTest::describe).toList();
    }

    private static String describe(Field f) {
        return f.getName() + ":" + f.getType()
                + f.getChildren().stream().map(c -> c.getType().toString()).toList();
    }
}
