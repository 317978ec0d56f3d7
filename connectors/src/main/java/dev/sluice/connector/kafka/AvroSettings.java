package dev.sluice.connector.kafka;

import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The Avro settings of the Kafka source and sink: the schema (inline or a file) and framing. */
final class AvroSettings {

    /** The {@code avro_schema} setting. */
    public static final String AVRO_SCHEMA = "avro_schema";
    /** The {@code avro_schema_file} setting. */
    public static final String AVRO_SCHEMA_FILE = "avro_schema_file";
    /** The {@code avro_framing} setting. */
    public static final String AVRO_FRAMING = "avro_framing";
    /** The {@code avro_schema_id} setting. */
    public static final String AVRO_SCHEMA_ID = "avro_schema_id";

    private AvroSettings() {}

    static ConfigDef define(ConfigDef def, boolean source) {
        def.define(
                        AVRO_SCHEMA,
                        ConfigType.STRING,
                        null,
                        false,
                        "Avro: the schema as JSON text (a record). "
                                + (source
                                        ? "Required for avro unless avro_schema_file is given."
                                        : "Default: derived from the columns."))
                .define(
                        AVRO_SCHEMA_FILE,
                        ConfigType.PATH,
                        null,
                        false,
                        "Avro: a file holding the schema, relative to the pipeline file.");
        if (source) {
            def.defineEnum(
                            AVRO_FRAMING,
                            List.of("none", "confluent"),
                            "none",
                            false,
                            "Avro: each record is the bare binary datum (none), or Confluent's wire format "
                                    + "(a zero byte and a 4-byte schema id first).")
                    .define(
                            AVRO_SCHEMA_ID,
                            ConfigType.INT,
                            null,
                            false,
                            "Avro with confluent framing: the schema id the records carry (others are malformed).");
        }
        return def;
    }

    /** The core's options for Avro (schema text, framing), empty for other formats. */
    static Map<String, Object> coreOptions(Settings config, Path pipelineDirectory, boolean source) {
        Map<String, Object> options = new LinkedHashMap<>();
        if (!config.getString(KafkaSource.FORMAT).equals("avro")) {
            for (String key : List.of(AVRO_SCHEMA, AVRO_SCHEMA_FILE)) {
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
            throw new InvalidSettingException(AVRO_SCHEMA, "avro records need avro_schema or avro_schema_file");
        }
        if (source) {
            String framing = config.getString(AVRO_FRAMING);
            options.put("avro_framing", framing);
            if (framing.equals("confluent")) {
                if (!config.has(AVRO_SCHEMA_ID)) {
                    throw new InvalidSettingException(
                            AVRO_SCHEMA_ID, "confluent framing needs the schema id the records carry");
                }
                options.put("avro_schema_id", config.getInt(AVRO_SCHEMA_ID));
            }
        }
        return options;
    }

    private static String schemaText(Settings config) {
        if (config.has(AVRO_SCHEMA) && config.has(AVRO_SCHEMA_FILE)) {
            throw new InvalidSettingException(AVRO_SCHEMA_FILE, "give avro_schema or avro_schema_file, not both");
        }
        if (config.has(AVRO_SCHEMA)) {
            return config.getString(AVRO_SCHEMA);
        }
        if (!config.has(AVRO_SCHEMA_FILE)) {
            return null;
        }
        Path file = config.getPath(AVRO_SCHEMA_FILE); // resolved and checked against paths.allowed_dirs
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new InvalidSettingException(AVRO_SCHEMA_FILE, "cannot read " + file + ": " + e.getMessage());
        }
    }
}
