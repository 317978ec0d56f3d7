package dev.sluice.observe;

import java.util.concurrent.atomic.AtomicLong;

/** Checkpoint counters: completed and failed epochs, and the last one's duration. */
public final class CheckpointStats {

    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong lastEpoch = new AtomicLong();
    private final AtomicLong lastMillis = new AtomicLong();

    public void completed(long epoch, long millis) {
        completed.incrementAndGet();
        lastEpoch.set(epoch);
        lastMillis.set(millis);
    }

    public void recordFailure() {
        failed.incrementAndGet();
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
}
