package dev.sluice.bridge;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The committed {@code CoreBridge}, {@code FfmCoreBridge}, {@code JniCoreBridge} and
 * {@code rust/core/src/jni_bridge.rs} are what {@code bridge/generate.py} makes of
 * {@code rust/core/include/sluice.h}: a native function added to abi.rs cannot be forgotten in
 * a bridge, nor a generated file edited by hand.
 */
class GeneratedBridgeTest {

    @Test
    void committedBridgeSourcesAreWhatGeneratePyWrites() throws Exception {
        Path root = Path.of(System.getProperty("sluice.repo.root", ".."));
        Path script = root.resolve("bridge/generate.py");
        assertTrue(Files.isRegularFile(script), script + " not found; set -Dsluice.repo.root");
        Process process;
        try {
            process = new ProcessBuilder("python3", script.toString(), "--check")
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            abort("python3 is not available, cannot run bridge/generate.py --check: " + e.getMessage());
            return;
        }
        String output = new String(process.getInputStream().readAllBytes(), UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "bridge/generate.py --check did not finish");
        assertEquals(0, process.exitValue(), "bridge/generate.py --check failed:\n" + output);
    }
}
