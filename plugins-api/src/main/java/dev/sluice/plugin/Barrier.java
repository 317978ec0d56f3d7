package dev.sluice.plugin;

/**
 * A checkpoint barrier. It travels behind the batches of its epoch through every stage in
 * order; a sink that receives it must make everything it received before durable — by
 * {@link #deadlineNanos()}, or throw {@link CheckpointTimeoutException} so the epoch is given up
 * (and retried at the next interval) instead of stalling the pipeline.
 *
 * @param epoch         the checkpoint epoch, increasing from 1
 * @param last          true for the barrier after the end of bounded input or on a graceful stop
 * @param deadlineNanos {@link System#nanoTime()} by which the epoch must be durable
 */
public record Barrier(long epoch, boolean last, long deadlineNanos) {

    /** A barrier without a deadline (tests, tools). */
    public Barrier(long epoch, boolean last) {
        this(epoch, last, Long.MAX_VALUE);
    }

    /** Nanoseconds left until the deadline (at least 0). */
    public long remainingNanos() {
        return deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, deadlineNanos - System.nanoTime());
    }
}
