package dev.sluice.bridge;

import static dev.sluice.cli.InProcessCli.sluice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --bridge} on the command line: a pipeline runs over JNI, and a bad name is a usage error. */
class BridgeCliTest {

    @TempDir
    Path dir;

    private final String bridgeBefore = NativeCore.bridge().name();

    @AfterEach
    void restoreTheBridgeOfThisSuite() {
        NativeCore.select(bridgeBefore);
    }

    @Test
    void aPipelineRunsOverJni() throws IOException {
        NativeCore.select("ffm"); // so the run must switch
        Path output = dir.resolve("big_bids.jsonl");
        Path pipeline = dir.resolve("bids.yaml");
        Files.writeString(pipeline, """
                name: bridge_jni
                sources:
                  bid:
                    type: generator
                    entity: bid
                    count: 5000
                    seed: 11
                    batch_size: 512
                transforms:
                  big_bids:
                    type: sql
                    sql: SELECT auction, price FROM bid WHERE price > 50000000
                sinks:
                  out:
                    type: file
                    from: big_bids
                    path: %s
                """.formatted(output));
        long handlesBefore = NativeCore.bridge().liveHandles();
        Result run = sluice(
                "run", "--bridge=jni", "--state-dir", dir.resolve("state").toString(), pipeline.toString());
        assertEquals(0, run.code(), run.stderr());
        assertEquals("jni", NativeCore.bridge().name(), "the run used the JNI bridge");
        long rows = Files.readAllLines(output).stream()
                .filter(line -> !line.isBlank())
                .count();
        assertTrue(rows > 0 && rows < 5000, "the SQL filter kept some bids: " + rows);
        assertEquals(handlesBefore, NativeCore.bridge().liveHandles(), "every native handle freed after the run");
    }

    @Test
    void anUnknownBridgeIsAUsageError() {
        Result run =
                sluice("validate", "--bridge=jna", dir.resolve("absent.yaml").toString());
        assertEquals(2, run.code(), run.stderr());
        assertTrue(run.stderr().contains("unknown bridge 'jna'") && run.stderr().contains("ffm, jni"), run.stderr());
    }
}
