package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void optionsOfEveryKindTheBridgeSendsAreWrittenAsJson() {
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("name", "side \"table\"\n");
        nested.put("columns", List.of("a", "b"));
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("sql", "SELECT 1");
        fields.put("header", true);
        fields.put("count", 3);
        fields.put("limit", 5_000_000_000L);
        fields.put("rate", 2.5);
        fields.put("schema_id", null);
        fields.put("tables", List.of(nested));
        fields.put("empty", Arrays.asList());
        assertEquals(
                "{\"sql\":\"SELECT 1\",\"header\":true,\"count\":3,\"limit\":5000000000,\"rate\":2.5,\"schema_id\":null,"
                        + "\"tables\":[{\"name\":\"side \\\"table\\\"\\n\",\"columns\":[\"a\",\"b\"]}],\"empty\":[]}",
                Json.object(fields));
    }

    @Test
    void aValueOfAnotherKindIsRefusedWithItsType() {
        var e = assertThrows(IllegalArgumentException.class, () -> Json.object(Map.of("when", new Object())));
        assertTrue(e.getMessage().contains("java.lang.Object"), e.getMessage());
    }

    @Test
    void stringArraysAreReadWithEscapes() throws IOException {
        assertEquals(
                List.of("bid", "a \"quoted\" name", "ü"),
                Json.stringArray("[\"bid\", \"a \\\"quoted\\\" name\", \"\\u00fc\"]"));
        assertEquals(List.of(), Json.stringArray("[]"));
        assertThrows(IOException.class, () -> Json.stringArray("{\"a\": 1}"));
        assertThrows(IOException.class, () -> Json.stringArray("[1]"));
    }
}
