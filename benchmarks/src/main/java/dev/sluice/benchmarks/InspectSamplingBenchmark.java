package dev.sluice.benchmarks;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.observe.RowSamples;
import dev.sluice.runtime.RowSampler;
import java.nio.charset.StandardCharsets;
import java.util.Set;
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

/**
 * What live inspection's row sampling ({@code RowSampler}, called by the runtime for every batch a
 * node emits) costs per batch of a native batch (id bigint, name string, 32 bytes of text):
 * <ul>
 *   <li>{@code idle}: no take due — what nearly every batch pays;</li>
 *   <li>{@code take}: a take due every call — 3 rows encoded as JSON in the core and kept, which
 *       the defaults do 5 times per node per 30 s;</li>
 *   <li>{@code takeMasked}: the same with a mask column (each row parsed and rewritten).</li>
 * </ul>
 * Multiplied by batches per second and takes per window, this bounds sampling's share of a run,
 * which whole-pipeline runs on this machine cannot resolve below their ±10 % noise
 * ({@code benchmarks/run.sh inspect}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED"})
public class InspectSamplingBenchmark {

    @Param({"1024", "8192"})
    int rows;

    private BufferAllocator allocator;
    private NativeBatch batch;
    private RowSampler sampler;
    private RowSampler maskingSampler;
    private RowSamples neverDue;

    @Setup(Level.Trial)
    public void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("bench", 0, Long.MAX_VALUE);
        try (BigIntVector id = new BigIntVector("id", allocator);
                VarCharVector name = new VarCharVector("name", allocator)) {
            id.allocateNew(rows);
            name.allocateNew(rows * 40L, rows);
            for (int i = 0; i < rows; i++) {
                id.set(i, i);
                name.setSafe(i, ("https://www.nexmark.com/item/" + i).getBytes(StandardCharsets.UTF_8));
            }
            id.setValueCount(rows);
            name.setValueCount(rows);
            try (VectorSchemaRoot root = VectorSchemaRoot.of(id, name)) {
                batch = NativeBatch.fromVectors(allocator, root);
            }
        }
        sampler = new RowSampler(Set.of(), allocator);
        maskingSampler = new RowSampler(Set.of("name"), allocator);
        neverDue = new RowSamples(15, TimeUnit.SECONDS.toNanos(30));
        neverDue.reserve(System.nanoTime()); // the first take; none due for seconds after it
    }

    @Benchmark
    public RowSamples idle() {
        sampler.offer(neverDue, batch, rows);
        return neverDue;
    }

    @Benchmark
    public RowSamples take() {
        RowSamples due = new RowSamples(15, TimeUnit.SECONDS.toNanos(30)); // a fresh one: its first take is due
        sampler.offer(due, batch, rows);
        return due;
    }

    @Benchmark
    public RowSamples takeMasked() {
        RowSamples due = new RowSamples(15, TimeUnit.SECONDS.toNanos(30));
        maskingSampler.offer(due, batch, rows);
        return due;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        batch.close();
        allocator.close();
    }
}
