package dev.sluice.connector.http;

import dev.sluice.connector.jsonrows.JsonRows;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
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

    /** The {@code http} transform's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(
                HttpEndpoint.define(new ConfigDef())
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
                                Validator.positive()),
                "fail",
                "What to do with the rows of a request answered with a non-2xx status after its retries "
                        + "or with something other than a JSON array of objects, and with an answered row "
                        + "that does not fit `schema`: fail the run, write them with the reason to the dead "
                        + "letter, or skip them (counted). A request that gets no answer (timeout, connection "
                        + "refused) after its retries always fails the run.");

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
    private JsonRows json;
    private ExecutorService workers;

    private long rowsSeen;
    private long sequence;

    /** The rows of one request: their JSON, and the run's row number of the first. */
    private record Request(long sequence, long firstRow, List<byte[]> rows, byte[] body) {}

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
        json = new JsonRows(context, declared);
        return json.schema();
    }

    @Override
    public void process(int input, Batch batch, Emitter out) throws Exception {
        List<Request> requests = requests(json.encode(batch));
        if (requests.isEmpty()) {
            return;
        }
        if (workers == null) { // the client and workers exist only for a run: validation stops at open
            endpoint.start();
            workers = endpoint.workers("http", maxInFlight);
        }
        List<Future<HttpEndpoint.Answer>> answers = new ArrayList<>();
        for (Request request : requests) {
            Map<String, String> own = Map.of(SEQUENCE_HEADER, Long.toString(request.sequence()));
            answers.add(workers.submit(() -> endpoint.post(request.body(), own, describe(request), () -> false)));
        }
        List<JsonRows.Row<Request>> rows = new ArrayList<>();
        try {
            for (int i = 0; i < requests.size(); i++) {
                Request request = requests.get(i);
                HttpEndpoint.Answer answer = answerOf(answers.get(i));
                if (answer.refused()) {
                    rejectAll(request, answer.refusal());
                    continue;
                }
                String problem = JsonRows.split(answer.body(), request, rows);
                if (problem != null) {
                    rejectAll(request, describe(request) + " was answered with " + problem);
                }
            }
        } finally {
            answers.forEach(f -> f.cancel(true)); // after a failure, stop retrying the others
        }
        json.emit(
                rows,
                out,
                (row, record, error) -> context.reject(
                        row.origin().firstRow(),
                        record,
                        "row " + row.element() + " of the answer to " + describe(row.origin()) + ": " + error));
    }

    /** The rows cut into requests of at most {@code batch_size}, each body a JSON array. */
    private List<Request> requests(List<byte[]> rows) {
        List<Request> requests = new ArrayList<>();
        for (int from = 0; from < rows.size(); from += batchSize) {
            List<byte[]> part = rows.subList(from, Math.min(rows.size(), from + batchSize));
            requests.add(new Request(sequence++, rowsSeen + from, part, JsonRows.array(part)));
        }
        rowsSeen += rows.size();
        return requests;
    }

    private String describe(Request request) {
        return endpoint.describe(
                request.sequence(), request.firstRow(), request.rows().size());
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

    /** Every row of a request goes to on_error (fail throws). */
    private void rejectAll(Request request, String reason) {
        for (int i = 0; i < request.rows().size(); i++) {
            context.reject(request.firstRow() + i, request.rows().get(i), reason);
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
        if (json != null) {
            json.close();
        }
    }
}
