package dev.sluice.connector.http;

import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.StageCounter;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.Validator;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * An HTTP endpoint a stage POSTs JSON to — the {@code webhook} sink's and the {@code http}
 * transform's: its settings, the URL as messages show it, and one POST retried with exponential
 * backoff and jitter (honouring {@code Retry-After} on 429 and 503). Thread-safe once started.
 */
public final class HttpEndpoint implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);

    public static final String URL = "url";
    public static final String HEADERS = "headers";
    public static final String TIMEOUT = "timeout";
    public static final String MAX_RETRIES = "max_retries";
    public static final String RETRY_BACKOFF = "retry_backoff";
    public static final String MAX_BACKOFF = "max_backoff";

    /** Adds the endpoint's settings to {@code def}. */
    public static ConfigDef define(ConfigDef def) {
        return def.define(
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
                        "Longest wait between two attempts (not applied to `Retry-After`).");
    }

    /** A 2xx answer's body, or why the request was refused (a non-2xx status after its retries). */
    public record Answer(byte[] body, String refusal) {
        public boolean refused() {
            return refusal != null;
        }
    }

    private final StageContext context;
    private final URI uri;
    /** The URL as messages show it: no user information, no query string (either may hold a secret). */
    private final String target;

    private final Map<String, String> headers;
    private final Duration timeout;
    private final int maxRetries;
    private final long retryBackoffMillis;
    private final long maxBackoffMillis;
    private HttpClient client;
    /** Requests by how they ended, and attempts retried: the node's own metrics. */
    private final StageCounter answered;

    private final StageCounter refused;
    private final StageCounter unanswered;
    private final StageCounter retries;

    /**
     * Checks the settings (no connection yet). {@code ownHeaders} are the header names the stage
     * ({@code kind}: "sink", "transform") sets itself; the user may not set them.
     *
     * @throws InvalidSettingException naming the setting that is wrong
     */
    public HttpEndpoint(Settings config, StageContext context, String kind, List<String> ownHeaders) {
        this.context = context;
        try {
            uri = new URI(config.getString(URL));
        } catch (java.net.URISyntaxException e) {
            throw new InvalidSettingException(URL, "not a valid URL: " + e.getReason());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
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
            if (ownHeaders.stream().anyMatch(name::equalsIgnoreCase)) {
                throw new InvalidSettingException(HEADERS, "header '" + name + "' is set by the " + kind);
            }
        }
        timeout = config.getDuration(TIMEOUT);
        maxRetries = config.getInt(MAX_RETRIES);
        retryBackoffMillis = config.getDuration(RETRY_BACKOFF).toMillis();
        maxBackoffMillis = config.getDuration(MAX_BACKOFF).toMillis();
        String requests = "Requests by how they ended: answered with success (ok), with another status not retried "
                + "or retried max_retries times (refused), or with no answer after the retries (failed)";
        answered = context.counter("http.requests", requests, Map.of("result", "ok"));
        refused = context.counter("http.requests", requests, Map.of("result", "refused"));
        unanswered = context.counter("http.requests", requests, Map.of("result", "failed"));
        retries = context.counter("http.retries", "Attempts retried (after a retryable status or no answer)", Map.of());
    }

    /** The HTTP client exists only for a run: validation stops before this. */
    public void start() {
        client = HttpClient.newBuilder()
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /** The URL as messages show it. */
    public String target() {
        return target;
    }

    /** A request in messages: {@code POST <target> (request 3, rows 15..19)}. */
    public String describe(long sequence, long firstRow, int rows) {
        return "POST " + target + " (request " + sequence + ", rows " + firstRow + ".." + (firstRow + rows - 1) + ")";
    }

    /** {@code threads} daemon threads named {@code sluice-<kind>-<node>} that send requests. */
    public ExecutorService workers(String kind, int threads) {
        return Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "sluice-" + kind + "-" + context.nodeName());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * POSTs {@code body} (JSON) with {@code ownHeaders} until it is answered with a 2xx, with a
     * status not worth retrying, or its retries are used up. {@code what} names the request in
     * messages; {@code stopped} ends the retries early (the run is failing anyway: returns null).
     *
     * @throws IOException when no answer came (timeouts, connection errors) after the retries
     */
    public Answer post(byte[] body, Map<String, String> ownHeaders, String what, BooleanSupplier stopped)
            throws IOException, InterruptedException {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(builder::setHeader);
        ownHeaders.forEach(builder::setHeader);
        HttpRequest http = builder.build();
        for (int attempt = 0; ; attempt++) {
            String problem;
            long waitMillis;
            try {
                HttpResponse<byte[]> response = client.send(http, HttpResponse.BodyHandlers.ofByteArray());
                int status = response.statusCode();
                if (status >= 200 && status < 300) {
                    answered.increment();
                    return new Answer(response.body(), null);
                }
                problem = "answered " + status + describeBody(response.body());
                boolean retryable = status == 408 || status == 425 || status == 429 || status >= 500;
                if (!retryable || attempt >= maxRetries) {
                    String attempts = retryable
                            ? " after " + (attempt + 1) + " attempts (max_retries " + maxRetries + ")"
                            : " (not retried)";
                    refused.increment();
                    return new Answer(null, what + " " + problem + attempts);
                }
                long retryAfter = status == 429 || status == 503 ? retryAfterMillis(response) : -1;
                waitMillis = retryAfter >= 0 ? retryAfter : backoff(attempt);
            } catch (IOException e) { // timeouts and connection errors: no answer
                problem = "got no answer: " + e;
                if (attempt >= maxRetries) {
                    unanswered.increment();
                    throw new IOException(
                            what + " " + problem + " after " + (attempt + 1) + " attempts (max_retries " + maxRetries
                                    + ")",
                            e);
                }
                waitMillis = backoff(attempt);
            }
            if (stopped.getAsBoolean()) {
                return null;
            }
            retries.increment();
            // On a worker thread: name the pipeline and node for the log line here.
            try (var pipeline = MDC.putCloseable("pipeline", context.pipelineName());
                    var node = MDC.putCloseable("node", context.nodeName())) {
                LOG.warn(
                        "node '{}': {} {}; retry {} of {} in {} ms",
                        context.nodeName(),
                        what,
                        problem,
                        attempt + 1,
                        maxRetries,
                        waitMillis);
            }
            Thread.sleep(waitMillis);
        }
    }

    /** The start of a response body for messages, with any header value the receiver echoed masked. */
    private String describeBody(byte[] bytes) {
        String body = bytes == null ? "" : new String(bytes, StandardCharsets.UTF_8);
        if (body.isBlank()) {
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
    private static long retryAfterMillis(HttpResponse<?> response) {
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

    @Override
    public void close() {
        if (client != null) {
            client.shutdownNow();
        }
    }
}
