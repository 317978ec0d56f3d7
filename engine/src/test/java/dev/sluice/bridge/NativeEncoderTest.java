package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.Test;

/**
 * {@link NativeEncoder#encodeRecords} asks the core for keys only when key columns were given;
 * without them the records must be what the core encodes and report no keys, as the core does.
 */
class NativeEncoderTest {

    @Test
    void recordsWithoutKeyColumnsAreTheCoresAndHaveNoKeys() {
        try (BufferAllocator allocator = ArrowC.rootAllocator().newChildAllocator("encoder", 0, Long.MAX_VALUE);
                NativeGenerator generator =
                        NativeGenerator.create(allocator, Map.of("entity", "bid", "count", 100, "seed", 7));
                NativeBatch batch = generator.next(5)) {
            List<String> plain = new ArrayList<>();
            new NativeEncoder("json", false, true, List.of()).encodeRecords(batch, records -> {
                assertFalse(records.hasKeys());
                for (int i = 0; i < records.count(); i++) {
                    plain.add(text(records.data(), records.start(i), records.length(i)));
                }
            });
            List<String> keyed = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            new NativeEncoder("json", false, true, List.of("auction")).encodeRecords(batch, records -> {
                assertTrue(records.hasKeys());
                for (int i = 0; i < records.count(); i++) {
                    keyed.add(text(records.data(), records.start(i), records.length(i)));
                    keys.add(text(records.keys(), records.keyStart(i), records.keyLength(i)));
                }
            });
            assertEquals(5, plain.size());
            assertEquals(keyed, plain, "key columns must not change the records");
            for (int i = 0; i < plain.size(); i++) {
                assertTrue(plain.get(i).startsWith("{\"auction\":" + keys.get(i) + ","), plain.get(i));
            }
            // What the encoder assumes when it does not ask: the core reports no keys either.
            CoreBridge core = NativeCore.bridge();
            long buffer = core.encode(batch.handle(), "{\"format\":\"json\",\"record_offsets\":true}");
            try {
                assertEquals(0, core.bufferKeys(buffer)[2]);
            } finally {
                core.bufferFree(buffer);
            }
        }
    }

    private static String text(MemorySegment segment, long start, long length) {
        return new String(segment.asSlice(start, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }
}
