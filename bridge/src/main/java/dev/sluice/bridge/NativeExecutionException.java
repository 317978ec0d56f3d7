package dev.sluice.bridge;

/** Running a plan on a batch failed. */
public final class NativeExecutionException extends NativeException {
    public NativeExecutionException(String message) {
        super(Status.EXECUTION.code, message);
    }
}
