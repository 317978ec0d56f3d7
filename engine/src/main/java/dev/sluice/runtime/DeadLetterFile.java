package dev.sluice.runtime;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.plugin.FileCheckpoint;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;

/**
 * A dead-letter destination as a JSON-lines file: one object per rejected record with the
 * node, position (line number or offset), error, time and the record itself (as text when it
 * is valid UTF-8, else base64). Created on the first rejected record; flushed and synced at
 * barriers, where its length is recorded with the epoch's positions. A resumed run continues
 * the file from that length (lines of the epochs it replays are written again, once); a run
 * that starts over replaces it.
 */
public final class DeadLetterFile implements AutoCloseable {

    private static final JsonFactory JSON = new JsonFactory();
    /** The position key of the file's length ({@link FileCheckpoint}). */
    private static final String LENGTH = "length";

    private final Path path;
    private final String stateKey;
    /** The length to continue from (a resumed run), or -1 to replace the file. */
    private final long continueAt;

    /** For the lock on the file (OutputLocks), taken when it is first written. */
    private final String pipeline;

    private final String node;

    private OutputLocks lock;
    private FileChannel channel;
    private OutputStream out;
    private long written;
    /** The file's length at the last barrier, or -1 while unknown (not opened by a new run). */
    private long durableLength;

    /**
     * @param stateKey the name its length is saved under in the state DB
     * @param continueAt the length a resumed run continues from, or -1 to replace the file
     * @param pipeline the pipeline and {@code node} the node writing it, named to another run
     *     refused the file
     */
    public DeadLetterFile(Path path, String stateKey, long continueAt, String pipeline, String node) {
        this.path = path;
        this.pipeline = pipeline;
        this.node = node;
        this.stateKey = stateKey;
        this.continueAt = continueAt;
        this.durableLength = continueAt;
    }

    /**
     * The length recorded in {@code positions} (as saved from {@link #positions()}) for
     * {@code path}, or -1 when none was, or for another file (the dead letter moved).
     */
    public static long restoredLength(Map<String, String> positions, Path path) {
        String json = positions.get(LENGTH);
        return json == null ? -1 : FileCheckpoint.parse(json).lengthOf(path);
    }

    public Path path() {
        return path;
    }

    /** The name of this file's row in the state DB. */
    public String stateKey() {
        return stateKey;
    }

    /** The length at the last barrier, for the state DB; empty while there is none to keep. */
    public Map<String, String> positions() {
        return durableLength < 0 ? Map.of() : Map.of(LENGTH, new FileCheckpoint(path, durableLength).toJson());
    }

    public long written() {
        return written;
    }

    public void write(String node, long position, byte[] record, String error) throws IOException {
        if (out == null) {
            open();
        }
        try (JsonGenerator json = JSON.createGenerator(new NonClosing(out))) {
            json.writeStartObject();
            json.writeStringField("node", node);
            json.writeNumberField("position", position);
            json.writeStringField("error", error);
            json.writeStringField("time", Instant.now().toString());
            String text = utf8OrNull(record);
            if (text != null) {
                json.writeStringField("record", text);
            } else {
                json.writeStringField("record_base64", Base64.getEncoder().encodeToString(record));
            }
            json.writeEndObject();
        }
        out.write('\n');
        written++;
    }

    /**
     * Opens the file: replaced by a new run; continued by a resumed one, cut back to the length
     * its last finalized epoch recorded. A file shorter than that (moved away, rotated) is
     * appended to as it is: nothing in it is this run's to cut.
     */
    private void open() throws IOException {
        // Locked when first written, not at start: processes of one pipeline on one machine
        // share its default dead letter's path, and only writing it would mix their lines.
        try {
            if (lock == null) {
                lock = OutputLocks.acquire(
                        pipeline, Map.of(FileClaims.real(path.toAbsolutePath().normalize()), node));
            }
        } catch (OutputLocks.Taken taken) {
            throw new IOException(taken.getMessage(), taken);
        }
        Path parent = path.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        if (continueAt < 0) {
            channel = FileChannel.open(
                    path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        } else {
            channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            if (channel.size() > continueAt) {
                channel.truncate(continueAt);
            }
            channel.position(channel.size());
        }
        out = new BufferedOutputStream(Channels.newOutputStream(channel));
    }

    /** Makes what was written durable and records the length (at a barrier). */
    public void flush() throws IOException {
        if (out != null) {
            out.flush();
            long length = channel.position();
            if (length != durableLength) {
                channel.force(false);
                durableLength = length;
            }
        }
    }

    @Override
    public void close() throws IOException {
        try {
            if (out != null) {
                out.close();
                out = null;
            }
        } finally {
            if (lock != null) {
                lock.close();
                lock = null;
            }
        }
    }

    private static String utf8OrNull(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(java.nio.ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Keeps the generator from closing the shared stream. */
    private static final class NonClosing extends java.io.FilterOutputStream {
        NonClosing(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            flush();
        }
    }
}
