package dev.sluice.connector.kafka;

import dev.sluice.config.ConfigDef;
import dev.sluice.config.ConfigType;
import dev.sluice.config.ParsedConfig;
import dev.sluice.plugin.InvalidSettingException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The Avro settings of the Kafka source and sink: the schema (inline or a file) and framing. */
final class AvroSettings {

    private AvroSettings() {}

    static ConfigDef define(ConfigDef def, boolean source) {
        def.define("avro_schema", ConfigType.STRING, null, false,
                        "Avro: the schema as JSON text (a record). " + (source
                                ? "Required for avro unless avro_schema_file is given."
                                : "Default: derived from the columns."))
                .define("avro_schema_file", ConfigType.PATH, null, false,
                        "Avro: a file holding the schema, relative to the pipeline file.");
        if (source) {
            def.defineEnum("avro_framing", List.of("none", "confluent"), "none", false,
                            "Avro: each record is the bare binary datum (none), or Confluent's wire format "
                                    + "(a zero byte and a 4-byte schema id first).")
                    .define("avro_schema_id", ConfigType.INT, null, false,
                            "Avro with confluent framing: the schema id the records carry (others are malformed).");
        }
        return def;
    }

    /** The core's options for Avro (schema text, framing), empty for other formats. */
    static Map<String, Object> coreOptions(ParsedConfig config, Path pipelineDirectory, boolean source) {
        Map<String, Object> options = new LinkedHashMap<>();
        if (!config.getString("format").equals("avro")) {
            for (String key : List.of("avro_schema", "avro_schema_file")) {
                if (config.has(key)) {
                    throw new InvalidSettingException(key, "only applies to format: avro");
                }
            }
            return options;
        }
        String schema = schemaText(config);
        if (schema != null) {
            options.put("avro_schema", schema);
        } else if (source) {
            throw new InvalidSettingException("avro_schema", "avro records need avro_schema or avro_schema_file");
        }
        if (source) {
            String framing = config.getString("avro_framing");
            options.put("avro_framing", framing);
            if (framing.equals("confluent")) {
                if (!config.has("avro_schema_id")) {
                    throw new InvalidSettingException("avro_schema_id", "confluent framing needs the schema id the records carry");
                }
                options.put("avro_schema_id", config.getInt("avro_schema_id"));
            }
        }
        return options;
    }

    private static String schemaText(ParsedConfig config) {
        if (config.has("avro_schema") && config.has("avro_schema_file")) {
            throw new InvalidSettingException("avro_schema_file", "give avro_schema or avro_schema_file, not both");
        }
        if (config.has("avro_schema")) {
            return config.getString("avro_schema");
        }
        if (!config.has("avro_schema_file")) {
            return null;
        }
        Path file = config.getPath("avro_schema_file"); // resolved and checked against paths.allowed_dirs
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new InvalidSettingException("avro_schema_file", "cannot read " + file + ": " + e.getMessage());
        }
    }
}
