package dev.sluice.state;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * Validates the {@code data} of state rows. Stateless and thread-safe.
 *
 * <p>Data is stored in compact form (no insignificant whitespace), so that a row typed by hand
 * in the CLI and one written by a checkpoint look alike and stay on one line in tables. Numbers
 * keep their exact digits: offsets above 2^53 and decimals such as {@code 1.10} survive.
 */
public final class StateJson {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            // Two values for one field would make json_get_* answers depend on the reader.
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private StateJson() {}

    /**
     * Returns {@code json} in compact form.
     *
     * @throws IllegalArgumentException if it is not exactly one JSON value
     */
    public static String normalize(String json) {
        if (json == null || json.isBlank()) {
            throw new IllegalArgumentException("state data must be a JSON value, got an empty string");
        }
        try {
            JsonNode node = MAPPER.readTree(json);
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            var at = e.getLocation();
            String where = at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
            throw new IllegalArgumentException("state data is not valid JSON: " + e.getOriginalMessage() + where, e);
        }
    }
}
