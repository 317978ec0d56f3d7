package dev.sluice.benchmarks;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.sluice.bridge.NativeLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of the call alone, FFM against JNI, with the benchmark-only native functions of
 * {@code rust/bench-abi} (they do nothing, so only the crossing is measured). They live in a
 * library of their own, {@code libsluice_bench.so} (this module's classes, built by
 * {@code rust/build-native.sh --bench}), so the engine's core does not export them:
 * <ul>
 *   <li>{@code noop*}: a downcall without arguments or result — FFM through a plain downcall
 *       handle (what the generated bindings call), FFM with {@code Linker.Option.critical(false)} (no thread-state transition,
 *       allowed because the callee neither blocks nor calls back), and a JNI static native;</li>
 *   <li>{@code twoPointers*}: the shape of most ABI calls, two pointers in and a status out
 *       (the callee reads one {@code long} and writes another), the same three ways, and with
 *       FFM also as segments of the global scope and as plain {@code long} addresses (where a
 *       segment argument's cost shows);</li>
 *   <li>{@code upcall*}: the core calls back into Java — an FFM upcall stub against JNI's
 *       {@code CallStaticVoidMethodA}; {@code upcallOnce*} is one downcall plus one upcall,
 *       {@code upcall16*} reports per upcall with 16 upcalls per downcall.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class CallShapeBenchmark {

    /** The JNI side: natives implemented in rust/bench-abi, and the method it calls back. */
    static final class Jni {
        private Jni() {}

        static native void noop();

        static native int twoPointers(long input, long output);

        /** Calls {@link #onCall} {@code times} times from native code. */
        static native int upcall(long times);

        static void onCall(long i) {
            upcalls += i + 1;
        }
    }

    /** What the callbacks add to, so neither can be optimised away. */
    static long upcalls;

    static void onCall(long i) {
        upcalls += i + 1;
    }

    // Field order matters: the library must be loaded before the handles look up its symbols.
    private static final Path LIBRARY = loadLibrary();

    private static final FunctionDescriptor NOOP_DESC = FunctionDescriptor.ofVoid();
    private static final FunctionDescriptor TWO_POINTERS_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    private static final FunctionDescriptor UPCALL_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);

    private static final MethodHandle NOOP = downcall("sluice_bench_noop", NOOP_DESC);
    private static final MethodHandle NOOP_CRITICAL =
            downcall("sluice_bench_noop", NOOP_DESC, Linker.Option.critical(false));
    private static final MethodHandle TWO_POINTERS = downcall("sluice_bench_two_pointers", TWO_POINTERS_DESC);
    private static final MethodHandle TWO_POINTERS_CRITICAL =
            downcall("sluice_bench_two_pointers", TWO_POINTERS_DESC, Linker.Option.critical(false));
    private static final MethodHandle UPCALL = downcall("sluice_bench_upcall", UPCALL_DESC);
    /**
     * The same C function with its pointers passed as {@code long}s (one integer register each,
     * as a pointer is on the LP64 ABIs this runs on): no memory segment, so no session to acquire
     * and release around the call — what JNI's {@code jlong} arguments cost.
     */
    private static final MethodHandle TWO_LONGS =
            downcall("sluice_bench_two_pointers", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));

    /**
     * Loads libsluice_bench.so from the class path (extracted once, as the core is) for JNI and FFM
     * alike; UdfBenchmark loads it too (a second load in the same class loader does nothing).
     */
    static Path loadLibrary() {
        String name = System.mapLibraryName("sluice_bench");
        String resource = "/native/linux-x86_64/" + name;
        URL url = CallShapeBenchmark.class.getResource(resource);
        if (url == null) {
            throw new IllegalStateException(
                    resource + " is not on the class path; build it with `benchmarks/run.sh jmh`");
        }
        Path path = NativeLibrary.extractOnce(url, name);
        System.load(path.toAbsolutePath().toString());
        return path;
    }

    @SuppressWarnings("restricted") // binding the benchmark's own native functions
    private static MethodHandle downcall(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment address = SymbolLookup.loaderLookup()
                .find(symbol)
                .orElseThrow(() -> new IllegalStateException(LIBRARY + " does not export " + symbol));
        return Linker.nativeLinker().downcallHandle(address, descriptor, options);
    }

    private static final MemorySegment ON_CALL_STUB = upcallStub();

    private static MemorySegment upcallStub() {
        try {
            MethodHandle target = MethodHandles.lookup()
                    .findStatic(CallShapeBenchmark.class, "onCall", MethodType.methodType(void.class, long.class));
            return Linker.nativeLinker().upcallStub(target, FunctionDescriptor.ofVoid(JAVA_LONG), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private Arena arena;
    private MemorySegment input;
    private MemorySegment output;
    private long inputAddress;
    private long outputAddress;
    private MemorySegment inputGlobal;
    private MemorySegment outputGlobal;
    private MemorySegment inputAuto;
    private MemorySegment outputAuto;

    @Setup(Level.Trial)
    public void setUp() throws Throwable {
        arena = Arena.ofConfined();
        input = arena.allocate(JAVA_LONG);
        output = arena.allocate(JAVA_LONG);
        input.set(JAVA_LONG, 0, 41);
        inputAddress = input.address();
        outputAddress = output.address();
        inputGlobal = MemorySegment.ofAddress(inputAddress);
        outputGlobal = MemorySegment.ofAddress(outputAddress);
        Arena auto = Arena.ofAuto();
        inputAuto = auto.allocate(JAVA_LONG);
        outputAuto = auto.allocate(JAVA_LONG);
        inputAuto.set(JAVA_LONG, 0, 41);
        // Each way must really call the native function: check the results once.
        long before = upcalls;
        if ((int) TWO_POINTERS.invokeExact(input, output) != 0
                || output.get(JAVA_LONG, 0) != 42
                || Jni.twoPointers(inputAddress, outputAddress) != 0
                || (int) TWO_LONGS.invokeExact(inputAddress, outputAddress) != 0
                || output.get(JAVA_LONG, 0) != 42
                || Jni.upcall(3) != 0
                || (int) UPCALL.invokeExact(ON_CALL_STUB, 3L) != 0
                || upcalls - before != 12) {
            throw new IllegalStateException("the benchmark functions of " + LIBRARY + " do not answer as expected");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    // --- noop downcall

    @Benchmark
    public void noopFfm() throws Throwable {
        NOOP.invokeExact();
    }

    @Benchmark
    public void noopFfmCritical() throws Throwable {
        NOOP_CRITICAL.invokeExact();
    }

    @Benchmark
    public void noopJni() {
        Jni.noop();
    }

    // --- two pointers in, a status out

    @Benchmark
    public int twoPointersFfm() throws Throwable {
        return (int) TWO_POINTERS.invokeExact(input, output);
    }

    @Benchmark
    public int twoPointersFfmCritical() throws Throwable {
        return (int) TWO_POINTERS_CRITICAL.invokeExact(input, output);
    }

    /** Segments of an automatic (shared) arena: each call acquires and releases its session atomically. */
    @Benchmark
    public int twoPointersFfmAutoSegments() throws Throwable {
        return (int) TWO_POINTERS.invokeExact(inputAuto, outputAuto);
    }

    /** Segments of the global scope ({@code MemorySegment.ofAddress}): no session to acquire. */
    @Benchmark
    public int twoPointersFfmGlobalSegments() throws Throwable {
        return (int) TWO_POINTERS.invokeExact(inputGlobal, outputGlobal);
    }

    @Benchmark
    public int twoPointersFfmLongs() throws Throwable {
        return (int) TWO_LONGS.invokeExact(inputAddress, outputAddress);
    }

    @Benchmark
    public int twoPointersJni() {
        return Jni.twoPointers(inputAddress, outputAddress);
    }

    // --- upcalls: native code calling back into Java

    @Benchmark
    public int upcallOnceFfm() throws Throwable {
        return (int) UPCALL.invokeExact(ON_CALL_STUB, 1L);
    }

    @Benchmark
    public int upcallOnceJni() {
        return Jni.upcall(1);
    }

    @Benchmark
    @OperationsPerInvocation(16)
    public int upcall16Ffm() throws Throwable {
        return (int) UPCALL.invokeExact(ON_CALL_STUB, 16L);
    }

    @Benchmark
    @OperationsPerInvocation(16)
    public int upcall16Jni() {
        return Jni.upcall(16);
    }
}
