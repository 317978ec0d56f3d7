package dev.sluice.connector.kafka;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Static group membership ids of the Kafka sources open in this JVM. The lanes of a run open
 * one after another and each claims the lowest free lane number of its base, so lane n gets
 * {@code <base>-lane-<n>} again after a restart; lanes that derive a new base share one.
 */
final class Instances {

    private static final Map<String, BitSet> CLAIMED = new HashMap<>();
    /** Bases derived in this JVM per pipeline and node, while a lane holds them. */
    private static final Map<String, String> DERIVED = new HashMap<>();

    private Instances() {}

    /** A new base for a source without one: {@code sluice-<pipeline>-<node>-<random>}. */
    static synchronized String derived(String pipeline, String node) {
        String key = pipeline + "\u0000" + node;
        String base = DERIVED.get(key);
        if (base == null || !CLAIMED.containsKey(base)) {
            base = clean("sluice-" + pipeline + "-" + node) + "-"
                    + UUID.randomUUID().toString().substring(0, 8);
            DERIVED.put(key, base);
        }
        return base;
    }

    /** Claims the lowest lane number of {@code base} that no open source in this JVM holds. */
    static synchronized int claim(String base) {
        BitSet held = CLAIMED.computeIfAbsent(base, b -> new BitSet());
        int lane = held.nextClearBit(0);
        held.set(lane);
        return lane;
    }

    static synchronized void release(String base, int lane) {
        BitSet held = CLAIMED.get(base);
        if (held != null) {
            held.clear(lane);
            if (held.isEmpty()) {
                CLAIMED.remove(base);
            }
        }
    }

    /** group.instance.id takes letters, digits, '.', '_' and '-' (at most 249). */
    private static String clean(String id) {
        String cleaned = id.replaceAll("[^A-Za-z0-9._-]", "_");
        return cleaned.length() > 200 ? cleaned.substring(0, 200) : cleaned;
    }
}
