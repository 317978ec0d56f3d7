package dev.sluice.state;

/**
 * A read-write open found the state directory locked: another process (usually the running
 * pipeline) or another handle in this process has it open for writing. Read-only opens still work.
 */
public final class StateLockedException extends StateException {

    private static final long serialVersionUID = 1L;

    public StateLockedException(String message, Throwable cause) {
        super(message, cause);
    }
}
