package dev.sluice.cli;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeCore;
import org.apache.arrow.c.jni.JniLoader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Initializes, on a thread of its own, what a run's first pipeline needs and is slowest to set
 * up, while the main thread reads and checks the configuration: Arrow Java's {@code Schema} class
 * (its static Jackson reader, the largest when timed by hand), the native library with its
 * downcall handles, Arrow's root allocator and its C Data JNI library ({@code benchmarks/run.sh
 * startup} measures the start). The JVM initializes a class once, whichever thread comes first, and
 * the library is loaded under a lock: nothing is done twice, the main thread at most waits.
 */
final class Warmup {

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
        } catch (Throwable ignored) {
            // The main thread meets the same failure where it needs the thing, with its context.
        }
    }
}
