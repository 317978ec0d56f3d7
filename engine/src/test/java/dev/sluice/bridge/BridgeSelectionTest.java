package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The bridge in use is the one asked for: the JNI run of the bridge and SQL suites (engine
 * pom, execution {@code jni-bridge}, {@code -Dsluice.bridge=jni}) cannot silently run on FFM.
 * Besides the bridge's name, the core's own count of JNI calls ({@code sluice_jni_calls})
 * shows which way the calls really went.
 */
class BridgeSelectionTest {

    @Test
    void theBridgeInUseIsTheOneAskedFor() {
        String asked = System.getProperty(NativeCore.BRIDGE_PROPERTY, "ffm");
        CoreBridge bridge = NativeCore.bridge();
        assertEquals(asked, bridge.name());
        Class<? extends CoreBridge> expected = asked.equals("jni") ? JniCoreBridge.class : FfmCoreBridge.class;
        assertEquals(expected, bridge.getClass());
    }

    @Test
    void theCallsReallyCrossTheBridgeAskedFor() {
        boolean jni = System.getProperty(NativeCore.BRIDGE_PROPERTY, "ffm").equals("jni");
        CoreBridge bridge = NativeCore.bridge();
        // Exactly: every call through the bridge counts over JNI, none over FFM.
        long before = bridge.jniCalls();
        long generator = bridge.generatorCreate("{\"entity\":\"bid\",\"seed\":1,\"count\":250}");
        int calls = 1;
        long rows = 0;
        for (long batch; (batch = bridge.generatorNext(generator, 100)) != 0; calls += 3) {
            rows += bridge.batchNumRows(batch);
            bridge.batchFree(batch);
        }
        calls++; // the last generatorNext, which found the end
        bridge.generatorFree(generator);
        calls++;
        long after = bridge.jniCalls(); // over JNI, this call counts itself too
        assertTrue(rows > 0, "the generator made no rows");
        assertEquals(
                jni ? calls + 1 : 0, after - before, "JNI calls counted by the core over " + calls + " bridge calls");

        // Real work through the handle classes: generate, plan and push through SQL, encode.
        before = bridge.jniCalls();
        int batches = 0;
        try (var allocator = ArrowC.rootAllocator().newChildAllocator("selection", 0, Long.MAX_VALUE);
                NativeGenerator source =
                        NativeGenerator.create(allocator, Map.of("entity", "bid", "seed", 1, "count", 1000));
                NativeTransform transform = NativeTransform.plan(
                        allocator,
                        "SELECT auction, price FROM bid WHERE price > 0",
                        List.of("bid"),
                        List.of(source.schema()))) {
            NativeEncoder encoder = new NativeEncoder("json", false);
            for (NativeBatch batch = source.next(200); batch != null; batch = source.next(200), batches++) {
                try (NativeBatch in = batch) {
                    transform.push(0, in);
                }
                for (NativeBatch out = transform.drain(); out != null; out = transform.drain()) {
                    try (NativeBatch result = out) {
                        encoder.encode(result, bytes -> {});
                    }
                }
            }
        }
        long grown = bridge.jniCalls() - before;
        assertTrue(batches > 1, batches + " batches");
        if (jni) {
            // At least generate, push and drain per batch, besides create, plan and free.
            assertTrue(grown >= 3L * batches, "only " + grown + " JNI calls for " + batches + " batches");
        } else {
            assertEquals(0, grown, "JNI calls during an FFM run");
        }
    }

    @Test
    void anUnknownBridgeIsRefusedWithTheNamesThatExist() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NativeCore.select("jna"));
        assertTrue(e.getMessage().contains("'jna'") && e.getMessage().contains("ffm, jni"), e.getMessage());
    }
}
