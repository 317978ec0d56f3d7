package dev.sluice.bridge;

import dev.sluice.ffm.sluice_h;
import java.util.List;

/**
 * The process-wide entry to the native core: loads the library, checks its ABI version and
 * chooses the bridge, {@code ffm} (the default) or {@code jni}, from {@code -Dsluice.bridge}
 * or {@link #select} (the CLI's {@code --bridge}).
 *
 * <p>Both bridges call the same loaded library, and handles are plain addresses, so a handle
 * made through one stays valid through the other: {@link #select} may switch bridges at any
 * time (the CLI selects before it opens anything; tests switch back and forth).
 */
public final class NativeCore {

    public static final String BRIDGE_PROPERTY = "sluice.bridge";

    /** The bridges this build has. */
    public static final List<String> BRIDGES = List.of("ffm", "jni");

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

    /**
     * Uses bridge {@code name} from now on (and records it in {@code -Dsluice.bridge}): the
     * library is loaded at first use as usual, or the bridge switched now if one is open.
     * Throws {@link IllegalArgumentException} for a name this build does not have.
     */
    public static synchronized void select(String name) {
        if (!BRIDGES.contains(name)) {
            throw unknown(name);
        }
        System.setProperty(BRIDGE_PROPERTY, name);
        CoreBridge current = bridge;
        if (current != null && !current.name().equals(name)) {
            bridge = open(name);
        }
    }

    private static IllegalArgumentException unknown(String name) {
        return new IllegalArgumentException("unknown bridge '" + name + "' (--bridge or -D" + BRIDGE_PROPERTY
                + "); this build has: " + String.join(", ", BRIDGES));
    }

    private static CoreBridge open(String name) {
        CoreBridge chosen = switch (name) {
            case "ffm" -> new FfmCoreBridge();
            case "jni" -> new JniCoreBridge();
            default -> throw unknown(name);
        };
        java.nio.file.Path path = NativeLibrary.load();
        int expected = sluice_h.SLUICE_ABI_VERSION();
        int actual;
        try {
            actual = chosen.abiVersion();
        } catch (UnsatisfiedLinkError e) {
            throw new IllegalStateException(
                    "the native core at " + path + " has no entry points for the " + name + " bridge (" + e.getMessage()
                            + "); rebuild it with `mvn package`",
                    e);
        }
        if (actual != expected) {
            throw new IllegalStateException("the native core at " + path + " has ABI version " + actual
                    + " but this engine was built for version " + expected + "; rebuild with `mvn package`");
        }
        return chosen;
    }
}
