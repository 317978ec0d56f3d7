package dev.sluice.plugin;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A row key carried in schema metadata. A source that knows its rows' key (e.g. the Kafka
 * source's {@code primary_key}) puts it in the schema it returns; a transform's schema keeps it
 * only where the transform guarantees it (the SQL transform when its query passes the key's
 * columns through unchanged, row for row; script, http and native plugin transforms never; a
 * Java transform by what it returns), and a sink keys its output by it when not told otherwise.
 */
public final class PrimaryKey {

    /** Schema metadata key: the key's column names, comma-separated. */
    public static final String METADATA_KEY = "sluice.primary_key";

    private PrimaryKey() {}

    /** The key in {@code schema}'s metadata, or an empty list. */
    public static List<String> of(Schema schema) {
        String columns = schema.getCustomMetadata() == null
                ? null
                : schema.getCustomMetadata().get(METADATA_KEY);
        return columns == null || columns.isBlank() ? List.of() : Arrays.asList(columns.split(","));
    }

    /** {@code schema} with {@code columns} as its key (an empty list removes it). */
    public static Schema with(Schema schema, List<String> columns) {
        Map<String, String> metadata =
                new HashMap<>(schema.getCustomMetadata() == null ? Map.of() : schema.getCustomMetadata());
        if (columns.isEmpty()) {
            metadata.remove(METADATA_KEY);
        } else {
            metadata.put(METADATA_KEY, String.join(",", columns));
        }
        return new Schema(schema.getFields(), metadata);
    }

    /** Whether every key column is a column of {@code schema}. */
    public static boolean coveredBy(List<String> columns, Schema schema) {
        return columns.stream()
                .allMatch(c ->
                        schema.getFields().stream().anyMatch(f -> f.getName().equals(c)));
    }
}
