package dev.sluice.bridge;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/** Encodes batches to bytes in the core (JSON lines, a JSON array, CSV). */
public final class NativeEncoder {

    private final String optionsJson;

    /** {@code format}: json, jsonarray or csv. */
    public NativeEncoder(String format, boolean header) {
        this.optionsJson = Json.object(java.util.Map.of("format", format, "header", header));
    }

    /**
     * Encodes {@code batch} and hands the bytes to {@code consumer}; the segment is valid only
     * during the call (it is freed right after).
     */
    public void encode(NativeBatch batch, Consumer<MemorySegment> consumer) {
        CoreBridge core = NativeCore.bridge();
        long buffer = core.encode(batch.handle(), optionsJson);
        try {
            long[] data = core.bufferData(buffer);
            consumer.accept(data[1] == 0 ? MemorySegment.NULL : MemorySegment.ofAddress(data[0]).reinterpret(data[1]));
        } finally {
            core.bufferFree(buffer);
        }
    }
}
