package dev.sluice.bridge;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What the FFM and JNI bridges share once the call itself is done, so both report failures
 * and results the same way: each bridge makes the call its own way, this turns what came back
 * into Java.
 */
final class BridgeSupport {

    private BridgeSupport() {}

    /**
     * The exception for a failed call: {@code status} picks the class, the message is the C
     * string at {@code lastErrorAddress} ({@code sluice_last_error}'s result, 0 if it failed).
     */
    static NativeException failure(int status, long lastErrorAddress) {
        String message = lastErrorAddress == 0
                ? "(no message)"
                : MemorySegment.ofAddress(lastErrorAddress).reinterpret(Long.MAX_VALUE).getString(0, StandardCharsets.UTF_8);
        return NativeException.of(status, message);
    }

    /** Reads the JSON array of names in a buffer from {@code sluice_sql_table_references}, and frees it. */
    static List<String> tableList(CoreBridge bridge, long buffer) {
        try {
            long[] data = bridge.bufferData(buffer);
            byte[] bytes = MemorySegment.ofAddress(data[0]).reinterpret(data[1]).toArray(ValueLayout.JAVA_BYTE);
            return parseStringArray(new String(bytes, StandardCharsets.UTF_8));
        } finally {
            bridge.bufferFree(buffer);
        }
    }

    /** Parses the core's JSON array of strings. */
    static List<String> parseStringArray(String json) {
        try {
            return Json.stringArray(json);
        } catch (java.io.IOException e) {
            throw new NativeArgumentException("bad table list from the core: " + json);
        }
    }
}
