package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.connector.kafka.KafkaTestSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two pipeline files with one {@code name:} run from one directory meet in one default state
 * DB ({@code .sluice/state/NAME}). The second used to resume the first's positions: a Kafka
 * source in a consumer group of its own read nothing and exited 0.
 */
class StateOwnerTest {

    @TempDir
    Path dir;

    @Test
    void anotherFileOfTheSameNameIsRefusedTheSourcesCheckpointsUnlessItsDirectoryIsNamed() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String topic = KafkaTestSupport.uniqueTopic("owned");
        KafkaTestSupport.createTopics(servers, 1, topic);
        List<String[]> records = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            records.add(new String[] {null, "{\"id\": " + i + "}"});
        }
        KafkaTestSupport.produce(servers, topic, records);
        String source = "{type: kafka, topic: %s, bootstrap_servers: %s, group_id: %s, bounded: true, "
                + "schema: {id: bigint}}";
        write("a.yaml", "bids", source.formatted(topic, servers, "a-" + topic), "a.jsonl");
        write("b.yaml", "bids", source.formatted(topic, servers, "b-" + topic), "b.jsonl");
        assertEquals(0, run("run", "a.yaml"), read("stderr"));
        assertEquals(100, Files.readAllLines(dir.resolve("a.jsonl")).size());

        assertEquals(Main.EXIT_CONFIG, run("run", "b.yaml"));
        String refusal = read("stderr");
        assertTrue(
                refusal.contains("holds the checkpoints of source 'bids' that a.yaml, another pipeline file named "
                        + "'shared', saved"),
                refusal);
        assertTrue(refusal.contains("/.sluice/state/shared to continue its checkpoints"), refusal);
        assertFalse(Files.exists(dir.resolve("b.jsonl")), "the refused run wrote its output");

        // The same file through another spelling of its path is the same owner.
        Files.createDirectory(dir.resolve("sub"));
        assertEquals(0, run("run", "./sub/../a.yaml"), read("stderr"));
        // Another file of that name is refused even with other sources: the DB is a.yaml's.
        write("c.yaml", "numbers", "{type: generator, entity: bid, count: 10}", "c.jsonl");
        assertEquals(Main.EXIT_CONFIG, run("run", "c.yaml"));
        assertTrue(read("stderr").contains("holds the checkpoints of source 'bids' that a.yaml"), read("stderr"));
        // Files of one name whose sources keep no positions (file sources start over) share a DB freely.
        for (String file : List.of("x.yaml", "y.yaml", "x.yaml")) {
            Files.writeString(dir.resolve(file), """
                    name: positionless
                    sources:
                      rows: {type: file, path: a.jsonl}
                    sinks:
                      out: {type: file, from: rows, path: %s}
                    """.formatted(file.replace("yaml", "jsonl")));
            assertEquals(0, run("run", file), read("stderr"));
            assertEquals(
                    100,
                    Files.readAllLines(dir.resolve(file.replace("yaml", "jsonl")))
                            .size());
        }

        // a.yaml renamed to b.yaml, say: naming the directory hands the checkpoints over, so
        // b.yaml goes on where a.yaml stopped (the end of the topic), and owns the DB from then on.
        assertEquals(0, run("run", "b.yaml", "--state-dir", ".sluice/state/shared"), read("stderr"));
        assertEquals(0, Files.readAllLines(dir.resolve("b.jsonl")).size());
        assertEquals(0, run("run", "b.yaml"), read("stderr"));
        assertEquals(Main.EXIT_CONFIG, run("run", "a.yaml"));
        assertTrue(read("stderr").contains("that b.yaml, another pipeline file"), read("stderr"));
    }

    private void write(String file, String sourceName, String source, String output) throws IOException {
        Files.writeString(dir.resolve(file), """
                name: shared
                sources:
                  %s: %s
                sinks:
                  out: {type: file, from: %s, path: %s}
                """.formatted(sourceName, source, sourceName, output));
    }

    /** Runs sluice in a child JVM whose working directory is the test's directory; its exit code. */
    private int run(String... args) throws Exception {
        Process process = ChildJvm.start(dir, dir.resolve("stdout"), dir.resolve("stderr"), args);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "no exit within 120 s");
        return process.exitValue();
    }

    private String read(String file) throws IOException {
        return Files.readString(dir.resolve(file));
    }
}
