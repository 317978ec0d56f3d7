package dev.sluice.service;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.runtime.RestartPolicy;
import java.time.Instant;
import java.util.Map;

/**
 * A hosted pipeline's status, as {@code GET /pipelines/{name}} shows it. Counters cover the run
 * since it last started (a resume or a restart starts them again); {@code restarts} counts the
 * automatic restarts since the service started; {@code lag} is, per source and partition, the
 * records not read yet (sources that can tell: Kafka), while the pipeline runs.
 */
record PipelineStatus(
        String name,
        String state,
        long version,
        String digest,
        Instant appliedAt,
        Instant startedAt,
        int lanes,
        long recordsIn,
        long recordsOut,
        long rejected,
        double rowsPerSecond,
        double runSeconds,
        long lastCheckpointEpoch,
        Instant lastCheckpointAt,
        String lastError,
        Instant lastErrorAt,
        int restarts,
        RestartPolicy restartPolicy,
        Map<String, Map<String, Long>> lag) {

    ObjectNode toJson() {
        ObjectNode json = JsonNodeFactory.instance.objectNode();
        json.put("name", name)
                .put("state", state)
                .put("version", version)
                .put("digest", digest)
                .put("applied_at", text(appliedAt))
                .put("started_at", text(startedAt))
                .put("lanes", lanes)
                .put("records_in", recordsIn)
                .put("records_out", recordsOut)
                .put("rejected", rejected)
                .put("rows_per_second", Math.round(rowsPerSecond * 10) / 10.0)
                .put("run_seconds", Math.round(runSeconds * 1000) / 1000.0);
        ObjectNode checkpoint = json.putObject("last_checkpoint");
        checkpoint.put("epoch", lastCheckpointEpoch).put("at", text(lastCheckpointAt));
        ObjectNode error = json.putObject("last_error");
        error.put("message", lastError).put("at", text(lastErrorAt));
        ObjectNode lagByNode = json.putObject("lag");
        lag.forEach((node, partitions) -> {
            ObjectNode byPartition = lagByNode.putObject(node);
            partitions.forEach(byPartition::put);
        });
        json.put("restarts", restarts);
        json.putObject("restart_policy")
                .put("max_attempts", restartPolicy.maxAttempts())
                .put("backoff_ms", restartPolicy.backoff().toMillis());
        return json;
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }
}
