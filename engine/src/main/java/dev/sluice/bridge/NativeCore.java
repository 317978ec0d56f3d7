package dev.sluice.bridge;

import dev.sluice.ffm.sluice_h;

/**
 * The process-wide entry to the native core: loads the library, checks its ABI version and
 * chooses the bridge ({@code -Dsluice.bridge=ffm}, the default; the JNI twin is added by the
 * benchmarks issue).
 */
public final class NativeCore {

    public static final String BRIDGE_PROPERTY = "sluice.bridge";

    private static volatile CoreBridge bridge;

    private NativeCore() {}

    /** The bridge, loading the library on first use. */
    public static CoreBridge bridge() {
        CoreBridge b = bridge;
        if (b == null) {
            synchronized (NativeCore.class) {
                b = bridge;
                if (b == null) {
                    b = bridge = open(System.getProperty(BRIDGE_PROPERTY, "ffm"));
                }
            }
        }
        return b;
    }

    private static CoreBridge open(String name) {
        CoreBridge chosen = switch (name) {
            case "ffm" -> new FfmCoreBridge();
            default -> throw new IllegalArgumentException(
                    "unknown bridge '" + name + "' (-D" + BRIDGE_PROPERTY + "); this build has: ffm");
        };
        java.nio.file.Path path = NativeLibrary.load();
        int expected = sluice_h.SLUICE_ABI_VERSION();
        int actual = chosen.abiVersion();
        if (actual != expected) {
            throw new IllegalStateException("the native core at " + path + " has ABI version " + actual
                    + " but this engine was built for version " + expected + "; rebuild with `mvn package`");
        }
        return chosen;
    }
}
