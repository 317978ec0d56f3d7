package dev.sluice.bridge;

/**
 * A failure reported by the native core: the status code says the cause, the message says
 * what happened. Subclasses mirror the core's error kinds so callers can catch by cause.
 */
public class NativeException extends RuntimeException {

    private final int status;

    protected NativeException(int status, String message) {
        super(message);
        this.status = status;
    }

    /** The core's status code ({@code SLUICE_ERR_*}). */
    public int status() {
        return status;
    }

    /** Maps a status code and message to the matching exception class. */
    public static NativeException of(int status, String message) {
        return switch (status) {
            case 1 -> new NativeArgumentException(message);
            case 2 -> new NativeConfigException(message);
            case 3 -> new NativePlanException(message);
            case 4 -> new NativeExecutionException(message);
            case 5 -> new NativeDataException(message);
            case 6 -> new NativeIoException(message);
            case 7 -> new NativePanicException(message);
            default -> new NativeException(status, "status " + status + ": " + message);
        };
    }
}
