package dev.sluice.pluginhost;

import dev.sluice.ffm.plugin.sluice_plugin_h;

/** A plugin call that returned a status other than {@code SLUICE_PLUGIN_OK}, with the plugin's message. */
public final class PluginCallException extends RuntimeException {

    private final int status;

    public PluginCallException(int status, String message) {
        super(message);
        this.status = status;
    }

    /** The {@code SLUICE_PLUGIN_*} status. */
    public int status() {
        return status;
    }

    /** The plugin rejected its options ({@code SLUICE_PLUGIN_INVALID_OPTIONS}). */
    public boolean invalidOptions() {
        return status == sluice_plugin_h.SLUICE_PLUGIN_INVALID_OPTIONS();
    }

    /** The plugin found a record it cannot process ({@code SLUICE_PLUGIN_BAD_DATA}). */
    public boolean badData() {
        return status == sluice_plugin_h.SLUICE_PLUGIN_BAD_DATA();
    }

    /** The plugin panicked and its SDK caught it ({@code SLUICE_PLUGIN_PANIC}). */
    public boolean panicked() {
        return status == sluice_plugin_h.SLUICE_PLUGIN_PANIC();
    }
}
