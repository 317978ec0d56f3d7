package dev.sluice.cli;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.FfmCoreBridge;
import dev.sluice.bridge.NativeCore;
import org.apache.arrow.c.jni.JniLoader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Initializes, on a thread of its own, what a run's first pipeline needs and is slowest to set
 * up, while the main thread reads and checks the configuration: Arrow Java's {@code Schema} class
 * (its static Jackson reader, the largest when timed by hand), the native library with its
 * downcall handles, Arrow's root allocator and its C Data JNI library ({@code benchmarks/run.sh
 * startup} measures the start), and last the FFM bridge's per-batch calls ({@link
 * FfmCoreBridge#warmUp}). The JVM initializes a class once, whichever thread comes first, and
 * the library is loaded under a lock: nothing is done twice, the main thread at most waits.
 */
final class Warmup {

    /**
     * Enough calls of each per-batch downcall for the JIT to compile its glue under the
     * launcher's raised thresholds (C1 after ~1 000 invocations with CompileThresholdScaling=5);
     * ~50–65 ms on the warm-up thread. {@code -Dsluice.ffm.warmUpRounds=0} turns it off (for A/B
     * runs: benchmarks/README.md).
     */
    static final int FFM_WARM_UP_ROUNDS = Integer.getInteger("sluice.ffm.warmUpRounds", 1_500);

    private Warmup() {}

    /** Starts the warm-up; call once the bridge is chosen (--bridge). */
    static void start() {
        Thread.ofPlatform().daemon().name("sluice-warmup").start(Warmup::run);
    }

    private static void run() {
        try {
            NativeCore.bridge();
            ArrowC.rootAllocator();
            Class.forName(Schema.class.getName(), true, Warmup.class.getClassLoader());
            JniLoader.get().ensureLoaded();
            if (FFM_WARM_UP_ROUNDS > 0 && NativeCore.bridge() instanceof FfmCoreBridge) {
                // Last: the main thread needs the above first. The first batches then find the
                // FFM calls' glue compiled instead of interpreting it (benchmarks/README.md).
                FfmCoreBridge.warmUp(FFM_WARM_UP_ROUNDS);
            }
        } catch (Throwable ignored) {
            // The main thread meets the same failure where it needs the thing, with its context.
        }
    }
}
