package dev.sluice.pluginhost;

/** A library that cannot serve as a plugin here: missing, not a shared library, no entry symbol, wrong ABI. */
public final class PluginLoadException extends RuntimeException {

    public PluginLoadException(String message) {
        super(message);
    }
}
