package dev.sluice.bridge;

/** A configuration value the core cannot work with. */
public final class NativeConfigException extends NativeException {
    public NativeConfigException(String message) {
        super(Status.CONFIG.code, message);
    }
}
