package dev.sluice.bridge;

/** A NULL handle, a bad index or malformed options: a bug in the caller. */
public final class NativeArgumentException extends NativeException {
    public NativeArgumentException(String message) {
        super(Status.INVALID_ARGUMENT.code, message);
    }
}
