package dev.sluice.benchmarks;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeCore;
import dev.sluice.bridge.NativeTransform;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * Cost of one batch through a trivial SQL transform ({@code SELECT id, name FROM t}) over each
 * bridge ({@code bridge}: ffm or jni, see {@code NativeCore}), at several batch sizes:
 * <ul>
 *   <li>{@code javaBatch}: an Arrow Java batch exported through the C Data Interface, pushed,
 *       and the output drained and freed — the path of a Java source or plugin;</li>
 *   <li>{@code nativeBatch}: a batch already in the core (as the generator, file and Kafka
 *       sources produce) pushed and drained — the bridge's own per-batch cost.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED"})
public class TransformPushBenchmark {

    @Param({"ffm", "jni"})
    String bridge;

    @Param({"1", "1024", "8192", "65536"})
    int rows;

    private BufferAllocator allocator;
    private VectorSchemaRoot root;
    private NativeBatch nativeBatch;
    private NativeTransform transform;

    @Setup(Level.Trial)
    public void setUp() {
        NativeCore.select(bridge);
        if (!NativeCore.bridge().name().equals(bridge)) {
            throw new IllegalStateException("asked for the " + bridge + " bridge, got "
                    + NativeCore.bridge().name());
        }
        allocator = ArrowC.rootAllocator().newChildAllocator("bench", 0, Long.MAX_VALUE);
        BigIntVector id = new BigIntVector("id", allocator);
        VarCharVector name = new VarCharVector("name", allocator);
        id.allocateNew(rows);
        name.allocateNew(rows * 12L, rows);
        for (int i = 0; i < rows; i++) {
            id.set(i, i);
            name.setSafe(i, ("name-" + i).getBytes(StandardCharsets.UTF_8));
        }
        id.setValueCount(rows);
        name.setValueCount(rows);
        root = VectorSchemaRoot.of(id, name);
        nativeBatch = NativeBatch.fromVectors(allocator, root);
        transform = NativeTransform.plan(allocator, "SELECT id, name FROM t", List.of("t"), List.of(root.getSchema()));
    }

    @Benchmark
    public long javaBatch(Blackhole bh) {
        transform.push(0, root);
        return drain(bh);
    }

    @Benchmark
    public long nativeBatch(Blackhole bh) {
        transform.push(0, nativeBatch);
        return drain(bh);
    }

    private long drain(Blackhole bh) {
        long total = 0;
        for (NativeBatch out = transform.drain(); out != null; out = transform.drain()) {
            total += out.rowCount();
            bh.consume(out);
            out.close();
        }
        return total;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        transform.close();
        nativeBatch.close();
        root.close();
        allocator.close();
    }
}
