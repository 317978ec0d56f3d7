package dev.sluice.connector.jsonrows;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDecoder;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.StageContext;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Rows that leave the engine as JSON and come back as JSON — to an HTTP handler, to a script:
 * a batch's rows encoded in the core (one JSON object each, as the JSON sinks write them), JSON
 * arrays of answered rows cut into rows, and those decoded in the core into a declared schema.
 * Shared by the {@code http} and {@code script} transforms; used on one lane.
 */
public final class JsonRows implements AutoCloseable {

    private static final JsonFactory JSON = new JsonFactory();

    /** One answered row: what it answers ({@code origin}, for messages) and where its JSON lies. */
    public record Row<T>(T origin, int element, byte[] body, int start, int length) {}

    /** Where an answered row that does not fit the schema goes, with the decoder's reason. */
    @FunctionalInterface
    public interface Misfit<T> {
        void reject(Row<T> row, byte[] json, String error);
    }

    private final StageContext context;
    private final NativeEncoder encoder = new NativeEncoder("json", false, true, List.of());
    private final NativeDecoder decoder;

    /** Rows decoded into {@code schema} (its types as {@code ColumnTypes} names them). */
    public JsonRows(StageContext context, Schema schema) {
        this.context = context;
        this.decoder = NativeDecoder.create(context.allocator(), "json", ",", schema);
    }

    /** The schema of the batches {@link #emit} makes, exactly as the core decodes them. */
    public Schema schema() {
        return decoder.schema();
    }

    /** The batch's rows as JSON objects, encoded in the core. */
    public List<byte[]> encode(Batch batch) {
        return encode(encoder, batch, context.allocator());
    }

    /** The batch's rows as JSON objects, encoded in the core by {@code encoder} (JSON, one per row). */
    public static List<byte[]> encode(NativeEncoder encoder, Batch batch, BufferAllocator allocator) {
        List<byte[]> encoded = new ArrayList<>();
        NativeBatch.with(
                batch,
                allocator,
                nativeBatch -> encoder.encodeRecords(nativeBatch, records -> {
                    for (int i = 0; i < records.count(); i++) {
                        byte[] row = new byte[(int) records.length(i)];
                        MemorySegment.copy(records.data(), JAVA_BYTE, records.start(i), row, 0, row.length);
                        encoded.add(row);
                    }
                }));
        return encoded;
    }

    /** {@code rows} as one JSON array. */
    public static byte[] array(List<byte[]> rows) {
        int bytes = 2 + Math.max(0, rows.size() - 1);
        for (byte[] row : rows) {
            bytes += row.length;
        }
        byte[] out = new byte[bytes];
        out[0] = '[';
        int at = 1;
        for (int i = 0; i < rows.size(); i++) {
            if (i > 0) {
                out[at++] = ',';
            }
            System.arraycopy(rows.get(i), 0, out, at, rows.get(i).length);
            at += rows.get(i).length;
        }
        out[at] = ']';
        return out;
    }

    /**
     * Adds where each element of {@code body}, a JSON array of objects, lies to {@code rows},
     * each with {@code origin}; returns what is wrong with the body instead, adding nothing.
     */
    public static <T> String split(byte[] body, T origin, List<Row<T>> rows) {
        List<Row<T>> found = new ArrayList<>();
        try (JsonParser parser = JSON.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_ARRAY) {
                return "something other than a JSON array" + startOf(body);
            }
            for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
                if (token != JsonToken.START_OBJECT) {
                    return "an array whose element " + found.size() + " is not a JSON object" + startOf(body);
                }
                // Byte offsets (the parser reads bytes), so multi-byte characters count right.
                int start = (int) parser.currentTokenLocation().getByteOffset();
                parser.skipChildren();
                int end = (int) parser.currentLocation().getByteOffset();
                found.add(new Row<>(origin, found.size(), body, start, end - start));
            }
            if (parser.nextToken() != null) {
                return "more than one JSON value" + startOf(body);
            }
        } catch (JsonProcessingException e) {
            return "malformed JSON (" + e.getOriginalMessage() + ")" + startOf(body);
        } catch (IOException e) {
            return "unreadable JSON (" + e.getMessage() + ")" + startOf(body);
        }
        rows.addAll(found);
        return null;
    }

    /** The start of a body for messages. */
    private static String startOf(byte[] body) {
        String text = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8).strip();
        return text.isEmpty()
                ? ": an empty body"
                : ": " + text.replaceAll("\\s+", " ") + (body.length > 200 ? "…" : "");
    }

    /**
     * Decodes {@code rows} in the core, in order, and emits them as one batch; a row that does
     * not fit the schema goes to {@code misfit} instead.
     */
    public <T> void emit(List<Row<T>> rows, Emitter out, Misfit<T> misfit) {
        if (rows.isEmpty()) {
            return;
        }
        long bytes = 0;
        for (Row<T> row : rows) {
            bytes += row.length();
        }
        NativeDecoder.Decoded decoded;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(Math.max(1, bytes), 8);
            MemorySegment offsets = arena.allocate((rows.size() + 1L) * Long.BYTES, 8);
            long at = 0;
            for (int i = 0; i < rows.size(); i++) {
                Row<T> row = rows.get(i);
                offsets.setAtIndex(JAVA_LONG, i, at);
                MemorySegment.copy(row.body(), row.start(), data, JAVA_BYTE, at, row.length());
                at += row.length();
            }
            offsets.setAtIndex(JAVA_LONG, rows.size(), at);
            decoded = decoder.decode(data, offsets, rows.size(), null);
        }
        try (NativeBatch errors = decoded.errors()) {
            if (errors != null) {
                reject(errors, rows, misfit);
            }
        } catch (RuntimeException e) {
            decoded.batch().close();
            throw e;
        }
        if (decoded.batch().rowCount() == 0) {
            decoded.batch().close();
        } else {
            out.emit(decoded.batch());
        }
    }

    private <T> void reject(NativeBatch errors, List<Row<T>> rows, Misfit<T> misfit) {
        try (VectorSchemaRoot root = errors.toVectors(context.allocator())) {
            BigIntVector index = (BigIntVector) root.getVector("index");
            VarBinaryVector record = (VarBinaryVector) root.getVector("record");
            VarCharVector error = (VarCharVector) root.getVector("error");
            for (int i = 0; i < root.getRowCount(); i++) {
                misfit.reject(
                        rows.get((int) index.get(i)), record.get(i), new String(error.get(i), StandardCharsets.UTF_8));
            }
        }
    }

    @Override
    public void close() {
        decoder.close();
    }
}
