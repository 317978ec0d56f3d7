package dev.sluice.plugin;

import org.apache.arrow.vector.types.pojo.Schema;

/** A source of batches: a generator, a file, a Kafka topic. */
public interface Source extends AutoCloseable {

    /** What a call to {@link #poll} did. */
    enum Poll {
        /** Emitted one or more batches. */
        EMITTED,
        /** Nothing available now; the runtime polls again soon. */
        IDLE,
        /** Bounded input is exhausted; {@code poll} is not called again. */
        END
    }

    /**
     * Prepares the source and returns the schema of the batches it will emit. Reading to learn
     * the schema is fine; anything with an effect outside the process (joining a consumer
     * group, committing, writing) belongs in {@link #start}, because {@code sluice validate}
     * stops here.
     */
    Schema open(StageContext context) throws Exception;

    /**
     * Connects to the input for reading (e.g. joins the consumer group). Called once, only
     * when the pipeline is about to run, after every stage has opened and every check passed;
     * never by validation. Default: nothing to connect.
     */
    default void start() throws Exception {}

    /** Emits what is available, without blocking for long (at most the flush interval). */
    Poll poll(Emitter out) throws Exception;

    /**
     * A barrier of {@code epoch} is about to be injected behind the batches emitted so far:
     * remember the position those batches reached. Default: nothing to remember.
     */
    default void onBarrier(Barrier barrier) throws Exception {}

    /**
     * The positions recorded at the barrier of {@code epoch}, as key → JSON, for the state DB
     * (e.g. {@code "topic/3" → {"offset": 42}}). On restart they come back through
     * {@link StageContext#restoredPositions()}. Default: none.
     */
    default java.util.Map<String, String> positions(long epoch) {
        return java.util.Map.of();
    }

    /**
     * How many records of each input partition are not read yet (e.g. {@code "topic/3" → 120}),
     * as the lane last saw it: an immutable snapshot, since it is read from other threads (the
     * service's status). Default: none (the source cannot tell).
     */
    default java.util.Map<String, Long> lag() {
        return java.util.Map.of();
    }

    /** Epoch {@code epoch} is durable in every sink: the positions recorded for it may be committed. */
    default void onCheckpointComplete(long epoch) throws Exception {}

    @Override
    void close() throws Exception;
}
