package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pipelines of flat columns (generated, and read from a JSON file with a declared schema, through
 * SQL into files) never load Arrow Java's C Data JNI library: their schemas cross the C ABI
 * through {@code CSchemas}. Loading it extracts a library to a temporary file at every start
 * (~8 ms inside the run's clock, and a directory mounted noexec would refuse it). A child JVM,
 * whose class initializations are logged, because this JVM's other tests load it.
 */
class NoJniLibraryTest {

    @TempDir
    Path dir;

    @Test
    void flatPipelinesRunWithoutArrowsJniLibrary() throws Exception {
        Files.writeString(dir.resolve("events.jsonl"), "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"name\": \"b\"}\n");
        Files.writeString(dir.resolve("flat.yaml"), """
                sources:
                  bid: {type: generator, entity: bid, count: 2000}
                  events:
                    type: file
                    path: events.jsonl
                    schema: {id: bigint, name: string}
                transforms:
                  bids: {type: sql, sql: "SELECT auction, price, dateTime FROM bid WHERE price > 100"}
                  named: {type: sql, sql: "SELECT id, upper(name) AS name FROM events"}
                sinks:
                  bids_out: {type: file, from: bids, path: out/bids.jsonl}
                  named_out: {type: file, from: named, path: out/named.jsonl}
                """);
        Path log = dir.resolve("class-init.log");
        List<String> command = ChildJvm.command("256m", "run", "flat.yaml", "--state-dir", "state");
        command.add(1, "-Xlog:class+init=info:file=" + log);
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(dir.resolve("stderr").toFile())
                .start();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the run did not end");
        assertEquals(0, process.exitValue(), Files.readString(dir.resolve("stderr")));
        assertEquals(2, Files.readAllLines(dir.resolve("out/named.jsonl")).size());
        String initialized = Files.readString(log);
        assertTrue(initialized.contains("dev/sluice/bridge/CSchemas"), "the schemas did not go through CSchemas");
        assertFalse(initialized.contains("org/apache/arrow/c/jni/JniLoader"), "Arrow's JNI library was loaded");
    }
}
