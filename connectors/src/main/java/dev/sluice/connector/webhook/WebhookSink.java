package dev.sluice.connector.webhook;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.CheckpointTimeoutException;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

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

    private static final Logger LOG = LoggerFactory.getLogger(WebhookSink.class);

    public static final String URL = "url";
    public static final String HEADERS = "headers";
    public static final String TIMEOUT = "timeout";
    public static final String MAX_RETRIES = "max_retries";
    public static final String RETRY_BACKOFF = "retry_backoff";
    public static final String MAX_BACKOFF = "max_backoff";
    public static final String MAX_IN_FLIGHT = "max_in_flight";

    /** The header carrying the request's number in this run (per node), from 0. */
    public static final String SEQUENCE_HEADER = "X-Sluice-Sequence";

    public static final String IDEMPOTENCY_HEADER = "Idempotency-Key";

    /** The {@code webhook} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = new ConfigDef()
                .define(
                        URL,
                        ConfigType.STRING,
                        null,
                        true,
                        "The http:// or https:// URL each request is POSTed to. Messages show it without user "
                                + "information and query string.",
                        Validator.nonEmpty())
                .define(
                        HEADERS,
                        ConfigType.MAP,
                        Map.of(),
                        false,
                        "Extra request headers, name → value; write secrets as environment references "
                                + "(`Authorization: \"Bearer ${HOOK_TOKEN}\"`). Header values are never logged or "
                                + "shown in errors.")
                .define(
                        StandardKeys.BATCH_SIZE,
                        ConfigType.INT,
                        500,
                        false,
                        "Most rows in one request. Requests are cut at this many rows and at each checkpoint, "
                                + "never by time: rows wait for a full request or the next checkpoint.",
                        Validator.positive())
                .define(
                        TIMEOUT,
                        ConfigType.DURATION,
                        "30s",
                        false,
                        "Longest one attempt may take (connecting, sending and the response); then it counts as "
                                + "failed and is retried.")
                .define(
                        MAX_RETRIES,
                        ConfigType.INT,
                        5,
                        false,
                        "Attempts after the first for a request that failed with 408, 425, 429, a 5xx status, "
                                + "a timeout or a connection error; other statuses are not retried.",
                        Validator.nonNegative())
                .define(
                        RETRY_BACKOFF,
                        ConfigType.DURATION,
                        "200ms",
                        false,
                        "Wait before the first retry; it doubles with each retry up to `max_backoff`, and a random "
                                + "half of it is jitter. A `Retry-After` header (429, 503) replaces it.")
                .define(
                        MAX_BACKOFF,
                        ConfigType.DURATION,
                        "30s",
                        false,
                        "Longest wait between two attempts (not applied to `Retry-After`).")
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
    private final Duration timeout;
    private final int maxRetries;
    private final long retryBackoffMillis;
    private final long maxBackoffMillis;
    private final int maxInFlight;
    private final ErrorPolicy onError;

    private StageContext context;
    private URI uri;
    /** The URL as messages show it: no user information, no query string (either may hold a secret). */
    private String target;

    private Map<String, String> headers;
    private NativeEncoder encoder;

    private HttpClient client;
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
        this.timeout = config.getDuration(TIMEOUT);
        this.maxRetries = config.getInt(MAX_RETRIES);
        this.retryBackoffMillis = config.getDuration(RETRY_BACKOFF).toMillis();
        this.maxBackoffMillis = config.getDuration(MAX_BACKOFF).toMillis();
        this.maxInFlight = config.getInt(MAX_IN_FLIGHT);
        this.onError = ErrorPolicy.parse(config.getString(StandardKeys.ON_ERROR));
    }

    // ---- open: checks only -----------------------------------------------------------------------

    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        String url = config.getString(URL);
        try {
            uri = new URI(url);
        } catch (java.net.URISyntaxException e) {
            throw new InvalidSettingException(URL, "not a valid URL: " + e.getReason());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
            throw new InvalidSettingException(URL, "not an http:// or https:// URL with a host");
        }
        target = scheme + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
                + (uri.getRawPath() == null ? "" : uri.getRawPath());
        headers = config.getMap(HEADERS);
        for (String name : headers.keySet()) {
            try {
                // The client refuses names it sets itself (Host, Content-Length, Connection, ...).
                HttpRequest.newBuilder(uri).header(name, "x");
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException(HEADERS, "header '" + name + "' cannot be set: " + e.getMessage());
            }
            if (name.equalsIgnoreCase(IDEMPOTENCY_HEADER) || name.equalsIgnoreCase(SEQUENCE_HEADER)) {
                throw new InvalidSettingException(HEADERS, "header '" + name + "' is set by the sink");
            }
        }
        encoder = new NativeEncoder("json", false, true, List.of());
    }

    /** The HTTP client and the workers exist only for a run: validation stops at {@link #open}. */
    @Override
    public void start() {
        client = HttpClient.newBuilder()
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        workers = Executors.newFixedThreadPool(maxInFlight, r -> {
            Thread t = new Thread(r, "sluice-webhook-" + context.nodeName());
            t.setDaemon(true);
            return t;
        });
        permits = new Semaphore(maxInFlight);
    }

    // ---- write -----------------------------------------------------------------------------------

    @Override
    public void write(Batch batch) throws Exception {
        throwIfFailed();
        handleRefused();
        List<byte[]> encoded = new ArrayList<>();
        NativeBatch.with(
                batch,
                context.allocator(),
                nativeBatch -> encoder.encodeRecords(nativeBatch, records -> {
                    for (int i = 0; i < records.count(); i++) {
                        byte[] row = new byte[(int) records.length(i)];
                        java.lang.foreign.MemorySegment.copy(
                                records.data(), JAVA_BYTE, records.start(i), row, 0, row.length);
                        encoded.add(row);
                    }
                }));
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
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write('[');
        for (int i = 0; i < requestRows.size(); i++) {
            if (i > 0) {
                body.write(',');
            }
            body.writeBytes(requestRows.get(i));
        }
        body.write(']');
        byte[] bytes = body.toByteArray();
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
                                    "POST " + target + " (request " + request.sequence() + ") failed: " + e, e));
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
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(request.body()));
        headers.forEach(builder::setHeader);
        builder.setHeader(IDEMPOTENCY_HEADER, request.key());
        builder.setHeader(SEQUENCE_HEADER, Long.toString(request.sequence()));
        HttpRequest http = builder.build();
        for (int attempt = 0; ; attempt++) {
            String problem;
            long waitMillis;
            try {
                HttpResponse<String> response = client.send(http, HttpResponse.BodyHandlers.ofString());
                int status = response.statusCode();
                if (status >= 200 && status < 300) {
                    return;
                }
                problem = "answered " + status + describeBody(response.body());
                boolean retryable = status == 408 || status == 425 || status == 429 || status >= 500;
                if (!retryable || attempt >= maxRetries) {
                    String attempts = retryable
                            ? " after " + (attempt + 1) + " attempts (max_retries " + maxRetries + ")"
                            : " (not retried)";
                    refuse(request, describe(request) + " " + problem + attempts);
                    return;
                }
                long retryAfter = status == 429 || status == 503 ? retryAfterMillis(response) : -1;
                waitMillis = retryAfter >= 0 ? retryAfter : backoff(attempt);
            } catch (IOException e) { // timeouts and connection errors: no answer
                problem = "got no answer: " + e;
                if (attempt >= maxRetries) {
                    failure.compareAndSet(
                            null,
                            new IllegalStateException(describe(request) + " " + problem + " after " + (attempt + 1)
                                    + " attempts (max_retries " + maxRetries + ")"));
                    return;
                }
                waitMillis = backoff(attempt);
            }
            if (failure.get() != null) {
                return; // the run is failing anyway
            }
            // On the HTTP client's thread: name the pipeline and node for the log line here.
            try (var pipeline = MDC.putCloseable("pipeline", context.pipelineName());
                    var node = MDC.putCloseable("node", context.nodeName())) {
                LOG.warn(
                        "node '{}': {} {}; retry {} of {} in {} ms",
                        context.nodeName(),
                        describe(request),
                        problem,
                        attempt + 1,
                        maxRetries,
                        waitMillis);
            }
            Thread.sleep(waitMillis);
        }
    }

    private String describe(Request request) {
        return "POST " + target + " (request " + request.sequence() + ", rows " + request.firstRow() + ".."
                + (request.firstRow() + request.rows().size() - 1) + ")";
    }

    /** The start of a response body for messages, with any header value the receiver echoed masked. */
    private String describeBody(String body) {
        if (body == null || body.isBlank()) {
            return "";
        }
        String text = body.strip();
        for (String value : headers.values()) {
            if (value.length() >= 4) {
                text = text.replace(value, "****");
            }
            // Each word too: a receiver may echo just the token of "Bearer <token>".
            for (String part : value.strip().split("\\s+")) {
                if (part.length() >= 4) {
                    text = text.replace(part, "****");
                }
            }
        }
        text = text.length() <= 200 ? text : text.substring(0, 200) + "…";
        return ": " + text.replaceAll("\\s+", " ");
    }

    /** Exponential backoff with jitter: a random wait between half and all of min(max, base·2^attempt). */
    private long backoff(int attempt) {
        long full = Math.min(maxBackoffMillis, retryBackoffMillis << Math.min(attempt, 30));
        full = Math.max(full, 1);
        return full / 2 + ThreadLocalRandom.current().nextLong(full - full / 2 + 1);
    }

    /** {@code Retry-After} in milliseconds (seconds or an HTTP date), or -1 when absent or unreadable. */
    static long retryAfterMillis(HttpResponse<?> response) {
        String value = response.headers().firstValue("Retry-After").orElse(null);
        if (value == null) {
            return -1;
        }
        value = value.strip();
        try {
            return Math.max(0, Math.multiplyExact(Long.parseLong(value), 1000L));
        } catch (NumberFormatException | ArithmeticException e) {
            try {
                ZonedDateTime at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME);
                return Math.max(0, at.toInstant().toEpochMilli() - System.currentTimeMillis());
            } catch (java.time.format.DateTimeParseException notADate) {
                return -1;
            }
        }
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
                        + target + " not answered with success yet");
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
        if (client != null) {
            client.shutdownNow();
        }
    }
}
