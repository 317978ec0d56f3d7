package dev.sluice.connector.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.TimeStampSecVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * The postgres sink's COPY encoder writes every value exactly as {@link PgTypes#text} gives it
 * (escaped for COPY): its fast paths read the vectors' buffers directly, so each edge is checked
 * against the String path — extremes, negative and pre-1970 values, fractions, escapes, years
 * outside 0..9999.
 */
class CopyEncoderTest {

    private static final long DAY_MICROS = 86_400_000_000L;

    @Test
    void fastPathsWriteWhatTheTextPathGives() {
        long[] longs = {0, 1, -1, 9, 10, -10, 123_456_789, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1};
        double[] doubles = {0.0, -0.0, 1.5, -2.25, 1e-300, 1e300, Double.NaN, Double.POSITIVE_INFINITY, 0.1 + 0.2, 3};
        String[] strings = {
            "", "plain", "tab\there", "line\nbreak", "back\\slash", "cr\r", "héllo ✓", "\\N", "a\t\\\n", "x"
        };
        int[] days = {0, -1, 1, 19_000, -25_567, 2_932_896, 2_932_897, -719_528, -719_529, 11_016};
        long[] micros = {
            0, -1, 1, 500_000, -500_000, 1_000, 59_000_000, 60_000_000, DAY_MICROS - 1, 2_932_896L * DAY_MICROS
        };
        try (BufferAllocator allocator = new RootAllocator();
                BigIntVector bigint = new BigIntVector("bigint", allocator);
                IntVector ints = new IntVector("int", allocator);
                UInt8Vector uint8 = new UInt8Vector("uint8", allocator);
                Float8Vector float8 = new Float8Vector("float8", allocator);
                Float4Vector float4 = new Float4Vector("float4", allocator);
                BitVector bits = new BitVector("bool", allocator);
                VarCharVector text = new VarCharVector("text", allocator);
                DateDayVector date = new DateDayVector("date", allocator);
                TimeStampMicroVector tsMicro = new TimeStampMicroVector("ts_us", allocator);
                TimeStampMicroTZVector tsZoned = new TimeStampMicroTZVector("tstz_us", allocator, "UTC");
                TimeStampMilliVector tsMilli = new TimeStampMilliVector("ts_ms", allocator);
                TimeStampSecVector tsSec = new TimeStampSecVector("ts_s", allocator);
                TimeStampNanoVector tsNano = new TimeStampNanoVector("ts_ns", allocator)) {
            List<FieldVector> vectors = List.of(
                    bigint, ints, uint8, float8, float4, bits, text, date, tsMicro, tsZoned, tsMilli, tsSec, tsNano);
            int rows = 11; // the 11th row is null in every column
            vectors.forEach(v -> {
                v.allocateNew();
            });
            for (int i = 0; i < rows - 1; i++) {
                bigint.setSafe(i, longs[i]);
                ints.setSafe(i, (int) longs[i]);
                uint8.setSafe(i, longs[i]);
                float8.setSafe(i, doubles[i]);
                float4.setSafe(i, (float) doubles[i]);
                bits.setSafe(i, i % 2);
                text.setSafe(i, strings[i].getBytes(StandardCharsets.UTF_8));
                date.setSafe(i, days[i]);
                tsMicro.setSafe(i, micros[i]);
                tsZoned.setSafe(i, -micros[i]);
                tsMilli.setSafe(i, micros[i] / 1000 * (i % 3 == 0 ? 1 : 7));
                tsSec.setSafe(i, micros[i] / 1_000_000 - i * 3_600L);
                tsNano.setSafe(i, micros[i] * 1000 + i * 123);
            }
            vectors.forEach(v -> v.setValueCount(rows));
            try (VectorSchemaRoot root = new VectorSchemaRoot(vectors)) {
                int[] all = IntStream.range(0, vectors.size()).toArray();
                CopyEncoder encoder = new CopyEncoder(IntStream.of(all).boxed().toList(), new int[] {0});
                encoder.bind(root);
                CopyRows out = encoder.newRows();
                for (int row = 0; row < rows; row++) {
                    encoder.append(row, (byte) 'u', row, out);
                }
                assertEquals(rows, out.rows());
                for (int row = 0; row < rows; row++) {
                    List<String> expected = new ArrayList<>();
                    for (FieldVector v : vectors) {
                        expected.add(PgTypes.text(v).apply(row));
                    }
                    assertArrayEquals(expected.toArray(), encoder.written(out, row), "row " + row);
                }

                // Binary: every column but the unsigned 64-bit one (numeric has no plain binary
                // form) into a table of exactly the mapped types; read back, the same text.
                int[] plain =
                        IntStream.range(0, vectors.size()).filter(c -> c != 2).toArray();
                CopyBinary.Form[] forms = IntStream.of(plain)
                        .mapToObj(c -> CopyBinary.formFor(vectors.get(c).getField(), formatType(vectors.get(c))))
                        .toArray(CopyBinary.Form[]::new);
                assertFalse(java.util.Arrays.asList(forms).contains(null), java.util.Arrays.toString(forms));
                assertEquals(null, CopyBinary.formFor(uint8.getField(), "numeric(20,0)"));
                assertEquals(null, CopyBinary.formFor(bigint.getField(), "integer"), "another type goes as text");
                CopyEncoder binary = new CopyEncoder(IntStream.of(plain).boxed().toList(), new int[] {0});
                binary.useBinary(forms);
                binary.bind(root);
                CopyRows tuples = binary.newRows();
                for (int row = 0; row < rows; row++) {
                    binary.append(row, (byte) 'u', row, tuples);
                }
                for (int row = 0; row < rows; row++) {
                    List<String> expected = new ArrayList<>();
                    for (int c : plain) {
                        expected.add(PgTypes.text(vectors.get(c)).apply(row));
                    }
                    assertArrayEquals(expected.toArray(), binary.written(tuples, row), "binary row " + row);
                }
                // The lines themselves: tab-separated, escaped, \N for null.
                String lines = new String(out.bytes(), 0, out.size(), StandardCharsets.UTF_8);
                assertEquals(rows, lines.split("\n", -1).length - 1);
                assertTrue(lines.contains("\ttab\\there\t"), lines);
                assertTrue(
                        lines.endsWith(String.join("\t", java.util.Collections.nCopies(vectors.size(), "\\N")) + "\n"));
                assertFalse(out.mayRepeatKeys());
            }
        }
    }

    /** Doubles of every shape, written without a String where they can be, read as Java writes them. */
    @Test
    void doublesAreWrittenAsDoubleToStringWritesThem() {
        java.util.Random random = new java.util.Random(16);
        CopyRows out = new CopyRows(false);
        List<Double> values = new ArrayList<>(List.of(
                0.0,
                -0.0,
                1e-3,
                -1e-3,
                9.99e-4,
                1e7,
                9_999_999.999,
                1e7 - 1e-3,
                0.1,
                0.2,
                0.3,
                0.1 + 0.2,
                100.0,
                -12.5,
                1.005,
                2.675,
                1e-4,
                123_456.789,
                Double.MIN_VALUE,
                Double.MAX_VALUE,
                Double.NaN,
                Double.NEGATIVE_INFINITY,
                Math.nextUp(1.0),
                Math.nextDown(1e7),
                Math.nextUp(1e-3)));
        for (int i = 0; i < 300_000; i++) {
            long m = random.nextLong(20_000_000_000L) - 10_000_000_000L;
            values.add(
                    switch (i % 6) {
                        case 0 -> m / 1000.0;
                        case 1 -> m / 100.0;
                        case 2 -> (double) (m / 1000);
                        case 3 -> m / 1000.0 + Math.ulp(m / 1000.0) * (random.nextBoolean() ? 1 : -1);
                        case 4 -> random.nextDouble() * Math.pow(10, random.nextInt(-6, 9));
                        default -> Double.longBitsToDouble(random.nextLong());
                    });
        }
        int plain = 0;
        for (double d : values) {
            int start = out.size();
            if (CopyEncoder.putPlainDouble(d, out)) {
                plain++;
                String written = new String(out.bytes(), start, out.size() - start, StandardCharsets.US_ASCII);
                assertEquals(Double.toString(d), written, "bits " + Double.doubleToRawLongBits(d));
            }
        }
        assertTrue(plain > 90_000, "the plain path took " + plain + " of " + values.size());
    }

    /** The table column type PostgreSQL's format_type gives for the type a vector maps to. */
    private static String formatType(FieldVector v) {
        return switch (PgTypes.pgType(v.getField())) {
            case "timestamp" -> "timestamp without time zone";
            case "timestamptz" -> "timestamp with time zone";
            case String other -> other;
        };
    }

    @Test
    void repeatedKeysAreNoticed() {
        try (BufferAllocator allocator = new RootAllocator();
                BigIntVector id = new BigIntVector("id", allocator);
                VarCharVector name = new VarCharVector("name", allocator)) {
            id.allocateNew();
            name.allocateNew();
            for (int i = 0; i < 1000; i++) {
                id.setSafe(i, i == 999 ? 500 : i);
                name.setSafe(i, ("n" + i).getBytes(StandardCharsets.UTF_8));
            }
            id.setValueCount(1000);
            name.setValueCount(1000);
            try (VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, name))) {
                CopyEncoder encoder = new CopyEncoder(List.of(0, 1), new int[] {0});
                encoder.bind(root);
                CopyRows unique = new CopyRows(false);
                CopyRows repeated = new CopyRows(false);
                for (int row = 0; row < 1000; row++) {
                    encoder.append(row, (byte) 'u', row, row < 999 ? unique : repeated);
                    if (row < 999) {
                        encoder.append(row, (byte) 'u', row, repeated);
                    }
                }
                assertFalse(unique.mayRepeatKeys());
                assertTrue(repeated.mayRepeatKeys());
                // Only the key counts: the same name under different keys is no repeat.
                CopyEncoder byName = new CopyEncoder(List.of(0, 1), new int[] {1});
                byName.bind(root);
                CopyRows names = new CopyRows(false);
                for (int row = 0; row < 1000; row++) {
                    byName.append(row, (byte) 'u', row, names);
                }
                assertFalse(names.mayRepeatKeys());
                // The stage's lines carry op and place in the flush.
                String staged = new String(unique.select(List.of(3, 4)).stageStream(), StandardCharsets.UTF_8);
                assertEquals("3\tn3\tu\t0\n4\tn4\tu\t1\n", staged);
            }
        }
    }
}
