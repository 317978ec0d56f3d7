package dev.sluice.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.observe.Metrics;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The service's JSON-over-HTTP control API (Javalin on Jetty), as {@code openapi.json} beside
 * this class describes it. Bound to loopback by default; bound to any other address it requires
 * a bearer token on every request but the health probes.
 */
public final class ServiceApi implements AutoCloseable {

    /** One route of the API; every one must be in the OpenAPI document (a test checks). */
    record Route(String method, String path) {}

    /** The largest pipeline definition accepted; a bigger body is refused with 413. */
    public static final int MAX_BODY_BYTES = 1 << 20;
    /** How much of a too-large body is read and discarded so the client can read the 413. */
    private static final long DRAIN_LIMIT_BYTES = 16L * MAX_BODY_BYTES;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String JSON_TYPE = "application/json";

    private final PipelineService service;
    private final byte[] token;
    private Javalin app;

    ServiceApi(PipelineService service, byte[] token) {
        this.service = service;
        this.token = token;
    }

    /**
     * Serves {@code service} on {@code host:port} (port 0: any free one, see {@link #port()}).
     *
     * @param token the bearer token every request must carry, or null: then {@code host} must be a
     *     loopback address
     * @throws IllegalArgumentException for a non-loopback host without a token
     */
    public static ServiceApi start(PipelineService service, String host, int port, String token) {
        if (token == null && !isLoopback(host)) {
            throw new IllegalArgumentException("serving on " + host + " (beyond this machine) needs a bearer token:"
                    + " pass --token-file FILE, or bind to 127.0.0.1");
        }
        ServiceApi api = new ServiceApi(service, token == null ? null : token.getBytes(StandardCharsets.UTF_8));
        api.app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.host = host;
            config.jetty.port = port;
            config.http.maxRequestSize = MAX_BODY_BYTES;
            config.http.defaultContentType = JSON_TYPE;
            config.routes.before(api::authorize);
            api.handlers().forEach((route, handler) -> {
                switch (route.method()) {
                    case "get" -> config.routes.get(route.path(), handler);
                    case "put" -> config.routes.put(route.path(), handler);
                    case "post" -> config.routes.post(route.path(), handler);
                    case "delete" -> config.routes.delete(route.path(), handler);
                    default -> throw new IllegalStateException("no such method: " + route);
                }
            });
            config.routes.exception(PipelineNotFoundException.class, (e, ctx) -> error(ctx, 404, e.getMessage()));
            config.routes.exception(InvalidPipelineException.class, (e, ctx) -> {
                ObjectNode body = JSON.createObjectNode().put("error", "invalid pipeline");
                ArrayNode problems = body.putArray("problems");
                e.problems().forEach(problems::add);
                json(ctx, 422, body);
            });
            config.routes.exception(ApiException.class, (e, ctx) -> error(ctx, e.status, e.getMessage()));
            // A stop that does not finish (a stage that never returns): the operation can be retried.
            config.routes.exception(IllegalStateException.class, (e, ctx) -> error(ctx, 409, e.getMessage()));
            config.routes.exception(Exception.class, (e, ctx) -> error(ctx, 500, HostedPipeline.describe(e)));
        });
        api.app.start();
        return api;
    }

    /** Every route and what serves it. */
    Map<Route, Handler> handlers() {
        Map<Route, Handler> routes = new LinkedHashMap<>();
        routes.put(new Route("get", "/pipelines"), this::list);
        routes.put(
                new Route("get", "/pipelines/{name}"),
                ctx -> json(ctx, 200, service.status(name(ctx)).toJson()));
        routes.put(new Route("put", "/pipelines/{name}"), this::apply);
        routes.put(new Route("delete", "/pipelines/{name}"), ctx -> {
            service.delete(name(ctx));
            json(ctx, 200, JSON.createObjectNode().put("name", name(ctx)).put("deleted", true));
        });
        routes.put(
                new Route("post", "/pipelines/{name}/pause"),
                ctx -> json(ctx, 200, service.pause(name(ctx)).toJson()));
        routes.put(
                new Route("post", "/pipelines/{name}/resume"),
                ctx -> json(ctx, 200, service.resume(name(ctx)).toJson()));
        routes.put(new Route("get", "/pipelines/{name}/logs"), this::logs);
        routes.put(
                new Route("get", "/health/live"),
                ctx -> json(ctx, 200, JSON.createObjectNode().put("status", "live")));
        routes.put(new Route("get", "/health/ready"), this::ready);
        routes.put(new Route("get", "/openapi.json"), ServiceApi::openApi);
        routes.put(new Route("get", "/metrics"), ServiceApi::metrics);
        routes.putAll(InspectApi.handlers());
        return routes;
    }

    private static String name(Context ctx) {
        return ctx.pathParam("name");
    }

    /** The port it listens on. */
    public int port() {
        return app.port();
    }

    @Override
    public void close() {
        app.stop();
    }

    private void authorize(Context ctx) {
        if (token == null || ctx.path().startsWith("/health/")) {
            return;
        }
        String header = ctx.header("Authorization");
        // A browser cannot put a header on a page it opens or on an EventSource: the inspect
        // page and its stream also take the token as ?token=.
        String inPage = ctx.path().startsWith("/inspect/") ? ctx.queryParam("token") : null;
        byte[] given = header != null && header.startsWith("Bearer ")
                ? header.substring("Bearer ".length()).strip().getBytes(StandardCharsets.UTF_8)
                : inPage != null ? inPage.getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (!MessageDigest.isEqual(given, token)) {
            ctx.header("WWW-Authenticate", "Bearer");
            throw new ApiException(
                    401,
                    header == null && inPage == null
                            ? "this service needs a bearer token (sluice --token-file)"
                            : "wrong token");
        }
    }

    private void list(Context ctx) {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode all = body.putArray("pipelines");
        service.list().forEach(status -> all.add(status.toJson()));
        json(ctx, 200, body);
    }

    private void apply(Context ctx) {
        String name = name(ctx);
        PipelineService.Applied applied = service.apply(name, bodyText(ctx));
        ObjectNode body = JSON.createObjectNode()
                .put("name", name)
                .put("applied", applied.name().toLowerCase(java.util.Locale.ROOT));
        body.set("status", service.status(name).toJson());
        json(ctx, applied == PipelineService.Applied.CREATED ? 201 : 200, body);
    }

    private void logs(Context ctx) {
        String name = name(ctx);
        long since;
        try {
            since = ctx.queryParam("since") == null ? 0 : Long.parseLong(ctx.queryParam("since"));
        } catch (NumberFormatException e) {
            throw new ApiException(400, "'since' must be a line number, got '" + ctx.queryParam("since") + "'");
        }
        ObjectNode body = JSON.createObjectNode().put("name", name);
        ArrayNode lines = body.putArray("lines");
        long last = since;
        for (PipelineLog.Line line : service.logs(name, since)) {
            lines.addObject()
                    .put("seq", line.seq())
                    .put("at", line.at().toString())
                    .put("text", line.text());
            last = line.seq();
        }
        body.put("next", last);
        json(ctx, 200, body);
    }

    private void ready(Context ctx) {
        boolean ready = service.ready();
        json(ctx, ready ? 200 : 503, JSON.createObjectNode().put("status", ready ? "ready" : "starting"));
    }

    /** Every pipeline's meters and the JVM's, in the Prometheus text format. */
    static void metrics(Context ctx) {
        ctx.contentType(Metrics.CONTENT_TYPE).result(Metrics.scrape());
    }

    /**
     * Serves {@code /metrics}, the health probe and live inspection ({@code /inspect/NAME}) on
     * {@code host:port}: {@code sluice run --metrics-port} or {@code --inspect-port}. Loopback
     * unless the caller binds wider.
     */
    public static MetricsEndpoint startForRun(String host, int port) {
        Javalin app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.host = host;
            config.jetty.port = port;
            config.routes.get("/metrics", ServiceApi::metrics);
            config.routes.get(
                    "/health/live",
                    ctx -> json(ctx, 200, JSON.createObjectNode().put("status", "live")));
            InspectApi.handlers().forEach((route, handler) -> config.routes.get(route.path(), handler));
            config.routes.exception(PipelineNotFoundException.class, (e, ctx) -> error(ctx, 404, e.getMessage()));
        });
        app.start();
        return new MetricsEndpoint(app);
    }

    /** The HTTP endpoint of a {@code run}; closing it stops its server. */
    public record MetricsEndpoint(Javalin app) implements AutoCloseable {
        public int port() {
            return app.port();
        }

        @Override
        public void close() {
            app.stop();
        }
    }

    private static void openApi(Context ctx) throws IOException {
        try (InputStream document = ServiceApi.class.getResourceAsStream("openapi.json")) {
            if (document == null) {
                throw new IllegalStateException("openapi.json is missing from the JAR");
            }
            ctx.contentType(JSON_TYPE).result(document.readAllBytes());
        }
    }

    /**
     * The request body as UTF-8 text, at most {@link #MAX_BODY_BYTES} (413 beyond, chunked or not). A body
     * too large is still read, up to {@link #DRAIN_LIMIT_BYTES}, before the 413: answering while the client
     * is still sending makes the server close the connection under it, and the client sees a broken pipe
     * instead of the status.
     */
    private static String bodyText(Context ctx) {
        if (ctx.contentLength() > DRAIN_LIMIT_BYTES) {
            throw tooLarge();
        }
        byte[] bytes;
        try (InputStream in = ctx.bodyInputStream()) {
            bytes = in.readNBytes(MAX_BODY_BYTES + 1);
            if (bytes.length > MAX_BODY_BYTES) {
                long drained = bytes.length;
                byte[] discard = new byte[64 * 1024];
                for (int n; drained <= DRAIN_LIMIT_BYTES && (n = in.read(discard)) >= 0; ) {
                    drained += n;
                }
                throw tooLarge();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new ApiException(400, "the pipeline definition is not UTF-8 text");
        }
    }

    private static ApiException tooLarge() {
        return new ApiException(413, "a pipeline definition may have at most " + MAX_BODY_BYTES + " bytes");
    }

    private static void error(Context ctx, int status, String message) {
        json(ctx, status, JSON.createObjectNode().put("error", message));
    }

    private static void json(Context ctx, int status, ObjectNode body) {
        ctx.status(status).contentType(JSON_TYPE).result(body.toPrettyString() + "\n");
    }

    private static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** An error with its HTTP status (401, 400, 413, ...). */
    static final class ApiException extends RuntimeException {
        final int status;

        ApiException(int status, String message) {
            super(message);
            this.status = status;
        }
    }
}
