package dev.sluice.bridge;

/** SQL that cannot be planned: syntax, unknown table or column, type errors, stateful SQL. */
public final class NativePlanException extends NativeException {
    public NativePlanException(String message) {
        super(Status.PLAN.code, message);
    }
}
