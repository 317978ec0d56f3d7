package dev.sluice.runtime;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;

/**
 * A dead-letter destination as a JSON-lines file: one object per rejected record with the
 * node, position (line number or offset), error, time and the record itself (as text when it
 * is valid UTF-8, else base64). Created on the first rejected record; flushed at barriers.
 */
public final class DeadLetterFile implements AutoCloseable {

    private static final JsonFactory JSON = new JsonFactory();

    private final Path path;
    private OutputStream out;
    private long written;

    public DeadLetterFile(Path path) {
        this.path = path;
    }

    public Path path() {
        return path;
    }

    public long written() {
        return written;
    }

    public void write(String node, long position, byte[] record, String error) throws IOException {
        if (out == null) {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            out = new BufferedOutputStream(Files.newOutputStream(path));
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

    public void flush() throws IOException {
        if (out != null) {
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        if (out != null) {
            out.close();
            out = null;
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
