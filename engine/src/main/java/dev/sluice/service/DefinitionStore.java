package dev.sluice.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.state.StateRow;
import dev.sluice.state.StateStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The service's pipeline definitions in its state DB: namespace {@value #NAMESPACE}, key = the
 * pipeline's name, data = {@code {"yaml", "version", "paused", "applied_at"}}. Pipeline names
 * cannot contain '.', so no pipeline's own namespace (its positions) can clash with this one.
 */
final class DefinitionStore {

    static final String NAMESPACE = "sluice.service";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final StateStore store;

    DefinitionStore(StateStore store) {
        this.store = store;
    }

    void save(PipelineDefinition definition) {
        ObjectNode data = JSON.createObjectNode()
                .put("yaml", definition.yaml())
                .put("version", definition.version())
                .put("paused", definition.paused())
                .put("applied_at", definition.appliedAt().toString());
        store.put(NAMESPACE, definition.name(), data.toString());
    }

    /** Every definition, in name order. */
    List<PipelineDefinition> loadAll() {
        List<PipelineDefinition> definitions = new ArrayList<>();
        for (StateRow row : store.scan(NAMESPACE)) {
            if (!row.namespace().equals(NAMESPACE)) {
                continue;
            }
            try {
                JsonNode data = JSON.readTree(row.data());
                definitions.add(new PipelineDefinition(
                        row.key(),
                        data.required("yaml").asText(),
                        data.required("version").asLong(),
                        data.required("paused").asBoolean(),
                        Instant.parse(data.required("applied_at").asText())));
            } catch (Exception e) {
                throw new IllegalStateException(
                        "the service's state DB holds a bad definition of pipeline '" + row.key() + "': "
                                + e.getMessage(),
                        e);
            }
        }
        return definitions;
    }

    /** Drops the definition and every row of the pipeline's own namespace (its positions). */
    void delete(String name) {
        store.deleteNamespace(name);
        store.delete(NAMESPACE, name);
    }
}
