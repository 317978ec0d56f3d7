package dev.sluice.peers.kstreams;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;

/** The command line: {@code --bootstrap HOST:PORT --query QNAME --input TOPIC --output TOPIC [--threads N] [--side-input FILE.csv] [--app-id ID]}. */
record Options(String bootstrap, String query, String input, String output, int threads, Path sideInput, String appId) {

    static final String USAGE = "usage: run.sh --bootstrap HOST:PORT --query QNAME --input TOPIC --output TOPIC "
            + "[--threads N] [--side-input FILE.csv] [--app-id ID]";

    static Options parse(String[] args) {
        String bootstrap = null, query = null, input = null, output = null, appId = null;
        int threads = 1;
        Path sideInput = null;
        for (Iterator<String> it = List.of(args).iterator(); it.hasNext(); ) {
            String flag = it.next();
            if (!it.hasNext()) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            String value = it.next();
            switch (flag) {
                case "--bootstrap" -> bootstrap = value;
                case "--query" -> query = value;
                case "--input" -> input = value;
                case "--output" -> output = value;
                case "--threads" -> threads = Integer.parseInt(value);
                case "--side-input" -> sideInput = Path.of(value);
                case "--app-id" -> appId = value;
                default -> throw new IllegalArgumentException("unknown argument '" + flag + "'");
            }
        }
        if (bootstrap == null || query == null || input == null || output == null) {
            throw new IllegalArgumentException("--bootstrap, --query, --input and --output are required");
        }
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be positive");
        }
        if (appId == null) {
            // A fresh application id (= consumer group) per run, so every run reads from earliest.
            appId = "nexmark-kstreams-" + query + "-" + System.currentTimeMillis();
        }
        return new Options(bootstrap, query, input, output, threads, sideInput, appId);
    }
}
