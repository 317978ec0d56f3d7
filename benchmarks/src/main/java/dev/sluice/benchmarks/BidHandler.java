package dev.sluice.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;

/**
 * The HTTP handler of the transforms benchmark: answers each POSTed JSON array of bids with
 * {@code {auction, bidder, price2}} rows, price2 = 2 × price — the work the benchmark's SQL and
 * script variants do. Prints its port on stdout, then serves on 127.0.0.1 until killed.
 *
 * <p>Usage: {@code BidHandler [THREADS]} (default 4)
 */
public final class BidHandler {

    private static final ObjectMapper JSON = new ObjectMapper();

    private BidHandler() {}

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        // The JDK's server writes an answer's headers and body apart; with Nagle's algorithm on, the
        // body waits for the client's delayed ACK (40 ms) on every request.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/bids", exchange -> {
            try (exchange) {
                ArrayNode out = JSON.createArrayNode();
                for (JsonNode bid : JSON.readTree(exchange.getRequestBody())) {
                    out.addObject()
                            .put("auction", bid.get("auction").asLong())
                            .put("bidder", bid.get("bidder").asLong())
                            .put("price2", 2 * bid.get("price").asLong());
                }
                byte[] body = JSON.writeValueAsBytes(out);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(threads));
        server.start();
        System.out.println(server.getAddress().getPort());
        System.out.flush();
    }
}
