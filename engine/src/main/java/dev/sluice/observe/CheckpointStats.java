package dev.sluice.observe;

import java.util.concurrent.atomic.AtomicLong;

/** Checkpoint counters: started, completed, timed-out and failed epochs, and the last one's duration. */
public final class CheckpointStats {

    private final AtomicLong started = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    private final AtomicLong lastEpoch = new AtomicLong();
    private final AtomicLong lastMillis = new AtomicLong();
    private final AtomicLong lastAt = new AtomicLong();

    /** A barrier went out (each lane counts its own). */
    public void started() {
        started.incrementAndGet();
    }

    public long startedCount() {
        return started.get();
    }

    public void completed(long epoch, long millis) {
        completed.incrementAndGet();
        lastEpoch.set(epoch);
        lastMillis.set(millis);
        lastAt.set(System.currentTimeMillis());
    }

    public void recordFailure() {
        failed.incrementAndGet();
    }

    /** An epoch given up because a stage missed the checkpoint timeout (the run goes on). */
    public void recordTimeout() {
        timedOut.incrementAndGet();
    }

    public long timedOut() {
        return timedOut.get();
    }

    public long completed() {
        return completed.get();
    }

    public long failed() {
        return failed.get();
    }

    public long lastEpoch() {
        return lastEpoch.get();
    }

    public long lastMillis() {
        return lastMillis.get();
    }

    /** When the last epoch completed (epoch milliseconds); 0 before the first. */
    public long lastAtMillis() {
        return lastAt.get();
    }
}
