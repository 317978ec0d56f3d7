package dev.sluice.pluginhost;

import dev.sluice.ffm.plugin.SluicePlugin;
import java.lang.foreign.MemorySegment;

/** Bytes a plugin allocated for the host (source snapshots), released with its {@code free_bytes}. */
final class PluginBytes {

    private PluginBytes() {}

    static void free(PluginLibrary library, MemorySegment bytes, long length) {
        if (library.freeBytes().address() != 0) {
            SluicePlugin.free_bytes.invoke(library.freeBytes(), bytes, length);
        }
    }
}
