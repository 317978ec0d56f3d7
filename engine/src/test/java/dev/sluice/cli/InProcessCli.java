package dev.sluice.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** The command line run in the test's own JVM, as the tests of many rooms use it. */
public final class InProcessCli {

    /** The exit code and what the command printed on stderr. */
    public record Result(int code, String stderr) {}

    private InProcessCli() {}

    /**
     * Runs {@code sluice ARGS} and captures stderr (a stdout sink writes to the real file
     * descriptor, not to {@code System.out}).
     */
    public static Result sluice(String... args) {
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return new Result(Main.execute(args), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }
}
