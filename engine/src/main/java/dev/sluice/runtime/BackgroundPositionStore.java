package dev.sluice.runtime;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A position store opened on its own thread while the pipeline is validated and planned:
 * opening RocksDB takes ~50 ms of a restart's ~1 s to first record. {@link Pipeline} waits for
 * it ({@link #awaitOpen}) before any stage opens, so a failure to open (another run holds the
 * state directory) is reported as before, not at a node.
 */
public final class BackgroundPositionStore implements PositionStore {

    private final CompletableFuture<PositionStore> opening;
    private final AtomicBoolean closed = new AtomicBoolean();

    public BackgroundPositionStore(Supplier<PositionStore> open) {
        this.opening = CompletableFuture.supplyAsync(open, task -> {
            Thread thread = new Thread(task, "sluice-state-open");
            thread.setDaemon(true);
            thread.start();
        });
    }

    /** The opened store; rethrows what opening it threw. */
    private PositionStore store() {
        try {
            return opening.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error cause) {
                throw cause;
            }
            throw e;
        }
    }

    @Override
    public void awaitOpen() {
        store();
    }

    @Override
    public Map<String, String> load(String node) {
        return store().load(node);
    }

    @Override
    public java.util.Set<String> sinksWithPositions() {
        return store().sinksWithPositions();
    }

    @Override
    public void save(long epoch, Map<String, Map<String, String>> positionsByNode) {
        store().save(epoch, positionsByNode);
    }

    @Override
    public PositionStore forAnotherLane() {
        return store().forAnotherLane();
    }

    /** Waits for the open to finish and closes what it opened (releasing the directory's lock). */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        PositionStore store;
        try {
            store = store();
        } catch (RuntimeException failedToOpen) {
            return; // nothing was opened
        }
        store.close();
    }
}
