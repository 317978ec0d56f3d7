package dev.sluice.connector.kafka;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A source lane's Kafka consumer on a thread of its own: it fetches the next records while the
 * lane decodes and delivers the last ones. Under the classic group protocol the consumer does
 * its network I/O only inside {@code poll}, so a lane that polls between batches leaves each
 * fetch response waiting in the socket for as long as the batch before it takes — the end-to-end
 * latency tail at moderate load on few cores (benchmarks/README, "Latency").
 *
 * <p>The consumer is used on this thread only. The lane's other calls (commit, group metadata,
 * leaving the group) run here as tasks ({@link #call}). Rebalance callbacks run here too, inside
 * {@code poll}: a revocation is queued behind the records fetched before it, and the callback
 * waits — running the lane's tasks meanwhile — until the lane has delivered those records and
 * checkpointed ({@link Revoked#handled}), exactly as when the lane polled the consumer itself.
 */
final class Fetcher implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Fetcher.class);

    /** What the lane takes from the queue. */
    sealed interface Item permits Fetched, Revoked {}

    /**
     * Records of one poll, and whether the poll left nothing unread in any assigned partition
     * (a partial batch need not wait for more).
     */
    record Fetched(ConsumerRecords<byte[], ByteBuffer> records, boolean caughtUp) implements Item {}

    /**
     * Partitions being revoked: the lane delivers what it buffered, checkpoints, forgets their
     * positions and completes {@code handled}; only then does the consumer let them go.
     */
    record Revoked(Collection<TopicPartition> partitions, CompletableFuture<Void> handled) implements Item {}

    /** What the consumer does on assignment (seek to saved positions); runs on this thread. */
    interface OnAssigned {
        void assigned(KafkaConsumer<byte[], ByteBuffer> consumer, Collection<TopicPartition> partitions);
    }

    /** A lane's call to run with the consumer, and where its result goes. */
    private record Task<T>(Function<KafkaConsumer<byte[], ByteBuffer>, T> body, CompletableFuture<T> result) {
        void run(KafkaConsumer<byte[], ByteBuffer> consumer) {
            try {
                result.complete(body.apply(consumer));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }
    }

    /** How long one poll waits: also how long a task waits at most while no record comes. */
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(10);
    /** Polls handed over and not yet taken: beyond this the fetcher waits for the lane. */
    private static final int MAX_QUEUED_POLLS = 2;
    /** How often the lag seen by status readers is refreshed. */
    private static final long LAG_REFRESH_NANOS = 1_000_000_000L;

    private final KafkaConsumer<byte[], ByteBuffer> consumer;
    private final OnAssigned onAssigned;
    /** With a bounded source: the end offsets of the assigned partitions when they were assigned. */
    private final Map<TopicPartition, Long> endOffsets;

    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled on every change of the queue, the tasks, a revocation's handling, or closing. */
    private final Condition changed = lock.newCondition();

    private final ArrayDeque<Item> items = new ArrayDeque<>();
    private final ArrayDeque<Task<?>> tasks = new ArrayDeque<>();
    private int queuedPolls;
    private boolean closing;
    private RuntimeException failure;

    /** Set by {@link #leaveGroup}: the consumer has unsubscribed and must not poll again. */
    private boolean left;

    private volatile boolean atEnd;
    private volatile Map<String, Long> lag = Map.of();
    private long lagSeenNanos;
    private final Thread thread;

    /**
     * Subscribes {@code consumer} to {@code topics} and starts fetching; from here on the
     * consumer belongs to this thread. With {@code bounded}, {@link #atEnd} tells when every
     * assigned partition has been fetched up to the end offset it had when assigned.
     */
    Fetcher(
            KafkaConsumer<byte[], ByteBuffer> consumer,
            List<String> topics,
            boolean bounded,
            OnAssigned onAssigned,
            String threadName) {
        this.consumer = consumer;
        this.onAssigned = onAssigned;
        this.endOffsets = bounded ? new java.util.HashMap<>() : null;
        consumer.subscribe(topics, new Rebalance());
        Map<String, String> logContext = MDC.getCopyOfContextMap();
        thread = Thread.ofPlatform().daemon().name(threadName).unstarted(() -> {
            if (logContext != null) {
                MDC.setContextMap(logContext);
            }
            run();
        });
        thread.start();
    }

    /**
     * The next item, waiting up to {@code timeoutNanos}; null if none came. Throws what made the
     * fetcher stop once the items before it are taken.
     */
    Item take(long timeoutNanos) throws InterruptedException {
        lock.lock();
        try {
            long left = timeoutNanos;
            while (items.isEmpty() && failure == null && left > 0) {
                left = changed.awaitNanos(left);
            }
            Item item = items.poll();
            if (item == null) {
                if (failure != null) {
                    throw failure;
                }
                return null;
            }
            if (item instanceof Fetched) {
                queuedPolls--;
                changed.signalAll();
            }
            return item;
        } finally {
            lock.unlock();
        }
    }

    /** Whether nothing is queued for the lane. */
    boolean drained() {
        lock.lock();
        try {
            return items.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Bounded: every assigned partition was fetched to its end and the records are queued. Read
     * it before {@link #drained}: then a true here means the last records are already visible.
     */
    boolean atEnd() {
        return atEnd;
    }

    /** Records not yet fetched per partition ("topic/3"), as of about a second ago. */
    Map<String, Long> lag() {
        return lag;
    }

    /** Runs {@code task} with the consumer on the fetcher's thread and returns its result. */
    <T> T call(Function<KafkaConsumer<byte[], ByteBuffer>, T> task) {
        if (Thread.currentThread() == thread) {
            return task.apply(consumer);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        lock.lock();
        try {
            if (failure != null) {
                throw failure;
            }
            if (closing) {
                throw new IllegalStateException("the Kafka consumer is closing");
            }
            tasks.add(new Task<>(task, result));
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the Kafka consumer", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Like {@link #call}, for a task without a result. */
    void run(Consumer<KafkaConsumer<byte[], ByteBuffer>> task) {
        call(c -> {
            task.accept(c);
            return null;
        });
    }

    /**
     * Leaves the group (a bounded lane that read its share): no more polls, and the revocation
     * this causes hands nothing to the lane — it is inside the checkpoint that committed all.
     */
    void leaveGroup() {
        run(c -> {
            left = true;
            c.unsubscribe();
        });
    }

    /**
     * Stops fetching and closes the consumer; a static member leaves the group, handing its
     * partitions over now (a kill -9 cannot, and its successor replaces it). Items not taken are
     * dropped: their positions were never emitted, so no checkpoint counts them.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            closing = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            while (true) {
                Task<?> task;
                lock.lock();
                try {
                    while (!closing && tasks.isEmpty() && (left || queuedPolls >= MAX_QUEUED_POLLS)) {
                        changed.await(POLL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
                    }
                    if (closing) {
                        break;
                    }
                    task = tasks.poll();
                } finally {
                    lock.unlock();
                }
                if (task != null) {
                    task.run(consumer);
                } else {
                    fetch();
                }
            }
        } catch (RuntimeException | InterruptedException e) {
            stop(
                    e instanceof RuntimeException runtime
                            ? runtime
                            : new IllegalStateException("the Kafka fetcher was interrupted", e));
        } finally {
            stop(new IllegalStateException("the Kafka consumer is closed"));
            try {
                consumer.close(CloseOptions.timeout(Duration.ofSeconds(5))
                        .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
            } catch (RuntimeException e) {
                LOG.warn("closing the Kafka consumer failed: {}", e.toString());
            }
        }
    }

    /** One poll; its records (if any) go to the lane. */
    private void fetch() {
        ConsumerRecords<byte[], ByteBuffer> records = consumer.poll(POLL_TIMEOUT);
        if (System.nanoTime() - lagSeenNanos > LAG_REFRESH_NANOS) {
            refreshLag();
        }
        if (!records.isEmpty()) {
            offer(new Fetched(records, caughtUp()));
        }
        if (endOffsets != null && !atEnd) {
            atEnd = reachedEnd();
        }
    }

    private void offer(Item item) {
        lock.lock();
        try {
            items.add(item);
            if (item instanceof Fetched) {
                queuedPolls++;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Records why the fetcher stopped (the first reason wins; the lane rethrows it once it has
     * taken the items before it) and fails the lane's tasks still waiting.
     */
    private void stop(RuntimeException why) {
        lock.lock();
        try {
            closing = true;
            if (failure == null) {
                failure = why;
            }
            for (Task<?> task : tasks) {
                task.result().completeExceptionally(failure);
            }
            tasks.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The lane has handled {@code revoked} (with {@code error} if it failed): the consumer may go on. */
    void handled(Revoked revoked, Throwable error) {
        lock.lock();
        try {
            if (error == null) {
                revoked.handled().complete(null);
            } else {
                revoked.handled().completeExceptionally(error);
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private boolean closing() {
        lock.lock();
        try {
            return closing;
        } finally {
            lock.unlock();
        }
    }

    private void refreshLag() {
        lagSeenNanos = System.nanoTime();
        Map<String, Long> seen = new TreeMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            OptionalLong behind = consumer.currentLag(tp);
            if (behind.isPresent()) {
                seen.put(tp.topic() + "/" + tp.partition(), behind.getAsLong());
            }
        }
        lag = java.util.Collections.unmodifiableMap(seen);
    }

    /** True when the last fetch left nothing unread in any assigned partition. */
    private boolean caughtUp() {
        for (TopicPartition tp : consumer.assignment()) {
            OptionalLong behind = consumer.currentLag(tp);
            if (behind.isEmpty() || behind.getAsLong() > 0) {
                return false;
            }
        }
        return true;
    }

    /** True once partitions are assigned and every one is fetched up to its end offset. */
    private boolean reachedEnd() {
        if (endOffsets.isEmpty()) {
            return false;
        }
        for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
            if (consumer.position(end.getKey()) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private final class Rebalance implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (endOffsets != null) {
                partitions.forEach(endOffsets::remove);
            }
            if (left || partitions.isEmpty() || closing()) {
                return;
            }
            Revoked revoked = new Revoked(List.copyOf(partitions), new CompletableFuture<>());
            offer(revoked);
            // Wait for the lane, running its tasks (the checkpoint's commit) meanwhile.
            while (!revoked.handled().isDone()) {
                Task<?> task;
                lock.lock();
                try {
                    while (!closing && tasks.isEmpty() && !revoked.handled().isDone()) {
                        changed.await(POLL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
                    }
                    if (closing) {
                        return; // the lane is stopping: nothing more is emitted or committed
                    }
                    task = tasks.poll();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while the lane handled a revocation", e);
                } finally {
                    lock.unlock();
                }
                if (task != null) {
                    task.run(consumer);
                }
            }
            revoked.handled().join(); // the lane's failure, if it failed, fails the poll
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            onAssigned.assigned(consumer, partitions);
            if (endOffsets != null) {
                endOffsets.putAll(consumer.endOffsets(partitions));
                atEnd = false;
            }
        }
    }
}
