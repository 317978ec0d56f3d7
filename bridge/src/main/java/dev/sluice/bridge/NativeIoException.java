package dev.sluice.bridge;

/** A file could not be opened, read or written by the core. */
public final class NativeIoException extends NativeException {
    public NativeIoException(String message) {
        super(Status.IO.code, message);
    }
}
