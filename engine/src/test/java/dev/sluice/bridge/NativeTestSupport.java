package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.arrow.memory.BufferAllocator;

/** Leak checks shared by the bridge tests: native handles and Arrow memory back to zero. */
final class NativeTestSupport {

    private NativeTestSupport() {}

    static long liveHandles() {
        return NativeCore.bridge().liveHandles();
    }

    /** Asserts no native handle outlived the test, and the allocator holds nothing. */
    static void assertNoLeaks(long handlesBefore, BufferAllocator allocator) {
        assertEquals(handlesBefore, liveHandles(), "native handles leaked");
        assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory leaked");
    }
}
