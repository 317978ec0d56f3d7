package dev.sluice.pluginhost;

import dev.sluice.ffm.plugin.SluicePlugin;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.function.ToIntFunction;

/** Strings and statuses across the plugin ABI: borrowed C strings, and error messages the plugin hands over. */
final class PluginStrings {

    /** Longest C string read from a plugin: a guard against a missing NUL terminator. */
    private static final long MAX_STRING = 1 << 20;

    private PluginStrings() {}

    /** A NUL-terminated UTF-8 string at {@code address}, or {@code fallback} for NULL. */
    static String read(MemorySegment address, String fallback) {
        if (address == null || address.address() == 0) {
            return fallback;
        }
        return address.reinterpret(MAX_STRING).getString(0, StandardCharsets.UTF_8);
    }

    /**
     * Runs one plugin call that takes {@code char **out_error} last: {@code call} gets the slot
     * (set to NULL) and returns the status. A failure status becomes a {@link PluginCallException}
     * with the plugin's message, which is released with the plugin's {@code free_string}.
     */
    static void check(PluginLibrary library, String what, ToIntFunction<MemorySegment> call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(ValueLayout.ADDRESS);
            error.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
            int status = call.applyAsInt(error);
            String message = take(library, error.get(ValueLayout.ADDRESS, 0));
            if (status != 0) {
                throw new PluginCallException(
                        status,
                        what + ": " + (message != null ? message : "failed with status " + status + " and no message"));
            }
        }
    }

    /** Reads and frees a string the plugin allocated for the host; null for NULL. */
    static String take(PluginLibrary library, MemorySegment text) {
        if (text.address() == 0) {
            return null;
        }
        String message = read(text, null);
        free(library.freeString(), text);
        return message;
    }

    private static void free(MemorySegment freeString, MemorySegment text) {
        if (freeString.address() == 0) {
            return; // the plugin gave no free_string: its strings are leaked, as the header allows nothing else
        }
        SluicePlugin.free_string.invoke(freeString, text);
    }
}
