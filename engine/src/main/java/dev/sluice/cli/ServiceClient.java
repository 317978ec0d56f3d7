package dev.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Talks to a {@code sluice serve} over its HTTP API (java.net.http; JSON answers). */
final class ServiceClient {

    /** An answer: its HTTP status and JSON body (a JSON null when the body was not JSON). */
    record Answer(int status, JsonNode body) {
        boolean ok() {
            return status / 100 == 2;
        }
    }

    /** The service could not be reached (exit 4). */
    static final class UnreachableException extends RuntimeException {
        UnreachableException(String message) {
            super(message);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Long enough for a pause or a changed apply, which wait for a final checkpoint. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofMinutes(3);

    private final URI server;
    private final String token;
    private final HttpClient http;

    ServiceClient(URI server, String token) {
        this.server = server;
        this.token = token;
        this.http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    URI server() {
        return server;
    }

    /** {@code segment} as one path segment of a URL. */
    static String segment(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    Answer get(String path) {
        return send("GET", path, null);
    }

    Answer post(String path) {
        return send("POST", path, "");
    }

    Answer put(String path, String yaml) {
        return send("PUT", path, yaml);
    }

    Answer delete(String path) {
        return send("DELETE", path, null);
    }

    /**
     * Reads the server-sent events at {@code path} until the stream ends or {@code onEvent}
     * returns false; each event's name and data go to {@code onEvent}. Returns the HTTP status
     * (200 for a stream that ran).
     */
    int events(String path, java.util.function.BiPredicate<String, String> onEvent) {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(server.resolve(path)).header("Accept", "text/event-stream");
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<java.util.stream.Stream<String>> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofLines());
        } catch (IOException e) {
            throw new UnreachableException("cannot reach the Sluice server at " + server + ": " + e
                    + ". Point at it with --server URL (a `run --inspect-port PORT`: http://127.0.0.1:PORT).");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnreachableException("interrupted while waiting for " + server);
        }
        if (response.statusCode() != 200) {
            response.body().close();
            return response.statusCode();
        }
        try (java.util.stream.Stream<String> lines = response.body()) {
            String event = "message";
            java.util.Iterator<String> it = lines.iterator();
            while (it.hasNext()) {
                String line = it.next();
                if (line.startsWith("event:")) {
                    event = line.substring("event:".length()).strip();
                } else if (line.startsWith("data:")) {
                    if (!onEvent.test(event, line.substring("data:".length()).strip())) {
                        break;
                    }
                } else if (line.isEmpty()) {
                    event = "message";
                }
            }
        } catch (java.io.UncheckedIOException e) {
            throw new UnreachableException(
                    "lost the connection to " + server + ": " + e.getCause().getMessage());
        }
        return 200;
    }

    private Answer send(String method, String path, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(server.resolve(path))
                .timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json")
                .method(
                        method,
                        body == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (body != null && !body.isEmpty()) {
            request.header("Content-Type", "application/yaml; charset=utf-8");
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (ConnectException e) {
            throw new UnreachableException("cannot reach the Sluice service at " + server
                    + " (connection refused). Is `sluice serve` running there? Point at it with --server URL or"
                    + " SLUICE_SERVER.");
        } catch (HttpTimeoutException e) {
            throw new UnreachableException("the Sluice service at " + server + " did not answer in time ("
                    + e.getMessage() + "); `sluice status NAME` shows whether the operation went through.");
        } catch (IOException e) {
            throw new UnreachableException(
                    "cannot talk to the Sluice service at " + server + ": " + e + ". Check --server / SLUICE_SERVER.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnreachableException("interrupted while waiting for " + server);
        }
        JsonNode json;
        try {
            json = JSON.readTree(response.body());
        } catch (IOException e) {
            json = JSON.getNodeFactory()
                    .objectNode()
                    .put("error", response.body().strip());
        }
        return new Answer(response.statusCode(), json == null ? JSON.nullNode() : json);
    }
}
