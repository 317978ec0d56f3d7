package dev.sluice.state;

/**
 * The state DB failed: it cannot be opened, read or written, or it holds a value this version
 * of Sluice cannot decode. The message names the state directory and says what to do.
 */
public class StateException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public StateException(String message) {
        super(message);
    }

    public StateException(String message, Throwable cause) {
        super(message, cause);
    }
}
