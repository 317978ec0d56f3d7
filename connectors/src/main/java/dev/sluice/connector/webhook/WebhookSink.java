package dev.sluice.connector.webhook;

import dev.sluice.bridge.NativeEncoder;
import dev.sluice.connector.http.HttpEndpoint;
import dev.sluice.connector.jsonrows.JsonRows;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.CheckpointTimeoutException;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code webhook} sink: rows as a JSON array, {@code batch_size} rows per HTTP POST.
 *
 * <p>Rows are encoded in the core (the JSON of the stdout and file sinks; {@code _op} is a column
 * like any other) and cut into requests of {@code batch_size} rows, across incoming batches, and
 * at every checkpoint barrier — never by time, so that a replay from a checkpoint cuts the same
 * requests and they carry the same {@code Idempotency-Key} (the SHA-256 of pipeline, node and
 * body; see the README for exactly what that guarantees). Up to {@code max_in_flight} requests
 * are in flight, each on a worker thread that retries it with exponential backoff and jitter
 * (honouring {@code Retry-After} on 429 and 503); a barrier returns only after every request
 * before it succeeded or went to {@code on_error}.
 */
public final class WebhookSink implements Sink {

    public static final String MAX_IN_FLIGHT = "max_in_flight";

    /** The header carrying the request's number in this run (per node), from 0. */
    public static final String SEQUENCE_HEADER = "X-Sluice-Sequence";

    public static final String IDEMPOTENCY_HEADER = "Idempotency-Key";

    /** The {@code webhook} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = HttpEndpoint.define(new ConfigDef())
                .define(
                        StandardKeys.BATCH_SIZE,
                        ConfigType.INT,
                        500,
                        false,
                        "Most rows in one request. Requests are cut at this many rows and at each checkpoint, "
                                + "never by time: rows wait for a full request or the next checkpoint.",
                        Validator.positive())
                .define(
                        MAX_IN_FLIGHT,
                        ConfigType.INT,
                        1,
                        false,
                        "Requests sent at once. With 1 a request is sent only after the one before succeeded, so "
                                + "the receiver gets them in order; with more they overlap and may complete out of "
                                + "order: order them by the `X-Sluice-Sequence` header.",
                        Validator.positive())
                .defineEnum(
                        StandardKeys.ON_ERROR,
                        ErrorPolicy.CONFIG_NAMES,
                        "fail",
                        false,
                        "What to do with a request answered with a non-2xx status after its retries: fail the run, "
                                + "write its rows with the status to the dead letter, or skip them (counted). A request "
                                + "that gets no answer (timeout, connection refused) after its retries always fails "
                                + "the run.")
                .define(
                        StandardKeys.DEAD_LETTER,
                        ConfigType.PATH,
                        null,
                        false,
                        "The dead-letter file (JSON lines, one line per row of a refused request). Default: "
                                + "<pipeline>.<node>.dead-letter.jsonl next to the first file sink's output, else next to the "
                                + "pipeline file.");

        public Type() {
            super(
                    NodeKind.SINK,
                    "webhook",
                    "POSTs rows as a JSON array, `batch_size` rows per request, with an `Idempotency-Key` header "
                            + "derived from the request's content and retries with backoff. Rows with an `_op` "
                            + "column carry it as a field. A checkpoint waits until every request before it succeeded.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public WebhookSink create(Settings settings) {
            return new WebhookSink(settings);
        }
    }

    private final Settings config;
    private final int batchSize;
    private final int maxInFlight;
    private final ErrorPolicy onError;

    private StageContext context;
    private HttpEndpoint endpoint;
    private NativeEncoder encoder;

    private ExecutorService workers;
    /** One permit per request that may be in flight; a barrier waits until it holds them all. */
    private Semaphore permits;

    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    /** Requests refused after their retries (dead_letter, skip), handed from workers to the lane. */
    private final Queue<Refused> refused = new ConcurrentLinkedQueue<>();

    /** The rows of the request being filled (each a JSON object) and the run's row number of its first. */
    private final List<byte[]> rows = new ArrayList<>();

    private long firstRow;
    private long rowsSeen;
    private long sequence;

    private record Request(long sequence, long firstRow, List<byte[]> rows, byte[] body, String key) {}

    private record Refused(Request request, String reason) {}

    WebhookSink(Settings config) {
        this.config = config;
        this.batchSize = config.getInt(StandardKeys.BATCH_SIZE);
        this.maxInFlight = config.getInt(MAX_IN_FLIGHT);
        this.onError = ErrorPolicy.parse(config.getString(StandardKeys.ON_ERROR));
    }

    // ---- open: checks only -----------------------------------------------------------------------

    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        endpoint = new HttpEndpoint(config, context, "sink", List.of(IDEMPOTENCY_HEADER, SEQUENCE_HEADER));
        encoder = new NativeEncoder("json", false, true, List.of());
    }

    /** The HTTP client and the workers exist only for a run: validation stops at {@link #open}. */
    @Override
    public void start() {
        endpoint.start();
        workers = endpoint.workers("webhook", maxInFlight);
        permits = new Semaphore(maxInFlight);
    }

    // ---- write -----------------------------------------------------------------------------------

    @Override
    public void write(Batch batch) throws Exception {
        throwIfFailed();
        handleRefused();
        List<byte[]> encoded = JsonRows.encode(encoder, batch, context.allocator());
        for (byte[] row : encoded) {
            if (rows.isEmpty()) {
                firstRow = rowsSeen;
            }
            rows.add(row);
            rowsSeen++;
            if (rows.size() >= batchSize) {
                dispatch();
            }
        }
    }

    /** Sends the rows gathered so far as one request, after waiting for a free slot. */
    private void dispatch() throws InterruptedException {
        if (rows.isEmpty()) {
            return;
        }
        List<byte[]> requestRows = List.copyOf(rows);
        rows.clear();
        byte[] bytes = JsonRows.array(requestRows);
        Request request = new Request(sequence++, firstRow, requestRows, bytes, idempotencyKey(bytes));
        while (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            throwIfFailed();
        }
        try {
            workers.execute(() -> {
                try {
                    send(request);
                } catch (Throwable e) {
                    failure.compareAndSet(
                            null,
                            new IllegalStateException(
                                    "POST " + endpoint.target() + " (request " + request.sequence() + ") failed: " + e,
                                    e));
                } finally {
                    permits.release();
                }
            });
        } catch (RuntimeException e) {
            permits.release();
            throw e;
        }
    }

    /**
     * The SHA-256 of pipeline name, node name and body: equal for the same rows in the same
     * request of the same node, in any run.
     */
    private String idempotencyKey(byte[] body) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(context.pipelineName().getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(context.nodeName().getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(body);
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    // ---- the workers -----------------------------------------------------------------------------

    /** Sends one request until it succeeds, is refused or its retries are used up (on a worker). */
    private void send(Request request) throws InterruptedException {
        Map<String, String> own =
                Map.of(IDEMPOTENCY_HEADER, request.key(), SEQUENCE_HEADER, Long.toString(request.sequence()));
        try {
            HttpEndpoint.Answer answer =
                    endpoint.post(request.body(), own, describe(request), () -> failure.get() != null);
            if (answer != null && answer.refused()) {
                refuse(request, answer.refusal());
            }
        } catch (IOException noAnswer) {
            failure.compareAndSet(null, new IllegalStateException(noAnswer.getMessage()));
        }
    }

    private String describe(Request request) {
        return endpoint.describe(
                request.sequence(), request.firstRow(), request.rows().size());
    }

    /** A non-2xx answer after the retries: fails the run, or its rows go to on_error on the lane. */
    private void refuse(Request request, String reason) {
        if (onError == ErrorPolicy.FAIL) {
            failure.compareAndSet(null, new IllegalStateException(reason));
        } else {
            refused.add(new Refused(request, reason));
        }
    }

    /** Applies on_error (dead_letter, skip) to the rows of refused requests; on the lane. */
    private void handleRefused() {
        Refused r;
        while ((r = refused.poll()) != null) {
            List<byte[]> requestRows = r.request().rows();
            for (int i = 0; i < requestRows.size(); i++) {
                context.reject(r.request().firstRow() + i, requestRows.get(i), r.reason());
            }
        }
    }

    private void throwIfFailed() {
        RuntimeException e = failure.get();
        if (e != null) {
            throw e;
        }
    }

    // ---- barrier ---------------------------------------------------------------------------------

    /**
     * Sends the rows gathered so far, then waits until every request before the barrier
     * succeeded (or went to on_error): only then is the epoch acknowledged. A receiver that
     * stays away past the checkpoint's deadline times the epoch out instead of stalling it.
     */
    @Override
    public void onBarrier(Barrier barrier) throws Exception {
        throwIfFailed();
        dispatch();
        while (!permits.tryAcquire(
                maxInFlight, Math.min(barrier.remainingNanos(), 100_000_000L), TimeUnit.NANOSECONDS)) {
            throwIfFailed();
            if (barrier.remainingNanos() == 0) {
                throw new CheckpointTimeoutException((maxInFlight - permits.availablePermits()) + " requests to "
                        + endpoint.target() + " not answered with success yet");
            }
        }
        permits.release(maxInFlight);
        throwIfFailed();
        // Refused rows reach the dead letter, which the runner flushes right after this.
        handleRefused();
    }

    @Override
    public void close() throws Exception {
        if (workers != null) {
            workers.shutdownNow(); // after a final barrier nothing is in flight; after a failure, stop retrying
            workers.awaitTermination(10, TimeUnit.SECONDS);
        }
        if (endpoint != null) {
            endpoint.close();
        }
    }
}
