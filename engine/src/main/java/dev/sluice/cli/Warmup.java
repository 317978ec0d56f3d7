package dev.sluice.cli;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.FfmCoreBridge;
import dev.sluice.bridge.NativeCore;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Initializes, on a thread of its own, what a run's first pipeline needs and is slowest to set
 * up, while the main thread reads and checks the configuration: Arrow Java's {@code Schema} class
 * (its static Jackson reader, the largest when timed by hand), the native library with its
 * downcall handles and Arrow's root allocator ({@code benchmarks/run.sh startup} measures the
 * start; schemas of flat columns no longer need Arrow's C Data JNI library, see {@code CSchemas}),
 * and last the FFM bridge's per-batch calls ({@link FfmCoreBridge#warmUp}) unless an AOT cache's
 * profiles make them redundant. The JVM initializes a class once, whichever thread comes first,
 * and the library is loaded under a lock: nothing is done twice, the main thread at most waits.
 */
final class Warmup {

    /**
     * Enough calls of each per-batch downcall for the JIT to compile its glue under the
     * launcher's raised thresholds (C1 after ~1 000 invocations with CompileThresholdScaling=5);
     * ~50–65 ms on the warm-up thread.
     */
    static final int FFM_WARM_UP_ROUNDS = 1_500;

    private Warmup() {}

    /**
     * How many rounds of FFM warm-up calls to make: {@code -Dsluice.ffm.warmUpRounds} when set,
     * else none when the JVM maps an AOT cache recorded by this command line (its JIT profiles
     * stand in for the calls: in paired runs skipping them saved 1-10 % of the CPU at equal engine
     * time, benchmarks/README.md), else {@link #FFM_WARM_UP_ROUNDS}.
     */
    static int ffmWarmUpRounds(boolean aotCacheMapped) {
        return Integer.getInteger("sluice.ffm.warmUpRounds", aotCacheMapped ? 0 : FFM_WARM_UP_ROUNDS);
    }

    /** Starts the warm-up; call once the bridge is chosen (--bridge). */
    static void start(boolean aotCacheMapped) {
        int ffmRounds = ffmWarmUpRounds(aotCacheMapped);
        Thread.ofPlatform().daemon().name("sluice-warmup").start(() -> run(ffmRounds));
    }

    private static void run(int ffmRounds) {
        try {
            NativeCore.bridge();
            ArrowC.rootAllocator();
            Class.forName(Schema.class.getName(), true, Warmup.class.getClassLoader());
            if (ffmRounds > 0 && NativeCore.bridge() instanceof FfmCoreBridge) {
                // Last: the main thread needs the above first. The first batches then find the
                // FFM calls' glue compiled instead of interpreting it (benchmarks/README.md).
                FfmCoreBridge.warmUp(ffmRounds);
            }
        } catch (Throwable ignored) {
            // The main thread meets the same failure where it needs the thing, with its context.
        }
    }
}
