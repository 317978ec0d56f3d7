package dev.sluice.benchmarks;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeCore;
import dev.sluice.bridge.NativeFunctions;
import dev.sluice.bridge.NativeTransform;
import dev.sluice.ffm.plugin.SluiceScalarUdf;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.ScalarFunction;
import dev.sluice.pluginhost.JavaFunction;
import dev.sluice.pluginhost.PluginLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
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
 * Per-batch cost of one scalar function in a SQL transform (push a native batch of one Float64
 * column, drain the result), the same clamp computed five ways:
 * <ul>
 *   <li>{@code builtin}: DataFusion's own {@code least(greatest(x, 0.25), 0.75)};</li>
 *   <li>{@code native_c}: {@code c_clamp} of the C example plugin, called by DataFusion through
 *       its function pointer;</li>
 *   <li>{@code java}: a Java {@link ScalarFunction} reached through an FFM upcall stub;</li>
 *   <li>{@code jni}: the same Java function reached through a JNI callback instead: its
 *       {@code SluiceScalarUdf.invoke} is {@code sluice_bench_jni_udf_invoke} of the
 *       benchmark-only {@code libsluice_bench.so} (rust/bench-abi), which calls
 *       {@link Jni#invoke} with {@code CallStaticIntMethodA}, the pointers passed as longs;</li>
 *   <li>{@code java_identity} and {@code jni_identity} against {@code builtin_identity}
 *       ({@code SELECT x}): a Java UDF that hands its argument back, which is the crossing (upcall
 *       or JNI callback) and the Arrow import/export alone.</li>
 * </ul>
 * The plugin library comes from {@code -Dsluice.bench.plugins=DIR} (default
 * {@code engine/target/plugins}, written by the engine's build).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED"})
public class UdfBenchmark {

    private static final Map<String, String> SQL = Map.of(
            "builtin", "SELECT least(greatest(x, 0.25), 0.75) AS y FROM t",
            "native_c", "SELECT c_clamp(x, 0.25, 0.75) AS y FROM t",
            "java", "SELECT java_clamp(x, 0.25, 0.75) AS y FROM t",
            "jni", "SELECT jni_clamp(x, 0.25, 0.75) AS y FROM t",
            "builtin_identity", "SELECT x AS y FROM t",
            "java_identity", "SELECT java_identity(x) AS y FROM t",
            "jni_identity", "SELECT jni_identity(x) AS y FROM t");

    @Param({"builtin", "native_c", "java", "jni", "builtin_identity", "java_identity", "jni_identity"})
    String variant;

    @Param({"1024", "65536"})
    int rows;

    private BufferAllocator allocator;
    private Arena arena;
    private NativeFunctions functions;
    private NativeBatch batch;
    private NativeTransform transform;

    @Setup(Level.Trial)
    public void setUp() {
        NativeCore.select("ffm");
        allocator = ArrowC.rootAllocator().newChildAllocator("bench", 0, Long.MAX_VALUE);
        arena = Arena.ofShared();
        functions = NativeFunctions.create();
        Path dir = Path.of(System.getProperty("sluice.bench.plugins", "engine/target/plugins"));
        PluginLibrary c =
                PluginLibrary.load(dir.resolve("libsluice_c_example.so").toAbsolutePath());
        PluginLibrary.Component clamp = c.component(sluice_plugin_h.SLUICE_COMPONENT_SCALAR_UDF(), "c_clamp")
                .orElseThrow();
        functions.addScalar("c_clamp", clamp.vtable(), c.freeString());
        List<ScalarFunction> javaFunctions = List.of(new JavaClamp(), new JavaIdentity());
        for (int i = 0; i < javaFunctions.size(); i++) {
            JavaFunction java = new JavaFunction(javaFunctions.get(i), allocator, arena);
            functions.addScalar(java.name(), java.descriptor(), JavaFunction.FREE);
            functions.addScalar(
                    java.name().replace("java_", "jni_"), Jni.descriptor(java, i, arena), JavaFunction.FREE);
        }
        Float8Vector x = new Float8Vector("x", allocator);
        x.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
            x.set(i, (i % 1000) / 1000.0);
        }
        x.setValueCount(rows);
        try (VectorSchemaRoot root = VectorSchemaRoot.of(x)) {
            batch = NativeBatch.fromVectors(allocator, root);
            transform = NativeTransform.plan(
                    allocator, SQL.get(variant), List.of("t"), List.of(root.getSchema()), List.of(), functions);
        }
    }

    @Benchmark
    public long batch(Blackhole bh) {
        transform.push(0, batch);
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
        batch.close();
        functions.close();
        arena.close();
        allocator.close();
    }

    /**
     * The JNI callback variant: the same {@link JavaFunction}s, called from
     * {@code sluice_bench_jni_udf_invoke} (rust/bench-abi) through JNI rather than from an FFM
     * upcall stub. Benchmark only: the engine reaches Java UDFs through upcall stubs.
     */
    static final class Jni {
        /** The functions by index, the descriptor's {@code state}; set before a plan can call them. */
        private static final JavaFunction[] TARGETS = new JavaFunction[2];

        private static final MemorySegment INVOKE;

        static {
            CallShapeBenchmark.loadLibrary();
            if (register() != 0) {
                throw new IllegalStateException("sluice_bench could not register UdfBenchmark.Jni");
            }
            INVOKE = lookup("sluice_bench_jni_udf_invoke");
        }

        private Jni() {}

        /** Stores the JVM, this class and {@link #invoke}'s method ID in the native library. */
        private static native int register();

        /** Called by {@code sluice_bench_jni_udf_invoke} through JNI, every pointer as a long. */
        static int invoke(long state, long args, long rows, long out, long error) {
            return TARGETS[(int) state].invoke(args, rows, out, error);
        }

        /** A copy of {@code java}'s descriptor whose {@code invoke} is the JNI trampoline. */
        static MemorySegment descriptor(JavaFunction java, int index, Arena arena) {
            TARGETS[index] = java;
            MemorySegment copy = arena.allocate(SluiceScalarUdf.layout());
            copy.copyFrom(java.descriptor().reinterpret(SluiceScalarUdf.sizeof()));
            SluiceScalarUdf.state(copy, MemorySegment.ofAddress(index));
            SluiceScalarUdf.invoke(copy, INVOKE);
            return copy;
        }

        @SuppressWarnings("restricted") // the benchmark's own native function
        private static MemorySegment lookup(String symbol) {
            return SymbolLookup.loaderLookup()
                    .find(symbol)
                    .orElseThrow(() -> new IllegalStateException("libsluice_bench.so does not export " + symbol));
        }
    }

    /** The clamp in Java, as a UDF would write it. */
    public static final class JavaClamp implements ScalarFunction {
        private static final ArrowType DOUBLE = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public String name() {
            return "java_clamp";
        }

        @Override
        public List<ArrowType> argumentTypes() {
            return List.of(DOUBLE, DOUBLE, DOUBLE);
        }

        @Override
        public ArrowType returnType() {
            return DOUBLE;
        }

        @Override
        public FieldVector invoke(List<FieldVector> args, int rowCount, BufferAllocator allocator) {
            Float8Vector x = (Float8Vector) args.get(0);
            Float8Vector lo = (Float8Vector) args.get(1);
            Float8Vector hi = (Float8Vector) args.get(2);
            Float8Vector out = new Float8Vector("y", allocator);
            out.allocateNew(rowCount);
            for (int i = 0; i < rowCount; i++) {
                if (x.isNull(i) || lo.isNull(i) || hi.isNull(i)) {
                    out.setNull(i);
                } else {
                    out.set(i, Math.min(Math.max(x.get(i), lo.get(i)), hi.get(i)));
                }
            }
            out.setValueCount(rowCount);
            return out;
        }
    }

    /** Hands its argument back (zero-copy): the crossing alone. */
    public static final class JavaIdentity implements ScalarFunction {
        private static final ArrowType DOUBLE = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public String name() {
            return "java_identity";
        }

        @Override
        public List<ArrowType> argumentTypes() {
            return List.of(DOUBLE);
        }

        @Override
        public ArrowType returnType() {
            return DOUBLE;
        }

        @Override
        public FieldVector invoke(List<FieldVector> args, int rowCount, BufferAllocator allocator) {
            var transfer = args.get(0).getTransferPair(allocator);
            transfer.transfer();
            return (FieldVector) transfer.getTo();
        }
    }
}
