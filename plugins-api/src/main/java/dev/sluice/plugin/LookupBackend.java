package dev.sluice.plugin;

import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import java.util.Collection;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A store a dynamic table can be a bounded cache of: {@code backend: NAME} in a {@code tables:}
 * entry, with this backend's settings in the entry's block named {@code NAME}. Found with
 * {@link java.util.ServiceLoader} ({@code META-INF/services/dev.sluice.plugin.LookupBackend}),
 * like stage types. The engine asks the store only for the keys a batch needs that the cache
 * does not hold, in one {@link Lookup#load} per batch, and the backend tells it which cached
 * keys may have changed ({@link Lookup#follow}).
 */
public interface LookupBackend {

    /** The major version of this interface; the engine refuses a backend built against another. */
    int SPI_VERSION = 1;

    /** Implement as {@code return SPI_VERSION;} (compiled into the implementing class). */
    int spiVersion();

    /** What {@code backend:} names it by, e.g. {@code postgres}; also the name of its settings block. */
    String name();

    /** The settings of its block, checked by the engine (file, line and key on every problem). */
    ConfigDef config();

    /**
     * A lookup of the rows of a table with {@code columns}, keyed by the columns {@code key} (one
     * or more, in the key's order). It should not connect yet: {@code validate} opens pipelines
     * too, without running them.
     *
     * @throws InvalidSettingException naming the setting at fault
     */
    Lookup open(Settings settings, Schema columns, List<String> key, Context context);

    /** Where the lookup runs. */
    record Context(String pipeline, String table, BufferAllocator allocator) {}

    /** The lookups of one table. */
    interface Lookup extends AutoCloseable {

        /**
         * The rows of {@code keys} (distinct keys, a column per key column; borrowed for the call) that
         * exist: at most one per key, the table's columns by name, in any order, as a new batch the
         * engine takes over; or null when none exists. Called on the thread running the transform
         * that asked; an exception fails that batch with its message.
         */
        Batch load(Batch keys) throws Exception;

        /**
         * Starts telling {@code changes} which cached keys may be stale (a thread of its own, or
         * none); returns at once. Called once, when the pipeline starts running.
         */
        void follow(Changes changes);
    }

    /** What a lookup tells its table: keys whose cached rows must be read again. */
    interface Changes {

        /** The rows of these keys may have changed: each key its columns' values as text, in the key's order. */
        void forget(Collection<List<String>> keys);

        /** Any row may have changed. */
        void forgetAll();
    }
}
