package dev.sluice.service;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;

/**
 * A pipeline as the service keeps it: the YAML text applied, its version (1 at the first apply,
 * +1 at each changed one), whether it should be running or paused, and when it was applied.
 *
 * @param paused the lifecycle state the user asked for; a restarted service restores it
 */
record PipelineDefinition(String name, String yaml, long version, boolean paused, Instant appliedAt) {

    /** A digest of the text: an identical re-apply is recognised by it. */
    String digest() {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(yaml.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    PipelineDefinition withPaused(boolean paused) {
        return new PipelineDefinition(name, yaml, version, paused, appliedAt);
    }
}
