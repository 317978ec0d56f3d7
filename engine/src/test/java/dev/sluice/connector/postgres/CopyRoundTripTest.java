package dev.sluice.connector.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.TimeStampSecTZVector;
import org.apache.arrow.vector.TimeStampSecVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * Random values of every Arrow type the postgres sink writes go through its COPY encoder, in
 * text and in binary, into a real PostgreSQL, and are read back in a form the test computes from
 * the value it generated, never through the sink's own formatting: integers and decimals as
 * text, floats by their bits, text and bytes as hex, dates as days since 1970, timestamps, times
 * and intervals as microseconds. Values span each type's whole range where PostgreSQL's column
 * holds it (years BC and past 9999, NaN and subnormals, unsigned maxima, 4-byte characters).
 * {@code SLUICE_FUZZ_SEED} and {@code SLUICE_FUZZ_ROWS} reproduce a failure and scale the run.
 */
class CopyRoundTripTest {

    /** PostgreSQL's first timestamp (4714-11-24 BC) in microseconds since 1970. */
    private static final long PG_MIN_MICROS = -210_866_803_200_000_000L;
    /** PostgreSQL's first and last date (4714-11-24 BC, 5874897-12-31) in days since 1970. */
    private static final long PG_MIN_DAY = -2_440_588L;

    private static final long PG_MAX_DAY = 2_147_483_494L - 2_440_588L - 1;
    private static final long DAY_MICROS = 86_400_000_000L;

    private static final String MICROS = "trunc(extract(epoch from %s) * 1000000)::text";
    /** A timestamp's own binary form, microseconds since 2000 (extract rounds near the last year). */
    private static final String TIMESTAMP_BITS = "encode(timestamp_send(%s), 'hex')";

    private static final String TIMESTAMPTZ_BITS = "encode(timestamptz_send(%s), 'hex')";
    private static final long PG_EPOCH_MICROS = 946_684_800_000_000L;
    private static final String FLOAT4 = "CASE WHEN %1$s = 'NaN' THEN 'NaN' ELSE encode(float4send(%1$s), 'hex') END";
    private static final String FLOAT8 = "CASE WHEN %1$s = 'NaN' THEN 'NaN' ELSE encode(float8send(%1$s), 'hex') END";
    private static final String UTF8_HEX = "encode(convert_to(%s, 'UTF8'), 'hex')";

    /** A column: its vector, how to read it back ({@code %s} is the column), what must come back. */
    private record Column(FieldVector vector, String readBack, List<String> expected) {}

    private static long seed() {
        String s = System.getenv("SLUICE_FUZZ_SEED");
        return s == null || s.isBlank() ? 20_261_206L : Long.parseLong(s.trim());
    }

    private static int rows() {
        String s = System.getenv("SLUICE_FUZZ_ROWS");
        return s == null || s.isBlank() ? 3_000 : Integer.parseInt(s.trim());
    }

    @Test
    void everyTypeReadsBackAsItWasInTextAndInBinary() throws Exception {
        long seed = seed();
        int rows = rows();
        try (BufferAllocator allocator = new RootAllocator()) {
            List<Column> plain = new ArrayList<>();
            List<Column> other = new ArrayList<>();
            Random random = new Random(seed);
            plainColumns(allocator, random, rows, plain);
            otherColumns(allocator, random, rows, other);
            try {
                List<Column> all = new ArrayList<>(plain);
                all.addAll(other);
                roundTrip(all, rows, false, seed);
                roundTrip(plain, rows, false, seed);
                roundTrip(plain, rows, true, seed);
            } finally {
                plain.forEach(c -> c.vector().close());
                other.forEach(c -> c.vector().close());
            }
        }
    }

    /**
     * A value no column of its type holds is refused, never stored as another value: either the
     * encoder names it (nothing of its row written, so the row after it is intact) or the server
     * refuses the COPY with a data exception. Each case is a bad row, then a good one.
     */
    @Test
    void valuesNoColumnHoldsAreRefusedNeverChanged() throws Exception {
        long farSeconds = 10_000_000_000_000L; // past 64 bits of microseconds
        try (BufferAllocator a = new RootAllocator()) {
            refusedThenGood(
                    new TimeStampSecVector("ts_s", a),
                    v -> {
                        ((TimeStampSecVector) v).setSafe(0, farSeconds);
                        ((TimeStampSecVector) v).setSafe(1, 1);
                    },
                    TIMESTAMP_BITS,
                    sinceY2k(1_000_000L));
            refusedThenGood(
                    new TimeStampSecTZVector("tz_s", a, "UTC"),
                    v -> {
                        ((TimeStampSecTZVector) v).setSafe(0, Math.floorDiv(PG_MIN_MICROS, 1_000_000L) - 1);
                        ((TimeStampSecTZVector) v).setSafe(1, -1);
                    },
                    TIMESTAMPTZ_BITS,
                    sinceY2k(-1_000_000L));
            refusedThenGood(
                    new TimeStampMilliVector("ts_ms", a),
                    v -> {
                        ((TimeStampMilliVector) v).setSafe(0, Long.MIN_VALUE);
                        ((TimeStampMilliVector) v).setSafe(1, 1);
                    },
                    TIMESTAMP_BITS,
                    sinceY2k(1_000L));
            refusedThenGood(
                    new DateDayVector("day", a),
                    v -> {
                        ((DateDayVector) v).setSafe(0, Integer.MAX_VALUE);
                        ((DateDayVector) v).setSafe(1, -1);
                    },
                    "(%s - date '1970-01-01')::text",
                    "-1");
            refusedThenGood(
                    new DateDayVector("day_min", a),
                    v -> {
                        ((DateDayVector) v).setSafe(0, Integer.MIN_VALUE);
                        ((DateDayVector) v).setSafe(1, 2);
                    },
                    "(%s - date '1970-01-01')::text",
                    "2");
            refusedThenGood(
                    new DateMilliVector("day64", a),
                    v -> {
                        ((DateMilliVector) v).setSafe(0, Long.MAX_VALUE);
                        ((DateMilliVector) v).setSafe(1, 86_400_000L);
                    },
                    "(%s - date '1970-01-01')::text",
                    "1");
            refusedThenGood(
                    new VarCharVector("s", a),
                    v -> {
                        ((VarCharVector) v).setSafe(0, "a\0b".getBytes(StandardCharsets.UTF_8));
                        ((VarCharVector) v).setSafe(1, "ok".getBytes(StandardCharsets.UTF_8));
                    },
                    UTF8_HEX,
                    hex("ok".getBytes(StandardCharsets.UTF_8)));
            DurationVector duration =
                    new DurationVector("dur_s", FieldType.nullable(new ArrowType.Duration(TimeUnit.SECOND)), a);
            refusedThenGood(
                    duration,
                    v -> {
                        duration.setSafe(0, farSeconds);
                        duration.setSafe(1, 3);
                    },
                    MICROS,
                    "3000000");
            refusedThenGood(
                    new TimeSecVector("t_s", a),
                    v -> {
                        ((TimeSecVector) v).setSafe(0, 86_400);
                        ((TimeSecVector) v).setSafe(1, 86_399);
                    },
                    MICROS,
                    "86399000000");
            refusedThenGood(
                    new TimeMilliVector("t_ms", a),
                    v -> {
                        ((TimeMilliVector) v).setSafe(0, -1);
                        ((TimeMilliVector) v).setSafe(1, 1);
                    },
                    MICROS,
                    "1000");
            refusedThenGood(
                    new TimeMicroVector("t_us", a),
                    v -> {
                        // Times 1 000 it is 2^64 + 01:00:00.000000384: once written as that time of day.
                        ((TimeMicroVector) v).setSafe(0, 18_446_744_073_709_552L + 3_600_000_000L);
                        ((TimeMicroVector) v).setSafe(1, 5);
                    },
                    MICROS,
                    "5");
            StructVector struct = StructVector.empty("st", a);
            TimeStampSecVector inner = struct.addOrGet(
                    "ts", FieldType.nullable(new ArrowType.Timestamp(TimeUnit.SECOND, null)), TimeStampSecVector.class);
            refusedThenGood(
                    struct,
                    v -> {
                        struct.setIndexDefined(0);
                        struct.setIndexDefined(1);
                        inner.setSafe(0, farSeconds);
                        inner.setSafe(1, 2);
                    },
                    "%s->>'ts'",
                    "1970-01-01T00:00:02");
        }
    }

    /**
     * Writes rows 0 (a value no column holds) and 1 (a good one) of {@code vector}, filled by
     * {@code fill}, after an id, in text and, where the type has one, in binary.
     */
    private static void refusedThenGood(
            FieldVector vector, java.util.function.Consumer<FieldVector> fill, String readBack, String good)
            throws Exception {
        vector.allocateNew();
        fill.accept(vector);
        vector.setValueCount(2);
        try (vector;
                BufferAllocator allocator = new RootAllocator();
                BigIntVector id = new BigIntVector("id", allocator)) {
            id.allocateNew(2);
            id.set(0, 0);
            id.set(1, 1);
            id.setValueCount(2);
            List<FieldVector> vectors = List.of(id, vector);
            VectorSchemaRoot root = new VectorSchemaRoot(vectors);
            CopyBinary.Form form = CopyBinary.formFor(vector.getField(), formatType(vector));
            for (boolean binary : form == null ? new boolean[] {false} : new boolean[] {false, true}) {
                String where = vector.getName() + " (" + vector.getField().getType() + "), "
                        + (binary ? "binary" : "text") + ": ";
                CopyEncoder encoder = new CopyEncoder(List.of(0, 1), new int[] {0});
                if (binary) {
                    encoder.useBinary(new CopyBinary.Form[] {CopyBinary.Form.INT8, form});
                }
                encoder.bind(root);
                CopyRows out = encoder.newRows();
                boolean encoderRefused = false;
                try {
                    encoder.append(0, (byte) 'u', 0, out);
                } catch (CopyEncoder.UnwritableValue e) {
                    encoderRefused = true;
                    assertEquals(vector.getName(), e.column, where + e.getMessage());
                    assertTrue(
                            e.getMessage().startsWith("column " + vector.getName() + ": out of range for "),
                            where + e.getMessage());
                    assertEquals(0, out.size(), where + "the refused row left bytes behind");
                    assertEquals(0, out.rows(), where);
                    assertTrue(encoder.values(0)[1] != null, where + "the message shows the value");
                }
                encoder.append(1, (byte) 'u', 1, out);
                String table = PgTestSupport.uniqueTable("refused");
                PgTestSupport.execute("CREATE TABLE " + PgTypes.ident(table) + " (id bigint, "
                        + PgTypes.ident(vector.getName()) + " " + PgTypes.pgType(vector.getField()) + ")");
                try {
                    try {
                        copy(table, vectors, out, binary);
                        assertTrue(encoderRefused, where + "the server took a value no column of its type holds");
                    } catch (SQLException e) {
                        assertFalse(encoderRefused, where + e.getMessage());
                        assertTrue(e.getSQLState().startsWith("22"), where + e.getSQLState() + " " + e.getMessage());
                        // Without the refused row, the good one goes in alone.
                        out = encoder.newRows();
                        encoder.append(1, (byte) 'u', 1, out);
                        copy(table, vectors, out, binary);
                    }
                    assertEquals(
                            List.of("1|" + good),
                            PgTestSupport.rows("SELECT id, " + readBack.formatted(PgTypes.ident(vector.getName()))
                                    + " FROM " + PgTypes.ident(table)),
                            where);
                } finally {
                    PgTestSupport.execute("DROP TABLE " + PgTypes.ident(table));
                }
            }
        }
    }

    /** Writes {@code columns} (after an id column) into a new table and compares what comes back. */
    private static void roundTrip(List<Column> columns, int rows, boolean binary, long seed) throws Exception {
        String table = PgTestSupport.uniqueTable("roundtrip");
        String where = (binary ? "binary" : "text") + " COPY of " + columns.size() + " columns, seed " + seed;
        try (BufferAllocator allocator = new RootAllocator();
                BigIntVector id = new BigIntVector("id", allocator)) {
            id.allocateNew(rows);
            for (int r = 0; r < rows; r++) {
                id.set(r, r);
            }
            id.setValueCount(rows);
            List<FieldVector> vectors = new ArrayList<>();
            vectors.add(id);
            columns.forEach(c -> vectors.add(c.vector()));
            VectorSchemaRoot root = new VectorSchemaRoot(vectors);
            String ddl = vectors.stream()
                    .map(v -> PgTypes.ident(v.getName()) + " " + PgTypes.pgType(v.getField()))
                    .collect(Collectors.joining(", "));
            PgTestSupport.execute("CREATE TABLE " + PgTypes.ident(table) + " (" + ddl + ")");
            try {
                CopyEncoder encoder = new CopyEncoder(
                        IntStream.range(0, vectors.size()).boxed().toList(), new int[] {0});
                if (binary) {
                    encoder.useBinary(vectors.stream()
                            .map(v -> CopyBinary.formFor(v.getField(), formatType(v)))
                            .toArray(CopyBinary.Form[]::new));
                }
                encoder.bind(root);
                CopyRows out = encoder.newRows();
                for (int r = 0; r < rows; r++) {
                    encoder.append(r, (byte) 'u', r, out);
                }
                copy(table, vectors, out, binary);
                compare(table, columns, rows, where);
            } finally {
                PgTestSupport.execute("DROP TABLE " + PgTypes.ident(table));
            }
        }
    }

    /** The type {@code format_type} names for the column {@link PgTypes#pgType} makes. */
    private static String formatType(FieldVector v) {
        String pg = PgTypes.pgType(v.getField());
        return switch (pg) {
            case "timestamp" -> "timestamp without time zone";
            case "timestamptz" -> "timestamp with time zone";
            default -> pg;
        };
    }

    private static void copy(String table, List<FieldVector> vectors, CopyRows out, boolean binary)
            throws SQLException {
        String columns = vectors.stream().map(v -> PgTypes.ident(v.getName())).collect(Collectors.joining(", "));
        try (Connection c = PgTestSupport.connect()) {
            CopyIn copy = c.unwrap(PGConnection.class)
                    .getCopyAPI()
                    .copyIn("COPY " + PgTypes.ident(table) + " (" + columns + ") FROM STDIN"
                            + (binary ? " (FORMAT binary)" : ""));
            if (binary) {
                copy.writeToCopy(CopyRows.BINARY_HEADER, 0, CopyRows.BINARY_HEADER.length);
            }
            copy.writeToCopy(out.bytes(), 0, out.size());
            if (binary) {
                copy.writeToCopy(CopyRows.BINARY_TRAILER, 0, CopyRows.BINARY_TRAILER.length);
            }
            copy.endCopy();
        }
    }

    private static void compare(String table, List<Column> columns, int rows, String where) throws SQLException {
        String select = columns.stream()
                .map(c -> c.readBack().formatted(PgTypes.ident(c.vector().getName())))
                .collect(Collectors.joining(", "));
        try (Connection c = PgTestSupport.connect();
                Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT id, " + select + " FROM " + PgTypes.ident(table) + " ORDER BY id")) {
            int row = 0;
            while (rs.next()) {
                assertEquals(row, rs.getLong(1), where + ": rows missing before id " + rs.getLong(1));
                for (int i = 0; i < columns.size(); i++) {
                    Column column = columns.get(i);
                    String expected = column.expected().get(row);
                    String actual = rs.getString(i + 2);
                    if (!java.util.Objects.equals(expected, actual)) {
                        fail(where + ": column " + column.vector().getName() + " ("
                                + column.vector().getField().getType() + "), row " + row + ": wrote "
                                + PgTypes.text(column.vector()).apply(row) + ", expected " + expected
                                + " back, read " + actual);
                    }
                }
                row++;
            }
            assertEquals(rows, row, where + ": rows read back");
        }
    }

    // ---- the values ---------------------------------------------------------------------------

    /** One in ten values is null; one in five of the rest is an edge of the type. */
    private static <V extends FieldVector> Column column(
            V vector, int rows, Random random, String readBack, BiConsumer<Integer, List<String>> fill) {
        vector.allocateNew();
        List<String> expected = new ArrayList<>(rows);
        for (int r = 0; r < rows; r++) {
            if (random.nextInt(10) == 0) {
                expected.add(null); // the vector's validity bit stays unset
            } else {
                fill.accept(r, expected);
            }
        }
        vector.setValueCount(rows);
        return new Column(vector, readBack, expected);
    }

    private static long pick(Random random, long[] edges, long min, long max) {
        if (random.nextInt(5) == 0) {
            return edges[random.nextInt(edges.length)];
        }
        // In doubles: the span of a whole long's range does not fit a long. The cast saturates.
        return (long) Math.min((double) max, min + random.nextDouble() * ((double) max - (double) min));
    }

    private static long anyLong(Random random, long min, long max) {
        long[] edges = java.util.stream.LongStream.of(min, max, 0, -1, 1, min + 1, max - 1)
                .filter(e -> e >= min && e <= max)
                .toArray();
        return pick(random, edges, min, max);
    }

    private static final String[] CHARACTERS = {
        "a", "Z", "0", " ", "\t", "\n", "\r", "\\", "\"", "'", ",", "{", "}", "N", "\\N", "é", "ß", "✓", "€", "中", "😀",
        "𠀀", "\u007f", "\u0080", "\u2028", "\uffff", "\u0001", "\u001f", "NULL", "null"
    };

    private static String anyText(Random random) {
        StringBuilder s = new StringBuilder();
        int length = random.nextInt(4) == 0 ? 0 : random.nextInt(12);
        for (int i = 0; i < length; i++) {
            s.append(CHARACTERS[random.nextInt(CHARACTERS.length)]);
        }
        return s.toString();
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    private static String floatBits(float f) {
        return Float.isNaN(f) ? "NaN" : "%08x".formatted(Float.floatToRawIntBits(f));
    }

    private static String doubleBits(double d) {
        return Double.isNaN(d) ? "NaN" : "%016x".formatted(Double.doubleToRawLongBits(d));
    }

    /** A float of any shape: random bits (NaNs, infinities, subnormals, -0 among them) or an edge. */
    private static double anyDouble(Random random) {
        double[] edges = {
            0.0,
            -0.0,
            Double.MIN_VALUE,
            -Double.MIN_VALUE,
            Double.MAX_VALUE,
            Double.NaN,
            Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY,
            0.1,
            1e-310,
            123.456,
            1e7,
            9_999_999.999
        };
        return switch (random.nextInt(3)) {
            case 0 -> edges[random.nextInt(edges.length)];
            case 1 -> Math.rint(random.nextGaussian() * 1e6) / 1000;
            default -> Double.longBitsToDouble(random.nextLong());
        };
    }

    private static void plainColumns(BufferAllocator a, Random random, int rows, List<Column> out) {
        TinyIntVector i8 = new TinyIntVector("i8", a);
        out.add(column(i8, rows, random, "%s::text", (r, e) -> {
            byte v = (byte) anyLong(random, Byte.MIN_VALUE, Byte.MAX_VALUE);
            i8.setSafe(r, v);
            e.add(Byte.toString(v));
        }));
        SmallIntVector i16 = new SmallIntVector("i16", a);
        out.add(column(i16, rows, random, "%s::text", (r, e) -> {
            short v = (short) anyLong(random, Short.MIN_VALUE, Short.MAX_VALUE);
            i16.setSafe(r, v);
            e.add(Short.toString(v));
        }));
        IntVector i32 = new IntVector("i32", a);
        out.add(column(i32, rows, random, "%s::text", (r, e) -> {
            int v = (int) anyLong(random, Integer.MIN_VALUE, Integer.MAX_VALUE);
            i32.setSafe(r, v);
            e.add(Integer.toString(v));
        }));
        BigIntVector i64 = new BigIntVector("i64", a);
        out.add(column(i64, rows, random, "%s::text", (r, e) -> {
            long v = random.nextBoolean() ? random.nextLong() : anyLong(random, Long.MIN_VALUE, Long.MAX_VALUE);
            i64.setSafe(r, v);
            e.add(Long.toString(v));
        }));
        UInt1Vector u8 = new UInt1Vector("u8", a);
        out.add(column(u8, rows, random, "%s::text", (r, e) -> {
            int v = (int) anyLong(random, 0, 255);
            u8.setSafe(r, v);
            e.add(Integer.toString(v));
        }));
        UInt2Vector u16 = new UInt2Vector("u16", a);
        out.add(column(u16, rows, random, "%s::text", (r, e) -> {
            int v = (int) anyLong(random, 0, 65_535);
            u16.setSafe(r, v);
            e.add(Integer.toString(v));
        }));
        UInt4Vector u32 = new UInt4Vector("u32", a);
        out.add(column(u32, rows, random, "%s::text", (r, e) -> {
            long v = anyLong(random, 0, 0xFFFF_FFFFL);
            u32.setSafe(r, (int) v);
            e.add(Long.toString(v));
        }));
        Float2Vector f16 = new Float2Vector("f16", a);
        out.add(column(f16, rows, random, FLOAT4, (r, e) -> {
            short bits = (short) random.nextInt();
            f16.setSafe(r, bits);
            e.add(floatBits(Float.float16ToFloat(bits)));
        }));
        Float4Vector f32 = new Float4Vector("f32", a);
        out.add(column(f32, rows, random, FLOAT4, (r, e) -> {
            float v = random.nextBoolean() ? Float.intBitsToFloat(random.nextInt()) : (float) anyDouble(random);
            f32.setSafe(r, v);
            e.add(floatBits(v));
        }));
        Float8Vector f64 = new Float8Vector("f64", a);
        out.add(column(f64, rows, random, FLOAT8, (r, e) -> {
            double v = anyDouble(random);
            f64.setSafe(r, v);
            e.add(doubleBits(v));
        }));
        BitVector flag = new BitVector("flag", a);
        out.add(column(flag, rows, random, "%s::text", (r, e) -> {
            boolean v = random.nextBoolean();
            flag.setSafe(r, v ? 1 : 0);
            e.add(v ? "true" : "false");
        }));
        VarCharVector s = new VarCharVector("s", a);
        out.add(column(s, rows, random, UTF8_HEX, (r, e) -> {
            byte[] v = anyText(random).getBytes(StandardCharsets.UTF_8);
            s.setSafe(r, v);
            e.add(hex(v));
        }));
        LargeVarCharVector ls = new LargeVarCharVector("ls", a);
        out.add(column(ls, rows, random, UTF8_HEX, (r, e) -> {
            byte[] v = anyText(random).getBytes(StandardCharsets.UTF_8);
            ls.setSafe(r, v);
            e.add(hex(v));
        }));
        VarBinaryVector bin = new VarBinaryVector("bin", a);
        out.add(column(bin, rows, random, "encode(%s, 'hex')", (r, e) -> {
            byte[] v = new byte[random.nextInt(9)];
            random.nextBytes(v);
            bin.setSafe(r, v);
            e.add(hex(v));
        }));
        FixedSizeBinaryVector fixed = new FixedSizeBinaryVector("fixed", a, 3);
        out.add(column(fixed, rows, random, "encode(%s, 'hex')", (r, e) -> {
            byte[] v = new byte[3];
            random.nextBytes(v);
            fixed.setSafe(r, v);
            e.add(hex(v));
        }));
        long[] dayEdges = {PG_MIN_DAY, PG_MAX_DAY, 0, -1, -719_162, -719_163, -719_528, 2_932_896, 2_932_897};
        DateDayVector day = new DateDayVector("day", a);
        out.add(column(day, rows, random, "(%s - date '1970-01-01')::text", (r, e) -> {
            long v = random.nextBoolean()
                    ? pick(random, dayEdges, -800_000, 3_000_000)
                    : pick(random, dayEdges, PG_MIN_DAY, PG_MAX_DAY);
            day.setSafe(r, (int) v);
            e.add(Long.toString(v));
        }));
        DateMilliVector day64 = new DateMilliVector("day64", a);
        out.add(column(day64, rows, random, "(%s - date '1970-01-01')::text", (r, e) -> {
            long v = pick(random, dayEdges, PG_MIN_DAY, PG_MAX_DAY);
            day64.setSafe(r, v * 86_400_000L);
            e.add(Long.toString(v));
        }));
        out.add(timestamps(new TimeStampSecVector("ts_s", a), 1_000_000L, rows, random));
        out.add(timestamps(new TimeStampMilliVector("ts_ms", a), 1_000L, rows, random));
        out.add(timestamps(new TimeStampMicroVector("ts_us", a), 1L, rows, random));
        out.add(timestamps(new TimeStampNanoVector("ts_ns", a), 0L, rows, random));
        out.add(timestamps(new TimeStampSecTZVector("tz_s", a, "America/New_York"), 1_000_000L, rows, random));
        out.add(timestamps(new TimeStampMilliTZVector("tz_ms", a, "+05:30"), 1_000L, rows, random));
        out.add(timestamps(new TimeStampMicroTZVector("tz_us", a, "UTC"), 1L, rows, random));
    }

    /**
     * Timestamps of a unit {@code perUnit} microseconds long (0: nanoseconds), anywhere PostgreSQL
     * holds them: it keeps microseconds, so nanoseconds are expected cut to the microsecond below.
     */
    private static Column timestamps(org.apache.arrow.vector.TimeStampVector v, long perUnit, int rows, Random random) {
        long min = perUnit == 0 ? Long.MIN_VALUE : Math.ceilDiv(PG_MIN_MICROS, perUnit);
        long max = perUnit == 0 ? Long.MAX_VALUE : Long.MAX_VALUE / perUnit;
        long near = perUnit == 0 ? 4_102_444_800_000_000_000L : 4_102_444_800_000_000L / perUnit; // 2100
        boolean zoned = ((ArrowType.Timestamp) v.getField().getType()).getTimezone() != null;
        return column(v, rows, random, zoned ? TIMESTAMPTZ_BITS : TIMESTAMP_BITS, (r, e) -> {
            long[] edges = {min, max, 0, -1, 1, near, -near};
            long value = random.nextBoolean() ? pick(random, edges, -near, near) : pick(random, edges, min, max);
            v.setSafe(r, value);
            e.add(sinceY2k(perUnit == 0 ? Math.floorDiv(value, 1_000L) : value * perUnit));
        });
    }

    private static String sinceY2k(long micros) {
        return "%016x".formatted(micros - PG_EPOCH_MICROS);
    }

    private static void otherColumns(BufferAllocator a, Random random, int rows, List<Column> out) {
        UInt8Vector u64 = new UInt8Vector("u64", a);
        out.add(column(u64, rows, random, "%s::text", (r, e) -> {
            long v = random.nextBoolean() ? random.nextLong() : anyLong(random, Long.MIN_VALUE, Long.MAX_VALUE);
            u64.setSafe(r, v);
            e.add(Long.toUnsignedString(v));
        }));
        out.add(decimals(new DecimalVector("dec", a, 38, 10), 38, 10, rows, random));
        out.add(decimals(new DecimalVector("dec_small", a, 9, 2), 9, 2, rows, random));
        out.add(decimals(new Decimal256Vector("dec256", a, 60, 20), 60, 20, rows, random));
        out.add(times(new TimeSecVector("t_s", a), 1_000_000L, rows, random));
        out.add(times(new TimeMilliVector("t_ms", a), 1_000L, rows, random));
        out.add(times(new TimeMicroVector("t_us", a), 1L, rows, random));
        out.add(times(new TimeNanoVector("t_ns", a), 0L, rows, random));
        for (TimeUnit unit : TimeUnit.values()) {
            out.add(durations(a, unit, rows, random));
        }
        out.add(longLists(a, rows, random));
        out.add(textLists(a, rows, random));
        out.add(structs(a, rows, random));
    }

    private static Column decimals(FieldVector v, int precision, int scale, int rows, Random random) {
        BigInteger bound = BigInteger.TEN.pow(precision);
        return column(v, rows, random, "%s::text", (r, e) -> {
            BigInteger unscaled = random.nextInt(5) == 0
                    ? bound.subtract(BigInteger.ONE).multiply(BigInteger.valueOf(random.nextBoolean() ? 1 : -1))
                    : new BigInteger(bound.bitLength() + 8, random).mod(bound);
            if (random.nextBoolean()) {
                unscaled = unscaled.negate();
            }
            BigDecimal value = new BigDecimal(unscaled, scale);
            if (v instanceof DecimalVector d) {
                d.setSafe(r, value);
            } else {
                ((Decimal256Vector) v).setSafe(r, value);
            }
            e.add(value.toPlainString());
        });
    }

    /** Times of day; nanoseconds expected cut to the microsecond below, as timestamps are. */
    private static Column times(FieldVector v, long perUnit, int rows, Random random) {
        long units = perUnit == 0 ? DAY_MICROS * 1_000 : DAY_MICROS / perUnit;
        return column(v, rows, random, MICROS, (r, e) -> {
            long value = pick(random, new long[] {0, 1, units - 1, units / 2}, 0, units);
            switch (v) {
                case TimeSecVector t -> t.setSafe(r, (int) value);
                case TimeMilliVector t -> t.setSafe(r, (int) value);
                case TimeMicroVector t -> t.setSafe(r, value);
                case TimeNanoVector t -> t.setSafe(r, value);
                default -> throw new IllegalStateException(v.toString());
            }
            e.add(Long.toString(perUnit == 0 ? value / 1_000 : value * perUnit));
        });
    }

    private static Column durations(BufferAllocator a, TimeUnit unit, int rows, Random random) {
        long perUnit = switch (unit) {
            case SECOND -> 1_000_000L;
            case MILLISECOND -> 1_000L;
            case MICROSECOND -> 1L;
            case NANOSECOND -> 0L;
        };
        DurationVector v = new DurationVector(
                "dur_" + unit.name().toLowerCase(java.util.Locale.ROOT),
                FieldType.nullable(new ArrowType.Duration(unit)),
                a);
        long max = perUnit == 0 ? Long.MAX_VALUE : Long.MAX_VALUE / perUnit;
        return column(v, rows, random, MICROS, (r, e) -> {
            long value = random.nextBoolean() ? anyLong(random, -max, max) : random.nextInt() / 7;
            v.setSafe(r, value);
            // Nanoseconds cut toward zero, as a cast of a duration (timestamps are floored).
            e.add(Long.toString(perUnit == 0 ? value / 1_000L : value * perUnit));
        });
    }

    private static Column longLists(BufferAllocator a, int rows, Random random) {
        return lists(a, "longs", new ArrowType.Int(64, true), "array_to_string(%s, ',', 'N')", rows, random, (v, i) -> {
            long value = anyLong(random, Long.MIN_VALUE, Long.MAX_VALUE);
            ((BigIntVector) v).setSafe(i, value);
            return Long.toString(value);
        });
    }

    private static Column textLists(BufferAllocator a, int rows, Random random) {
        String readBack =
                "CASE WHEN %1$s IS NULL THEN NULL ELSE coalesce((SELECT string_agg(coalesce(" + UTF8_HEX.formatted("e")
                        + ", 'N'), ',' ORDER BY o) FROM unnest(%1$s) WITH ORDINALITY AS u(e, o)), '') END";
        return lists(a, "texts", new ArrowType.Utf8(), readBack, rows, random, (v, i) -> {
            byte[] value = anyText(random).getBytes(StandardCharsets.UTF_8);
            ((VarCharVector) v).setSafe(i, value);
            return hex(value);
        });
    }

    /**
     * A list column of up to three {@code element}s a row, a quarter of them NULL (left unset);
     * {@code set} sets one element and gives its expected text. Read back joined by commas, N for
     * NULL.
     */
    private static Column lists(
            BufferAllocator a,
            String name,
            ArrowType element,
            String readBack,
            int rows,
            Random random,
            java.util.function.BiFunction<FieldVector, Integer, String> set) {
        ListVector list = ListVector.empty(name, a);
        list.addOrGetVector(FieldType.nullable(element));
        FieldVector values = list.getDataVector();
        return column(list, rows, random, readBack, (r, e) -> {
            int start = list.startNewValue(r);
            int n = random.nextInt(4);
            List<String> items = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                items.add(random.nextInt(4) == 0 ? "N" : set.apply(values, start + i));
            }
            list.endValue(r, n);
            values.setValueCount(start + n);
            e.add(String.join(",", items));
        });
    }

    /** A struct becomes a jsonb object; its fields are read back one by one. */
    private static Column structs(BufferAllocator a, int rows, Random random) {
        StructVector struct = StructVector.empty("st", a);
        BigIntVector n = struct.addOrGet("n", FieldType.nullable(new ArrowType.Int(64, true)), BigIntVector.class);
        VarCharVector text = struct.addOrGet("s", FieldType.nullable(new ArrowType.Utf8()), VarCharVector.class);
        Float8Vector f = struct.addOrGet(
                "f",
                FieldType.nullable(
                        new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE)),
                Float8Vector.class);
        TimeStampSecVector ts = struct.addOrGet(
                "ts", FieldType.nullable(new ArrowType.Timestamp(TimeUnit.SECOND, null)), TimeStampSecVector.class);
        // jsonb has no negative zero: -0.0 comes back as 0, so floats are compared by value.
        String readBack = "CASE WHEN %1$s IS NULL THEN NULL ELSE concat_ws('|', coalesce(%1$s->>'n', 'N'), coalesce("
                + UTF8_HEX.formatted("%1$s->>'s'")
                + ", 'N'), coalesce(" + FLOAT8.formatted("((%1$s->>'f')::float8 + 0.0)") + ", 'N'), coalesce("
                + TIMESTAMP_BITS.formatted("(%1$s->>'ts')::timestamp") + ", 'N')) END";
        long minSeconds = Math.ceilDiv(PG_MIN_MICROS, 1_000_000L);
        return column(struct, rows, random, readBack, (r, e) -> {
            struct.setIndexDefined(r);
            List<String> fields = new ArrayList<>();
            if (random.nextInt(5) == 0) {
                fields.add("N");
            } else {
                long v = anyLong(random, Long.MIN_VALUE, Long.MAX_VALUE);
                n.setSafe(r, v);
                fields.add(Long.toString(v));
            }
            if (random.nextInt(5) == 0) {
                fields.add("N");
            } else {
                byte[] v = anyText(random).getBytes(StandardCharsets.UTF_8);
                text.setSafe(r, v);
                fields.add(hex(v));
            }
            if (random.nextInt(5) == 0) {
                fields.add("N");
            } else {
                double v = anyDouble(random);
                f.setSafe(r, v);
                fields.add(doubleBits(v == 0 ? 0.0 : v));
            }
            if (random.nextInt(5) == 0) {
                fields.add("N");
            } else {
                long v = anyLong(random, minSeconds, Long.MAX_VALUE / 1_000_000L);
                ts.setSafe(r, v);
                fields.add(sinceY2k(v * 1_000_000L));
            }
            n.setValueCount(r + 1);
            text.setValueCount(r + 1);
            f.setValueCount(r + 1);
            ts.setValueCount(r + 1);
            e.add(String.join("|", fields));
        });
    }
}
