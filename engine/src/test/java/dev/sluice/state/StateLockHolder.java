package dev.sluice.state;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A child process that holds a state DB open read-write, as a running pipeline would, so tests
 * can see RocksDB's cross-process lock. It writes one row, prints "ready", and closes the DB when
 * its stdin closes.
 */
final class StateLockHolder {

    private StateLockHolder() {}

    public static void main(String[] args) throws IOException {
        try (StateStore store = StateStore.open(Path.of(args[0]))) {
            store.put("child", "k", "{\"holder\": true}");
            System.out.println("ready");
            System.out.flush();
            while (System.in.read() >= 0) {
                // Wait for the parent to close our stdin.
            }
        }
    }

    /** Starts the holder on {@code dir} and waits until it holds the lock. */
    static Process start(Path dir) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(
                        java,
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        StateLockHolder.class.getName(),
                        dir.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        var out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (!"ready".equals(line)) {
            child.destroyForcibly();
            throw new IllegalStateException("the lock holder did not start: " + line);
        }
        return child;
    }

    /** Closes the holder's stdin and waits for it to exit. */
    static void stop(Process child) throws IOException, InterruptedException {
        child.getOutputStream().close();
        if (!child.waitFor(30, TimeUnit.SECONDS)) {
            child.destroyForcibly();
            throw new IllegalStateException("the lock holder did not exit");
        }
    }
}
