package dev.sluice.bridge;

/** A panic inside the core, caught at the boundary; the JVM and the library stay usable. */
public final class NativePanicException extends NativeException {
    public NativePanicException(String message) {
        super(Status.PANIC.code, message);
    }
}
