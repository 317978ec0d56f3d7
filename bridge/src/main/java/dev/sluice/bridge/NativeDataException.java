package dev.sluice.bridge;

/** Input data that does not match its schema or format. */
public final class NativeDataException extends NativeException {
    public NativeDataException(String message) {
        super(Status.DATA.code, message);
    }
}
