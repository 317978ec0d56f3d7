package dev.sluice.runtime;

import dev.sluice.bridge.NativeLibrary;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks on the files a run writes, so that two runs — two `sluice run` processes, or a run and
 * a service — never write one file: they would overwrite and, at checkpoints, cut each other's
 * rows. A file's lock is a lock file of its own in {@code $XDG_CACHE_HOME/sluice/locks} (named by
 * the hash of the file's path), locked with the OS while the run holds it and naming the run
 * inside, so a refused run can say which one writes there. The output file itself is not
 * locked: POSIX locks end when any descriptor of the file closes, and the core opens and closes
 * it. Lock files stay (a few bytes each): deleting one while another run opens it would let two
 * runs lock it.
 */
final class OutputLocks implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OutputLocks.class);

    /** The system property naming the directory of the lock files (tests, read-only homes). */
    static final String DIRECTORY_PROPERTY = "sluice.locks.dir";

    /** A file another run holds: the node that would write it here, and why not. */
    static final class Taken extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String node;

        Taken(String node, String reason) {
            super(reason);
            this.node = node;
        }

        String node() {
            return node;
        }
    }

    /** Lock files held by runs of this process, with who holds each. */
    private static final Map<Path, String> HELD_HERE = new ConcurrentHashMap<>();

    private final Map<Path, FileChannel> held = new HashMap<>();

    private OutputLocks() {}

    /**
     * Locks every file of {@code files} (path → the node writing it) for pipeline {@code pipeline}.
     *
     * @throws Taken naming the node and the run that writes the file already
     */
    static OutputLocks acquire(String pipeline, Map<Path, String> files) {
        OutputLocks locks = new OutputLocks();
        if (files.isEmpty()) {
            return locks;
        }
        try {
            Path directory = directory();
            Files.createDirectories(directory);
            for (Map.Entry<Path, String> file : files.entrySet()) {
                locks.lock(directory, file.getKey(), file.getValue(), pipeline);
            }
            return locks;
        } catch (IOException e) {
            // A home without a writable cache (a read-only container): run, unguarded, and say so.
            LOG.warn(
                    "pipeline '{}': cannot lock the files it writes ({}); another run writing one of them would not "
                            + "be refused (set -D{} to a writable directory)",
                    pipeline,
                    e.toString(),
                    DIRECTORY_PROPERTY);
            locks.close();
            return new OutputLocks();
        } catch (RuntimeException e) {
            locks.close();
            throw e;
        }
    }

    private void lock(Path directory, Path file, String node, String pipeline) throws IOException {
        Path lockFile = directory.resolve(hash(file.toAbsolutePath().normalize().toString()) + ".lock");
        String holder = "pipeline '" + pipeline + "', node '" + node + "', process "
                + ProcessHandle.current().pid() + ", since " + Instant.now();
        // Runs of this process are told apart here: a second descriptor of a lock file, once
        // closed, would drop the process's OS lock on it (POSIX).
        String here = HELD_HERE.putIfAbsent(lockFile, holder);
        if (here != null) {
            throw taken(file, node, here);
        }
        FileChannel channel;
        FileLock lock;
        try {
            channel = FileChannel.open(
                    lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            lock = channel.tryLock();
        } catch (IOException | RuntimeException e) {
            HELD_HERE.remove(lockFile);
            throw e;
        }
        if (lock == null) {
            HELD_HERE.remove(lockFile);
            String other = new String(Files.readAllBytes(lockFile), StandardCharsets.UTF_8).strip();
            channel.close();
            throw taken(file, node, other);
        }
        held.put(lockFile, channel);
        channel.truncate(0);
        channel.write(ByteBuffer.wrap(holder.getBytes(StandardCharsets.UTF_8)));
    }

    private static Taken taken(Path file, String node, String holder) {
        return new Taken(
                node,
                file + " is being written by another run" + (holder.isEmpty() ? "" : " (" + holder + ")")
                        + "; two writers would overwrite and cut each other's rows: give each its own file (a dead "
                        + "letter: set dead_letter:), or stop that run first");
    }

    private static Path directory() {
        String configured = System.getProperty(DIRECTORY_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return NativeLibrary.sluiceCache().resolve("locks");
    }

    private static String hash(String path) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(path.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Releases every lock (closing a lock file's channel releases its lock). */
    @Override
    public void close() {
        held.forEach((lockFile, channel) -> {
            try {
                channel.close();
            } catch (IOException ignored) {
                // the lock goes with the descriptor whatever close reports
            }
            HELD_HERE.remove(lockFile);
        });
        held.clear();
    }
}
