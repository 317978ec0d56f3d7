package dev.sluice.connector.http;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDecoder;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code http} transform: an external handler. Each batch's rows go as JSON arrays of up to
 * {@code batch_size} rows, POSTed to {@code url} (up to {@code max_in_flight} at once, each
 * retried as the webhook sink's are); every answer is a JSON array of rows of the declared
 * {@code schema}, and the rows of all answers, in request order, are the batch's output. The
 * handler may answer with fewer or more rows than it was sent (filter, enrich, expand).
 *
 * <p>A batch is finished before the next one starts, so a barrier never finds a request in
 * flight and a replay from a checkpoint sends its batches' requests again (at-least-once: the
 * handler sees a row again after a restart). A request refused after its retries, or answered
 * with something that is not an array of objects, sends its rows to {@code on_error}; an answered
 * row that does not fit the schema goes there alone.
 */
public final class HttpTransform implements Transform {

    public static final String SCHEMA = "schema";
    public static final String MAX_IN_FLIGHT = "max_in_flight";

    /** The header carrying the request's number in this run (per node), from 0. */
    public static final String SEQUENCE_HEADER = "X-Sluice-Sequence";

    private static final JsonFactory JSON = new JsonFactory();

    /** The {@code http} transform's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = HttpEndpoint.define(new ConfigDef())
                .define(
                        SCHEMA,
                        ConfigType.MAP,
                        null,
                        true,
                        "The columns of the rows the handler answers with, name → type (" + ColumnTypes.ACCEPTED
                                + "). Fields of an answered row that are not declared are left out; a declared "
                                + "one that is missing is NULL.")
                .define(
                        StandardKeys.BATCH_SIZE,
                        ConfigType.INT,
                        500,
                        false,
                        "Most rows in one request; a batch of more rows is sent as several requests.",
                        Validator.positive())
                .define(
                        MAX_IN_FLIGHT,
                        ConfigType.INT,
                        4,
                        false,
                        "Requests of one batch sent at once; their answers are put together in request order.",
                        Validator.positive())
                .defineEnum(
                        StandardKeys.ON_ERROR,
                        ErrorPolicy.CONFIG_NAMES,
                        "fail",
                        false,
                        "What to do with the rows of a request answered with a non-2xx status after its retries "
                                + "or with something other than a JSON array of objects, and with an answered row "
                                + "that does not fit `schema`: fail the run, write them with the reason to the dead "
                                + "letter, or skip them (counted). A request that gets no answer (timeout, connection "
                                + "refused) after its retries always fails the run.")
                .define(
                        StandardKeys.DEAD_LETTER,
                        ConfigType.PATH,
                        null,
                        false,
                        "The dead-letter file (JSON lines). Default: <pipeline>.<node>.dead-letter.jsonl next to the "
                                + "first file sink's output, else next to the pipeline file.");

        public Type() {
            super(
                    NodeKind.TRANSFORM,
                    "http",
                    "An external handler: POSTs each batch's rows as JSON arrays of `batch_size` rows to `url` and "
                            + "emits the rows it answers with (a JSON array of objects of the declared `schema`). "
                            + "Retries with backoff; a batch's requests finish before the next batch.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public HttpTransform create(Settings settings) {
            return new HttpTransform(settings);
        }
    }

    private final Settings config;
    private final int batchSize;
    private final int maxInFlight;

    private StageContext context;
    private HttpEndpoint endpoint;
    private NativeEncoder encoder;
    private NativeDecoder decoder;
    private ExecutorService workers;

    private long rowsSeen;
    private long sequence;

    /** The rows of one request: their JSON, and the run's row number of the first. */
    private record Request(long sequence, long firstRow, List<byte[]> rows, byte[] body) {}

    /** One answered row: its request and where its JSON lies in the answer's body. */
    private record Answered(Request request, int element, byte[] body, int start, int length) {}

    HttpTransform(Settings config) {
        this.config = config;
        this.batchSize = config.getInt(StandardKeys.BATCH_SIZE);
        this.maxInFlight = config.getInt(MAX_IN_FLIGHT);
    }

    @Override
    public Schema open(StageContext context, List<String> inputNames, List<Schema> inputSchemas) {
        this.context = context;
        if (inputNames.size() != 1) {
            throw new InvalidSettingException("from", "an http transform reads one input, not " + inputNames.size());
        }
        Schema declared;
        try {
            declared = ColumnTypes.schema(config.getMap(SCHEMA));
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(SCHEMA, e.getMessage());
        }
        if (declared.getFields().isEmpty()) {
            throw new InvalidSettingException(SCHEMA, "declares no column");
        }
        endpoint = new HttpEndpoint(config, context, "transform", List.of(SEQUENCE_HEADER));
        encoder = new NativeEncoder("json", false, true, List.of());
        decoder = NativeDecoder.create(context.allocator(), "json", ",", declared);
        return decoder.schema();
    }

    @Override
    public void process(int input, Batch batch, Emitter out) throws Exception {
        List<Request> requests = requests(encode(batch));
        if (requests.isEmpty()) {
            return;
        }
        if (workers == null) { // the client and workers exist only for a run: validation stops at open
            endpoint.start();
            workers = Executors.newFixedThreadPool(maxInFlight, r -> {
                Thread t = new Thread(r, "sluice-http-" + context.nodeName());
                t.setDaemon(true);
                return t;
            });
        }
        List<Future<HttpEndpoint.Answer>> answers = new ArrayList<>();
        for (Request request : requests) {
            Map<String, String> own = Map.of(SEQUENCE_HEADER, Long.toString(request.sequence()));
            answers.add(workers.submit(() -> endpoint.post(request.body(), own, describe(request), () -> false)));
        }
        List<Answered> rows = new ArrayList<>();
        try {
            for (int i = 0; i < requests.size(); i++) {
                Request request = requests.get(i);
                HttpEndpoint.Answer answer = answerOf(answers.get(i));
                if (answer.refused()) {
                    rejectAll(request, answer.refusal());
                    continue;
                }
                String problem = rowsOf(request, answer.body(), rows);
                if (problem != null) {
                    rejectAll(request, describe(request) + " was answered with " + problem);
                }
            }
        } finally {
            answers.forEach(f -> f.cancel(true)); // after a failure, stop retrying the others
        }
        if (!rows.isEmpty()) {
            emitDecoded(rows, out);
        }
    }

    /** The batch's rows as JSON objects, encoded in the core. */
    private List<byte[]> encode(Batch batch) {
        List<byte[]> encoded = new ArrayList<>();
        NativeBatch.with(
                batch,
                context.allocator(),
                nativeBatch -> encoder.encodeRecords(nativeBatch, records -> {
                    for (int i = 0; i < records.count(); i++) {
                        byte[] row = new byte[(int) records.length(i)];
                        MemorySegment.copy(records.data(), JAVA_BYTE, records.start(i), row, 0, row.length);
                        encoded.add(row);
                    }
                }));
        return encoded;
    }

    /** The rows cut into requests of at most {@code batch_size}, each body a JSON array. */
    private List<Request> requests(List<byte[]> rows) {
        List<Request> requests = new ArrayList<>();
        for (int from = 0; from < rows.size(); from += batchSize) {
            List<byte[]> part = rows.subList(from, Math.min(rows.size(), from + batchSize));
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.write('[');
            for (int i = 0; i < part.size(); i++) {
                if (i > 0) {
                    body.write(',');
                }
                body.writeBytes(part.get(i));
            }
            body.write(']');
            requests.add(new Request(sequence++, rowsSeen + from, part, body.toByteArray()));
        }
        rowsSeen += rows.size();
        return requests;
    }

    private String describe(Request request) {
        return "POST " + endpoint.target() + " (request " + request.sequence() + ", rows " + request.firstRow() + ".."
                + (request.firstRow() + request.rows().size() - 1) + ")";
    }

    /** The answer of one request; no answer after its retries fails the run. */
    private static HttpEndpoint.Answer answerOf(Future<HttpEndpoint.Answer> future) throws Exception {
        try {
            return future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException noAnswer) {
                throw new IllegalStateException(noAnswer.getMessage(), noAnswer);
            }
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /**
     * Adds where each row of an answer's body lies (elements of a JSON array, each an object) to
     * {@code rows}; returns what is wrong with the body instead, adding nothing.
     */
    private static String rowsOf(Request request, byte[] body, List<Answered> rows) {
        List<Answered> found = new ArrayList<>();
        try (JsonParser parser = JSON.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_ARRAY) {
                return "something other than a JSON array" + startOf(body);
            }
            for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
                if (token != JsonToken.START_OBJECT) {
                    return "an array whose element " + found.size() + " is not a JSON object" + startOf(body);
                }
                int start = (int) parser.currentTokenLocation().getByteOffset();
                parser.skipChildren();
                int end = (int) parser.currentLocation().getByteOffset();
                found.add(new Answered(request, found.size(), body, start, end - start));
            }
            if (parser.nextToken() != null) {
                return "more than one JSON value" + startOf(body);
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
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

    /** Every row of a request goes to on_error (fail throws). */
    private void rejectAll(Request request, String reason) {
        for (int i = 0; i < request.rows().size(); i++) {
            context.reject(request.firstRow() + i, request.rows().get(i), reason);
        }
    }

    /** Decodes the answered rows in the core, in order, and emits them as one batch. */
    private void emitDecoded(List<Answered> rows, Emitter out) {
        long bytes = 0;
        for (Answered row : rows) {
            bytes += row.length();
        }
        NativeDecoder.Decoded decoded;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(Math.max(1, bytes), 8);
            MemorySegment offsets = arena.allocate((rows.size() + 1L) * Long.BYTES, 8);
            long at = 0;
            for (int i = 0; i < rows.size(); i++) {
                Answered row = rows.get(i);
                offsets.setAtIndex(JAVA_LONG, i, at);
                MemorySegment.copy(row.body(), row.start(), data, JAVA_BYTE, at, row.length());
                at += row.length();
            }
            offsets.setAtIndex(JAVA_LONG, rows.size(), at);
            decoded = decoder.decode(data, offsets, rows.size(), null);
        }
        try (NativeBatch errors = decoded.errors()) {
            if (errors != null) {
                rejectAnswered(errors, rows);
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

    /** Answered rows that do not fit the schema go to on_error, each with its request and place. */
    private void rejectAnswered(NativeBatch errors, List<Answered> rows) {
        try (VectorSchemaRoot root = errors.toVectors(context.allocator())) {
            BigIntVector index = (BigIntVector) root.getVector("index");
            VarBinaryVector record = (VarBinaryVector) root.getVector("record");
            VarCharVector error = (VarCharVector) root.getVector("error");
            for (int i = 0; i < root.getRowCount(); i++) {
                Answered row = rows.get((int) index.get(i));
                String message = new String(error.get(i), StandardCharsets.UTF_8);
                context.reject(
                        row.request().firstRow(),
                        record.get(i),
                        "row " + row.element() + " of the answer to " + describe(row.request()) + ": " + message);
            }
        }
    }

    @Override
    public void close() throws Exception {
        if (workers != null) {
            workers.shutdownNow();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (decoder != null) {
            decoder.close();
        }
    }
}
