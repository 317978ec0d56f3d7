package dev.sluice.benchmarks;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.CSchemaLayout;
import dev.sluice.bridge.CoreBridge;
import dev.sluice.bridge.DirectExport;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeCore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One Arrow Java batch of Nexmark bids ({@code auction, bidder, price BIGINT, channel, url
 * VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR}) handed to the core through the C Data
 * Interface, two ways:
 * <ul>
 *   <li>{@code arrowJava*}: Arrow Java's {@code Data.exportVectorSchemaRoot};</li>
 *   <li>{@code direct*}: {@link DirectExport}, which writes the C structs with FFM.</li>
 * </ul>
 * {@code *RoundTrip} is what the engine pays per batch: export array and schema, import into
 * the core ({@code sluice_batch_import}, which moves both), free the native batch (which calls
 * the array's release). The Arrow Java variant is the engine's former {@code NativeBatch.fromVectors}
 * (struct memory allocated per call); the direct one is today's. {@code *ExportRelease} is the
 * export alone: written into reused structs, then released through their callbacks as a
 * consumer would, without the core.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED"})
public class ExportPathBenchmark {

    @Param({"ffm"})
    String bridge;

    @Param({"1", "1024", "8192", "65536"})
    int rows;

    private BufferAllocator allocator;
    private VectorSchemaRoot root;
    private CoreBridge core;
    private Arena arena;
    private MemorySegment arraySlot;
    private MemorySegment schemaSlot;
    private ArrowArray arrowJavaArray;
    private ArrowSchema arrowJavaSchema;

    @Setup(Level.Trial)
    public void setUp() {
        NativeCore.select(bridge);
        core = NativeCore.bridge();
        if (!core.name().equals(bridge)) {
            throw new IllegalStateException("asked for the " + bridge + " bridge, got " + core.name());
        }
        allocator = ArrowC.rootAllocator().newChildAllocator("export-path", 0, Long.MAX_VALUE);
        root = bids(allocator, rows);
        if (!DirectExport.supports(root.getSchema())) {
            throw new IllegalStateException("DirectExport does not write " + root.getSchema());
        }
        arena = Arena.ofConfined();
        arraySlot = arena.allocate(DirectExport.ARRAY_SIZE, 8);
        schemaSlot = arena.allocate(CSchemaLayout.SIZE, 8);
        arrowJavaArray = ArrowArray.allocateNew(allocator);
        arrowJavaSchema = ArrowSchema.allocateNew(allocator);
    }

    /** Nexmark's bid columns, not nullable as the generator makes them, with bid-like values. */
    static VectorSchemaRoot bids(BufferAllocator allocator, int rows) {
        ArrowType bigint = new ArrowType.Int(64, true);
        Schema schema = new Schema(List.of(
                Field.notNullable("auction", bigint),
                Field.notNullable("bidder", bigint),
                Field.notNullable("price", bigint),
                Field.notNullable("channel", ArrowType.Utf8.INSTANCE),
                Field.notNullable("url", ArrowType.Utf8.INSTANCE),
                Field.notNullable(
                        "dateTime", new ArrowType.Timestamp(org.apache.arrow.vector.types.TimeUnit.MILLISECOND, null)),
                Field.notNullable("extra", ArrowType.Utf8.INSTANCE)));
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
        root.allocateNew();
        BigIntVector auction = (BigIntVector) root.getVector(0);
        BigIntVector bidder = (BigIntVector) root.getVector(1);
        BigIntVector price = (BigIntVector) root.getVector(2);
        VarCharVector channel = (VarCharVector) root.getVector(3);
        VarCharVector url = (VarCharVector) root.getVector(4);
        TimeStampMilliVector dateTime = (TimeStampMilliVector) root.getVector(5);
        VarCharVector extra = (VarCharVector) root.getVector(6);
        for (int i = 0; i < rows; i++) {
            auction.setSafe(i, 1000 + i % 97);
            bidder.setSafe(i, 1000 + i % 1013);
            price.setSafe(i, 100 + (i * 31L) % 10_000);
            channel.setSafe(i, ("channel-" + i % 4).getBytes(StandardCharsets.UTF_8));
            url.setSafe(
                    i,
                    ("https://www.nexmark.com/item.htm?query=1&channel_id=" + i % 4).getBytes(StandardCharsets.UTF_8));
            dateTime.setSafe(i, 1_700_000_000_000L + i);
            extra.setSafe(i, new byte[0]);
        }
        root.setRowCount(rows);
        for (FieldVector v : root.getFieldVectors()) {
            v.setValueCount(rows);
        }
        return root;
    }

    @Benchmark
    public long arrowJavaRoundTrip() {
        try (ArrowArray array = ArrowArray.allocateNew(allocator);
                ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            Data.exportVectorSchemaRoot(allocator, root, null, array, schema);
            long batch = core.batchImport(array.memoryAddress(), schema.memoryAddress());
            core.batchFree(batch);
            return batch;
        }
    }

    @Benchmark
    public long directRoundTrip() {
        try (NativeBatch batch = NativeBatch.fromVectors(allocator, root)) {
            return batch.handle();
        }
    }

    @Benchmark
    public void arrowJavaExportRelease() {
        Data.exportVectorSchemaRoot(allocator, root, null, arrowJavaArray, arrowJavaSchema);
        DirectExport.releaseIfSet(MemorySegment.ofAddress(arrowJavaArray.memoryAddress()));
        DirectExport.releaseSchemaIfSet(MemorySegment.ofAddress(arrowJavaSchema.memoryAddress()));
    }

    @Benchmark
    public void directExportRelease() {
        DirectExport.export(allocator, root, arraySlot, schemaSlot);
        DirectExport.releaseIfSet(arraySlot);
        DirectExport.releaseSchemaIfSet(schemaSlot);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arrowJavaArray.close();
        arrowJavaSchema.close();
        arena.close();
        root.close();
        allocator.close();
    }
}
