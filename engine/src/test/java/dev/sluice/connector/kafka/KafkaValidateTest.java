package dev.sluice.connector.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.cli.Main;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice validate} of a Kafka pipeline has no effect on the cluster: no topic created
 * (not the sink's, not a dead-letter topic), no record written, no offsets committed for the
 * group, no member joined. A run of the same pipeline afterwards does all of it, so the checks
 * can see an effect when there is one.
 */
class KafkaValidateTest {

    @TempDir
    Path dir;

    @Test
    void validateLeavesTopicsAndGroupsAlone() throws Exception {
        String servers = KafkaTestSupport.bootstrap();
        String in = KafkaTestSupport.uniqueTopic("validate-in");
        String out = KafkaTestSupport.uniqueTopic("validate-out");
        String missing = KafkaTestSupport.uniqueTopic("validate-missing");
        String deadLetters = KafkaTestSupport.uniqueTopic("validate-dlq");
        String group = "g-" + in;
        KafkaTestSupport.createTopics(servers, 2, in, out);
        KafkaTestSupport.produce(
                servers,
                in,
                List.of(new String[] {"1", "{\"id\": 1}"}, new String[] {"2", "{\"id\": 2}"}, new String[] {
                    "3", "not json"
                }));
        Path pipeline = pipeline("p.yaml", servers, in, out, group, deadLetters);

        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            Set<String> topicsBefore = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            assertEquals(0, Main.execute("validate", pipeline.toString()));
            // A sink topic that does not exist is an error, and validation does not create it.
            Path toMissing = pipeline("missing.yaml", servers, in, missing, group, deadLetters);
            assertEquals(Main.EXIT_CONFIG, Main.execute("validate", toMissing.toString()));

            assertEquals(
                    topicsBefore, admin.listTopics().names().get(30, TimeUnit.SECONDS), "validate created a topic");
            assertEquals(0, endOffsetSum(admin, out), "validate wrote to the sink topic");
            assertEquals(Map.of(), committed(admin, group), "validate committed offsets");
            assertFalse(groups(admin).contains(group), "validate made the group known to the broker");

            // The run does what validate must not: writes, commits, creates the dead-letter topic
            // (auto-created by the broker on the first dead letter).
            assertEquals(
                    0,
                    Main.execute(
                            "run",
                            pipeline.toString(),
                            "--state-dir",
                            dir.resolve("state").toString()));
            assertEquals(2, endOffsetSum(admin, out));
            assertFalse(committed(admin, group).isEmpty(), "the run committed no offsets");
            assertTrue(groups(admin).contains(group));
            assertTrue(
                    admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(deadLetters),
                    "the run made no dead letter");
        }
    }

    private Path pipeline(String name, String servers, String in, String out, String group, String deadLetters)
            throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, """
                sources:
                  events:
                    type: kafka
                    topic: %s
                    bootstrap_servers: %s
                    group_id: %s
                    schema: {id: bigint}
                    dead_letter_topic: %s
                    bounded: true
                sinks:
                  copy:
                    type: kafka
                    from: events
                    topic: %s
                    bootstrap_servers: %s
                """.formatted(in, servers, group, deadLetters, out, servers));
        return file;
    }

    private static long endOffsetSum(Admin admin, String topic) throws Exception {
        var partitions = admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get(30, TimeUnit.SECONDS)
                .get(topic)
                .partitions();
        Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
        partitions.forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
                .mapToLong(o -> o.offset())
                .sum();
    }

    private static Map<TopicPartition, OffsetAndMetadata> committed(Admin admin, String group) throws Exception {
        return admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
    }

    private static List<String> groups(Admin admin) throws Exception {
        return admin.listGroups().all().get(30, TimeUnit.SECONDS).stream()
                .map(g -> g.groupId())
                .toList();
    }
}
