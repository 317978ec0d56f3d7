package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link FfmCoreBridge#warmUp} calls the per-batch downcalls with NULL handles on the warm-up
 * thread of every FFM run: the core must refuse each without creating anything or leaving an
 * error behind for the thread that runs the pipeline.
 */
class FfmWarmUpTest {

    @Test
    void warmUpCreatesNothingAndLeavesTheCallerUsable() throws Exception {
        CoreBridge bridge = NativeCore.bridge();
        long before = bridge.liveHandles();
        Thread warmUp = Thread.ofPlatform().start(() -> FfmCoreBridge.warmUp(50));
        warmUp.join();
        assertEquals(before, bridge.liveHandles(), "the warm-up created or freed a handle");
        // The refusals set that thread's last error only: this thread's calls still work.
        long generator = bridge.generatorCreate("{\"entity\":\"bid\",\"count\":100,\"seed\":1}");
        try {
            long batch = bridge.generatorNext(generator, 10);
            try {
                assertTrue(bridge.batchNumRows(batch) > 0);
            } finally {
                bridge.batchFree(batch);
            }
        } finally {
            bridge.generatorFree(generator);
        }
        assertEquals(before, bridge.liveHandles());
    }
}
