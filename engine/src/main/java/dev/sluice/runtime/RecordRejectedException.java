package dev.sluice.runtime;

/** A record failed and its node's {@code on_error} is {@code fail}. */
public final class RecordRejectedException extends RuntimeException {
    public RecordRejectedException(String node, long position, String error) {
        super("node '" + node + "': record at " + position + " rejected (on_error: fail): " + error);
    }
}
