package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice inspect} in a real pseudo-terminal (a tmux session): against a {@code run
 * --inspect-port 0} in another JVM, keys are sent with {@code tmux send-keys} and the screen
 * read back with {@code capture-pane}: tabs for every node, rows of the selected node, node
 * switching, search, pause, scrolling, the web page's address, quit.
 */
class InspectTerminalTest {

    private static final Pattern INSPECT_URL = Pattern.compile("inspect at http://127\\.0\\.0\\.1:(\\d+)/inspect/bids");
    private static final Pattern SEQ = Pattern.compile("^#(\\d+) ", Pattern.MULTILINE);

    @TempDir
    Path dir;

    private final String session =
            "sluice-inspect-test-" + ProcessHandle.current().pid();

    @Test
    void keysDriveTheTerminalUi() throws Exception {
        boolean tmux = Files.isExecutable(Path.of("/usr/bin/tmux"));
        if (System.getenv("SLUICE_UI_TESTS_REQUIRED") != null) {
            assertTrue(tmux, "tmux is not installed (ci/test.sh installs it)");
        }
        Assumptions.assumeTrue(tmux, "tmux is not installed");
        Files.writeString(dir.resolve("bids.yaml"), """
                inspect: {sample_rows: 6, sample_window: 2s}
                sources:
                  bids: {type: generator, entity: bid, rate: 2000, batch_size: 200}
                transforms:
                  pricey: {type: sql, from: bids, sql: "SELECT auction, bidder, price FROM bids WHERE price % 2 = 0"}
                sinks:
                  out: {type: blackhole, from: pricey}
                """);
        Path runErr = dir.resolve("run.err");
        Process run = ChildJvm.start(
                dir, dir.resolve("run.out"), runErr, "run", "bids.yaml", "--inspect-port", "0", "--state-dir", "state");
        try {
            String port = awaitPort(runErr, run);
            Path script = dir.resolve("inspect.sh");
            Files.writeString(
                    script,
                    ChildJvm.command("128m", "inspect", "bids", "--server", "http://127.0.0.1:" + port).stream()
                                    .map(InspectTerminalTest::quote)
                                    .collect(Collectors.joining(" "))
                            + " 2>" + quote(dir.resolve("inspect.err").toString()) + "; echo \"exit $?\" > "
                            + quote(dir.resolve("inspect.exit").toString()) + "\n");
            tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "bash " + quote(script.toString()));

            // The status line is drawn last: wait for it too, or a capture mid-redraw lacks it.
            String screen = awaitScreen(s -> s.contains("[bids source")
                    && s.contains("pricey transform")
                    && s.contains("out sink")
                    && s.contains("\"auction\"")
                    && s.contains("last record"));
            assertTrue(screen.contains("sluice inspect · bids"), screen);
            assertTrue(screen.contains("\"channel\""), "the source's rows are bids:\n" + screen);
            assertTrue(screen.contains("last record"), screen);

            tmux("send-keys", "-t", session, "l"); // next node: the filter, whose rows have 3 columns
            screen = awaitScreen(s -> s.contains("[pricey transform") && s.contains("\"price\""));
            assertTrue(!screen.contains("\"channel\""), "the filter's rows have no channel:\n" + screen);

            tmux("send-keys", "-t", session, "/", "zzz-no-such", "Enter");
            screen = awaitScreen(s -> s.contains("search: zzz-no-such"));
            assertTrue(screen.contains("(no sampled row contains 'zzz-no-such')"), screen);
            tmux("send-keys", "-t", session, "/", "Enter"); // clear the search
            awaitScreen(s -> !s.contains("search: zzz") && SEQ.matcher(s).find());

            tmux("send-keys", "-t", session, "p");
            long pausedAt = awaitPausedSeq();
            Thread.sleep(3000); // two more takes happen meanwhile, not shown
            assertEquals(pausedAt, newestSeq(capture()), "the paused view does not move");
            tmux("send-keys", "-t", session, "p");
            awaitScreen(s -> !s.contains("[PAUSED]") && newestSeq(s) > pausedAt);

            String top = firstContentLine(capture());
            tmux("send-keys", "-t", session, "j");
            awaitScreen(s -> !firstContentLine(s).equals(top));
            tmux("send-keys", "-t", session, "k");

            tmux("send-keys", "-t", session, "w");
            awaitScreen(s -> s.contains("http://127.0.0.1:" + port + "/inspect/bids"));

            tmux("send-keys", "-t", session, "q");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.exists(dir.resolve("inspect.exit")) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals("exit 0", Files.readString(dir.resolve("inspect.exit")).strip(), errors());
        } finally {
            new ProcessBuilder("tmux", "kill-session", "-t", session).start().waitFor(10, TimeUnit.SECONDS);
            run.destroy();
            run.waitFor(60, TimeUnit.SECONDS);
        }
    }

    private String errors() throws IOException {
        Path err = dir.resolve("inspect.err");
        return Files.exists(err) ? Files.readString(err) : "";
    }

    private static String awaitPort(Path stderr, Process run) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            String text = Files.exists(stderr) ? Files.readString(stderr) : "";
            Matcher port = INSPECT_URL.matcher(text);
            if (port.find()) {
                return port.group(1);
            }
            assertTrue(run.isAlive(), "the run ended: " + text);
            Thread.sleep(100);
        }
        throw new AssertionError("the run never said where inspection is served: " + Files.readString(stderr));
    }

    private String awaitScreen(Predicate<String> ready) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String screen = "";
        while (System.nanoTime() < deadline) {
            screen = capture();
            if (ready.test(screen)) {
                return screen;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the screen never got there:\n" + screen + "\nstderr: " + errors());
    }

    /**
     * The newest row number of the paused view once it is drawn whole. A capture can land mid
     * redraw (a complete refresh clears the screen, then writes the title, with "[PAUSED]", before
     * the rows), so the number counts only when two captures half a second apart agree on it.
     */
    private long awaitPausedSeq() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String screen = "";
        while (System.nanoTime() < deadline) {
            screen = capture();
            long seq = newestSeq(screen);
            Thread.sleep(500);
            String again = capture();
            if (screen.contains("[PAUSED]") && again.contains("[PAUSED]") && seq >= 0 && newestSeq(again) == seq) {
                return seq;
            }
        }
        throw new AssertionError("the paused view never settled:\n" + screen + "\nstderr: " + errors());
    }

    private String capture() throws Exception {
        return tmux("capture-pane", "-p", "-t", session);
    }

    private static long newestSeq(String screen) {
        long newest = -1;
        Matcher seq = SEQ.matcher(screen);
        while (seq.find()) {
            newest = Math.max(newest, Long.parseLong(seq.group(1)));
        }
        return newest;
    }

    /** The first line under the tabs (row 3). */
    private static String firstContentLine(String screen) {
        List<String> lines = screen.lines().toList();
        return lines.size() > 3 ? lines.get(3) : "";
    }

    private static String tmux(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("tmux"));
        command.addAll(List.of(args));
        Process tmux = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(tmux.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(tmux.waitFor(30, TimeUnit.SECONDS), "tmux hung");
        assertEquals(0, tmux.exitValue(), "tmux " + String.join(" ", args) + ": " + output);
        return output;
    }

    private static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }
}
