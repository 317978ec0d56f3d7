package dev.sluice.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@code sluice ...} (Main, as the JAR does) in a child JVM with the test class path. */
public final class ChildJvm {

    private ChildJvm() {}

    /** The command line of {@code sluice args...} in a child JVM with the test class path and heap {@code heap}. */
    public static List<String> command(String heap, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(
                java,
                "--enable-native-access=ALL-UNNAMED",
                "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "-Xmx" + heap,
                "-cp",
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))));
        if (Runtime.version().feature() >= 23) {
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.add("dev.sluice.cli.Main");
        command.addAll(List.of(args));
        return command;
    }

    /** Starts {@code sluice args...} in {@code workDir}; stdout and stderr go to the given files. */
    static Process start(Path workDir, Path stdout, Path stderr, String... args) throws IOException {
        return new ProcessBuilder(command("256m", args))
                .directory(new File(workDir.toString()))
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile())
                .start();
    }
}
