package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code ${NAME}} and {@code ${NAME:-default}} in pipeline values, resolved as the file is read. */
class EnvReferencesTest {

    private static final Path FILE = Path.of("pipe.yaml");

    @AfterEach
    void restore() {
        EnvReferences.lookUpIn(System::getenv);
    }

    private static ConfigValue source(String yaml) {
        return PipelineLoader.parse(yaml, FILE).sources().get("s").settings().get("bootstrap_servers");
    }

    @Test
    void referencesResolveWithDefaultsEscapesAndTypes() {
        EnvReferences.lookUpIn(Map.of("HOST", "kafka", "PORT", "9092", "EMPTY", "")::get);
        String yaml = """
                sources:
                  s:
                    type: kafka
                    bootstrap_servers: "${HOST}:${PORT}"
                    batch_size: ${PORT}
                    group_id: $${HOST}
                    topic: "${MISSING:-fallback}"
                    dead_letter: ${EMPTY:-used}
                """;
        NodeSpec node = PipelineLoader.parse(yaml, FILE).sources().get("s");
        assertEquals("kafka:9092", node.settings().get("bootstrap_servers").value());
        assertEquals(9092L, node.settings().get("batch_size").value(), "a whole reference is typed as YAML would");
        assertEquals("${HOST}", node.settings().get("group_id").value(), "$${ is a literal ${");
        assertEquals("fallback", node.settings().get("topic").value());
        assertEquals("used", node.settings().get("dead_letter").value(), "an empty variable takes the default");
    }

    @Test
    void onlyTextThatReadsBackTheSameBecomesANumber() {
        EnvReferences.lookUpIn(
                Map.of("ZEROS", "007", "RATIO", "1.50", "HALF", "0.5", "BIG", "99999999999999999999")::get);
        NodeSpec node = PipelineLoader.parse("""
                sources:
                  s:
                    type: kafka
                    group_id: ${ZEROS}
                    topic: ${RATIO}
                    infer_rows: ${HALF}
                    dead_letter: ${BIG}
                """, FILE).sources().get("s");
        assertEquals("007", node.settings().get("group_id").value());
        assertEquals("1.50", node.settings().get("topic").value());
        assertEquals(0.5, node.settings().get("infer_rows").value());
        assertEquals("99999999999999999999", node.settings().get("dead_letter").value());
    }

    @Test
    void aMissingVariableIsAnErrorAtItsLineNamingTheReference() {
        EnvReferences.lookUpIn(Map.<String, String>of()::get);
        ConfigException e = assertThrows(ConfigException.class, () -> source("""
                sources:
                  s:
                    type: kafka
                    bootstrap_servers: ${KAFKA_BOOTSTRAP}
                """));
        String message = e.problems().getFirst().getMessage();
        assertTrue(
                message.startsWith("pipe.yaml:4:24: node 's': environment variable KAFKA_BOOTSTRAP is not set"),
                message);
        assertTrue(message.contains("${KAFKA_BOOTSTRAP:-VALUE}"), message);
    }

    @Test
    void messagesShowTheReferenceNotTheValue() {
        EnvReferences.lookUpIn(Map.of("INTERVAL", "7 fortnights", "PASSWORD", "pa55word!")::get);
        String yaml = """
                checkpoint: {interval: "${INTERVAL}"}
                sources:
                  s: {type: kafka, properties: {sasl.password: "${PASSWORD}"}}
                """;
        Secrets secrets = Secrets.of(yaml, FILE);
        String masked = secrets.apply("checkpoint.interval: cannot read '7 fortnights'; pa55word! leaked");
        assertEquals("checkpoint.interval: cannot read '${INTERVAL}'; ${PASSWORD} leaked", masked);
        assertFalse(Secrets.isSecretKey("interval"));
        assertTrue(Secrets.isSecretKey("ssl.truststore.password"));
        assertTrue(Secrets.isSecretKey("sasl.jaas.config"));
        // Webhook headers: Authorization: Bearer …, X-Api-Key: …
        assertTrue(Secrets.isSecretKey("Authorization"));
        assertTrue(Secrets.isSecretKey("Proxy-Authorization"));
        assertTrue(Secrets.isSecretKey("X-Api-Key"));
        assertFalse(Secrets.isSecretKey("X-Static"));
    }
}
