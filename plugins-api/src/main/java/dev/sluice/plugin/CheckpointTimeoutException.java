package dev.sluice.plugin;

/**
 * Thrown by a stage that could not make its epoch durable before the barrier's deadline. The
 * runtime then gives the epoch up (counted and logged; positions are not committed) and keeps
 * running: the next checkpoint covers the same records.
 */
public class CheckpointTimeoutException extends RuntimeException {

    public CheckpointTimeoutException(String message) {
        super(message);
    }
}
