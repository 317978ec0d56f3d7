package dev.sluice.bridge;

import java.util.function.Function;

/**
 * A failure reported by the native core: the status code says the cause, the message says
 * what happened. Subclasses mirror the core's error kinds so callers can catch by cause.
 */
public class NativeException extends RuntimeException {

    /**
     * The core's status codes, the Java copy of {@code rust/core/include/sluice.h}'s
     * {@code SLUICE_OK}/{@code SLUICE_ERR_*} (generated from Rust's {@code ErrorKind});
     * StatusTableMatchesHeaderTest checks names and numbers against the header.
     */
    public enum Status {
        OK(0, null),
        INVALID_ARGUMENT(1, NativeArgumentException::new),
        CONFIG(2, NativeConfigException::new),
        PLAN(3, NativePlanException::new),
        EXECUTION(4, NativeExecutionException::new),
        DATA(5, NativeDataException::new),
        IO(6, NativeIoException::new),
        PANIC(7, NativePanicException::new);

        public final int code;
        private final Function<String, NativeException> exception;

        Status(int code, Function<String, NativeException> exception) {
            this.code = code;
            this.exception = exception;
        }

        /** The constant's name in sluice.h. */
        public String headerName() {
            return this == OK ? "SLUICE_OK" : "SLUICE_ERR_" + name();
        }
    }

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
        for (Status s : Status.values()) {
            if (s.code == status && s.exception != null) {
                return s.exception.apply(message);
            }
        }
        return new NativeException(status, "status " + status + ": " + message);
    }
}
