package dev.sluice.peers.flink;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The command line the Nexmark orchestrator uses for every peer:
 * {@code --bootstrap HOST:PORT --query QNAME --input TOPIC --output TOPIC [--parallelism N] [--side-input FILE.csv]}.
 * QNAME {@code probe} is the latency benchmark's unbounded pipeline, not a Nexmark query.
 */
record PeerArgs(String bootstrap, String query, String input, String output, int parallelism, Path sideInput) {

    static final String USAGE = "usage: run.sh --bootstrap HOST:PORT --query QNAME --input TOPIC --output TOPIC"
            + " [--parallelism N] [--side-input FILE.csv]";

    /** Thrown for a command line that cannot be run; the message says why. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    static PeerArgs parse(String[] args) throws UsageException {
        String bootstrap = null;
        String query = null;
        String input = null;
        String output = null;
        int parallelism = 1;
        Path sideInput = null;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                throw new UsageException(flag + " needs a value");
            }
            String value = args[++i];
            switch (flag) {
                case "--bootstrap" -> bootstrap = value;
                case "--query" -> query = value;
                case "--input" -> input = value;
                case "--output" -> output = value;
                case "--parallelism" -> parallelism = positive(value);
                case "--side-input" -> sideInput = Path.of(value).toAbsolutePath();
                default -> throw new UsageException("unknown option " + flag);
            }
        }
        if (bootstrap == null || query == null || input == null || output == null) {
            throw new UsageException("--bootstrap, --query, --input and --output are required");
        }
        if (sideInput != null && !Files.isRegularFile(sideInput)) {
            throw new UsageException("side input " + sideInput + " is not a file");
        }
        return new PeerArgs(bootstrap, query, input, output, parallelism, sideInput);
    }

    private static int positive(String value) throws UsageException {
        try {
            int n = Integer.parseInt(value);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException("--parallelism must be a positive integer, not " + value);
    }
}
