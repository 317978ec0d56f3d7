package dev.sluice.state;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Logger;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Status;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The state DB of one pipeline: rows {@code (namespace, key) → (data, created_at)} in a RocksDB
 * database in one directory. Checkpoints keep source positions here; the CLI reads and patches
 * it ({@code sluice state}). The byte layout is {@link StateCodec}'s.
 *
 * <p>One process at a time opens a directory read-write: RocksDB locks it, and a second
 * read-write open fails with {@link StateLockedException}. Any number of read-only opens work
 * alongside, each seeing the rows durably written when it opened (every write here is synced).
 *
 * <p>Thread-safety: all reads and writes may run concurrently from several threads (RocksDB
 * synchronizes them). {@link #close()} must not race with other calls: close after the last use.
 * Use after close throws {@link IllegalStateException} rather than touching freed native memory.
 */
public final class StateStore implements AutoCloseable {

    /** Old RocksDB info logs to keep: every CLI open starts a new one. */
    private static final int KEEP_LOG_FILES = 3;

    static {
        // RocksDB copies its 15 MB library to a temporary file at every start (~150 ms); load it
        // from Sluice's native cache instead, extracted once. Fall back to RocksDB's own loader.
        java.net.URL url =
                RocksDB.class.getResource("/" + org.rocksdb.util.Environment.getJniLibraryFileName("rocksdb"));
        if (url != null) {
            // loadLibrary(paths) looks in each directory for the JNI file name of "rocksdbjni"
            // (librocksdbjnijni-<platform>.so), not the name the JAR uses.
            String file = org.rocksdb.util.Environment.getJniLibraryFileName("rocksdbjni");
            RocksDB.loadLibrary(java.util.List.of(dev.sluice.bridge.NativeLibrary.extractOnce(url, file)
                    .getParent()
                    .toString()));
        } else {
            RocksDB.loadLibrary();
        }
    }

    private final Path dir;
    private final boolean readOnly;
    private final Options options;
    private final Logger logger;
    private final WriteOptions syncWrites;
    private final RocksDB db;
    private final AtomicBoolean closed = new AtomicBoolean();

    private StateStore(
            Path dir, boolean readOnly, Options options, Logger logger, WriteOptions syncWrites, RocksDB db) {
        this.dir = dir;
        this.readOnly = readOnly;
        this.options = options;
        this.logger = logger;
        this.syncWrites = syncWrites;
        this.db = db;
    }

    /**
     * Opens the state DB in {@code dir} read-write, creating the directory and the DB if missing.
     *
     * @throws StateLockedException if another process (or handle) has it open read-write
     * @throws StateException if it cannot be opened for another reason
     */
    public static StateStore open(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StateException("cannot create the state directory " + dir + ": " + e, e);
        }
        return openReadWrite(dir, true);
    }

    /**
     * Opens an existing state DB read-write; unlike {@link #open} it creates nothing.
     *
     * @throws StateNotFoundException if {@code dir} holds no state DB
     * @throws StateLockedException if another process (or handle) has it open read-write
     */
    public static StateStore openExisting(Path dir) {
        requireExisting(dir);
        return openReadWrite(dir, false);
    }

    /**
     * Opens an existing state DB read-only. It needs no lock, so it works while a running
     * pipeline has the DB open; it sees the rows written up to the moment it opened.
     *
     * @throws StateNotFoundException if {@code dir} holds no state DB
     */
    public static StateStore openReadOnly(Path dir) {
        requireExisting(dir);
        Options options = new Options();
        // A read-only open would otherwise start a new LOG file in the directory, renaming the
        // writer's LOG from under it; the writer owns the directory's log.
        Logger logger = new DiscardingLogger();
        options.setLogger(logger);
        try {
            RocksDB db = RocksDB.openReadOnly(options, dir.toString());
            return new StateStore(dir, true, options, logger, null, db);
        } catch (RocksDBException e) {
            options.close();
            logger.close();
            throw new StateException("cannot read the state directory " + dir + ": " + e.getMessage(), e);
        }
    }

    private static StateStore openReadWrite(Path dir, boolean create) {
        Options options = new Options().setCreateIfMissing(create).setKeepLogFileNum(KEEP_LOG_FILES);
        WriteOptions syncWrites = new WriteOptions().setSync(true);
        try {
            RocksDB db = RocksDB.open(options, dir.toString());
            return new StateStore(dir, false, options, null, syncWrites, db);
        } catch (RocksDBException e) {
            syncWrites.close();
            options.close();
            throw openFailure(dir, e);
        }
    }

    private static StateException openFailure(Path dir, RocksDBException e) {
        String message = String.valueOf(e.getMessage());
        boolean ioError = e.getStatus() != null && e.getStatus().getCode() == Status.Code.IOError;
        if (ioError && message.contains("lock hold by current process")) {
            return new StateLockedException(
                    "the state directory " + dir + " is already open for writing in this process", e);
        }
        if (ioError && message.contains("LOCK")) {
            return new StateLockedException(
                    "the state directory " + dir + " is in use by another process (is the pipeline running?)", e);
        }
        return new StateException("cannot open the state directory " + dir + ": " + message, e);
    }

    private static void requireExisting(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new StateNotFoundException("no state directory at " + dir);
        }
        if (!Files.isRegularFile(dir.resolve("CURRENT"))) {
            throw new StateNotFoundException(dir + " is not a state directory (it holds no RocksDB database)");
        }
    }

    /** The directory this store lives in. */
    public Path directory() {
        return dir;
    }

    /** Whether this handle was opened with {@link #openReadOnly}. */
    public boolean isReadOnly() {
        return readOnly;
    }

    /**
     * Writes {@code data} under {@code (namespace, key)}, replacing any row there, with
     * {@code created_at} = now; synced to disk before returning.
     *
     * @throws IllegalArgumentException if {@code data} is not JSON or the namespace is invalid
     */
    public void put(String namespace, String key, String data) {
        putAll(List.of(new StateRow(namespace, key, data, Instant.now())));
    }

    /**
     * Writes all {@code rows} atomically (one RocksDB write batch: after a crash either all of
     * them or none are there) and synced to disk before returning. Each row keeps its own
     * {@code createdAt}; its data is validated and stored in compact form.
     *
     * @throws IllegalArgumentException if a row's data is not JSON; nothing is written then
     */
    public void putAll(List<StateRow> rows) {
        checkWritable();
        if (rows.isEmpty()) {
            return;
        }
        // Encode everything first, so that one bad row fails the call before anything is written.
        List<byte[]> keys = new ArrayList<>(rows.size());
        List<byte[]> values = new ArrayList<>(rows.size());
        for (StateRow row : rows) {
            keys.add(StateCodec.key(row.namespace(), row.key()));
            values.add(StateCodec.value(row.createdAt(), StateJson.normalize(row.data())));
        }
        try (WriteBatch batch = new WriteBatch()) {
            for (int i = 0; i < keys.size(); i++) {
                batch.put(keys.get(i), values.get(i));
            }
            db.write(syncWrites, batch);
        } catch (RocksDBException e) {
            throw failure("write " + rows.size() + " rows to", e);
        }
    }

    /** The row under {@code (namespace, key)}, if any. */
    public Optional<StateRow> get(String namespace, String key) {
        checkOpen();
        byte[] k = StateCodec.key(namespace, key);
        try {
            byte[] value = db.get(k);
            return value == null ? Optional.empty() : Optional.of(StateCodec.decode(k, value));
        } catch (RocksDBException e) {
            throw failure("read", e);
        }
    }

    /**
     * Deletes the row under {@code (namespace, key)}, synced; returns whether there was one.
     * (Check and delete are two steps: a concurrent put of the same row may be lost or not.)
     */
    public boolean delete(String namespace, String key) {
        checkWritable();
        byte[] k = StateCodec.key(namespace, key);
        try {
            if (db.get(k) == null) {
                return false;
            }
            db.delete(syncWrites, k);
            return true;
        } catch (RocksDBException e) {
            throw failure("delete from", e);
        }
    }

    /**
     * Deletes every row whose namespace starts with {@code namespacePrefix} ({@code ""}: all
     * rows) atomically and synced; returns how many there were.
     */
    public long deletePrefix(String namespacePrefix) {
        checkWritable();
        return deleteKeysStartingWith(StateCodec.namespacePrefix(namespacePrefix));
    }

    /** Deletes every row of namespace {@code namespace} (exactly that one) atomically and synced; returns how many. */
    public long deleteNamespace(String namespace) {
        checkWritable();
        // The key prefix "namespace 0x00" matches that namespace only, not longer ones it starts.
        return deleteKeysStartingWith(StateCodec.key(namespace, ""));
    }

    private long deleteKeysStartingWith(byte[] prefix) {
        try (WriteBatch batch = new WriteBatch();
                RocksIterator it = db.newIterator()) {
            long count = 0;
            for (it.seek(prefix); it.isValid() && StateCodec.startsWith(it.key(), prefix); it.next()) {
                batch.delete(it.key());
                count++;
            }
            it.status();
            if (count > 0) {
                db.write(syncWrites, batch);
            }
            return count;
        } catch (RocksDBException e) {
            throw failure("delete from", e);
        }
    }

    /**
     * The rows whose namespace starts with {@code namespacePrefix} ({@code ""}: all rows), in
     * order of namespace then key (by their UTF-8 bytes).
     *
     * @throws StateException if a row cannot be decoded (e.g. an unknown format version)
     */
    public List<StateRow> scan(String namespacePrefix) {
        return scanFrom(StateCodec.namespacePrefix(namespacePrefix));
    }

    /**
     * The rows of namespace {@code namespace} whose key starts with {@code keyPrefix}, in key order;
     * rows of other keys are not read (a node's positions next to a big table's checkpoint).
     *
     * @throws StateException if a row cannot be decoded
     */
    public List<StateRow> scan(String namespace, String keyPrefix) {
        return scanFrom(StateCodec.key(namespace, keyPrefix));
    }

    /** Whether namespace {@code namespace} holds a row whose key starts with {@code keyPrefix}; reads at most one. */
    public boolean hasRows(String namespace, String keyPrefix) {
        checkOpen();
        byte[] prefix = StateCodec.key(namespace, keyPrefix);
        try (RocksIterator it = db.newIterator()) {
            it.seek(prefix);
            boolean found = it.isValid() && StateCodec.startsWith(it.key(), prefix);
            it.status();
            return found;
        } catch (RocksDBException e) {
            throw failure("read", e);
        }
    }

    /** The rows whose encoded key starts with {@code prefix}, in key order. */
    private List<StateRow> scanFrom(byte[] prefix) {
        checkOpen();
        List<StateRow> rows = new ArrayList<>();
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(prefix); it.isValid() && StateCodec.startsWith(it.key(), prefix); it.next()) {
                rows.add(StateCodec.decode(it.key(), it.value()));
            }
            it.status();
        } catch (RocksDBException e) {
            throw failure("read", e);
        }
        return rows;
    }

    /** The number of rows (exact: it walks the keys). */
    public long count() {
        checkOpen();
        try (RocksIterator it = db.newIterator()) {
            long count = 0;
            for (it.seekToFirst(); it.isValid(); it.next()) {
                count++;
            }
            it.status();
            return count;
        } catch (RocksDBException e) {
            throw failure("read", e);
        }
    }

    /** Frees the native RocksDB objects and releases the directory lock; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            db.closeE();
        } catch (RocksDBException e) {
            throw failure("close", e);
        } finally {
            if (syncWrites != null) {
                syncWrites.close();
            }
            options.close();
            if (logger != null) {
                logger.close();
            }
        }
    }

    @Override
    public String toString() {
        return "StateStore(" + dir + (readOnly ? ", read-only" : "") + (closed.get() ? ", closed" : "") + ")";
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the state store " + dir + " is closed");
        }
    }

    private void checkWritable() {
        checkOpen();
        if (readOnly) {
            throw new IllegalStateException("the state store " + dir + " is open read-only");
        }
    }

    private StateException failure(String action, RocksDBException e) {
        return new StateException("cannot " + action + " the state directory " + dir + ": " + e.getMessage(), e);
    }

    /** Drops RocksDB's info log: failures reach callers as exceptions anyway. */
    private static final class DiscardingLogger extends Logger {

        DiscardingLogger() {
            super(InfoLogLevel.ERROR_LEVEL);
        }

        @Override
        protected void log(InfoLogLevel level, String message) {
            // Intentionally empty; see openReadOnly.
        }
    }
}
