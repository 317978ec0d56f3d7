package dev.sluice.runtime;

import dev.sluice.bridge.FileFormats;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The static side tables of a {@code sql} transform (its {@code tables:} setting): files the core
 * reads once, when the query is planned, and that the query may join from its streaming input.
 * This class checks each table's settings and describes the tables for the core.
 */
final class SideTables {

    static final String PATH = "path";
    static final String FORMAT = "format";
    static final String SCHEMA = "schema";
    static final String HEADER = "header";
    static final String DELIMITER = "delimiter";

    static final ConfigDef SECTION = new ConfigDef()
            .define(
                    PATH,
                    ConfigType.PATH,
                    null,
                    true,
                    "The file, relative to the pipeline file. Read once, when the query is planned.")
            .defineEnum(
                    FORMAT,
                    FileFormats.ALL,
                    null,
                    false,
                    "json (one object per line), csv or parquet. Default: from the file extension.")
            .define(
                    SCHEMA,
                    ConfigType.MAP,
                    null,
                    false,
                    "Columns and types, e.g. {key: bigint, value: string}. JSON and CSV only; absent: inferred from "
                            + "the first lines (Parquet: the file's own). Types: " + ColumnTypes.ACCEPTED + ".")
            .define(HEADER, ConfigType.BOOLEAN, true, false, FileFormats.CSV_HEADER_DOC)
            .define(DELIMITER, ConfigType.STRING, ",", false, "CSV: the field delimiter (one character).");

    static final String DOC =
            "Static side tables the query may join, by name: each is a file read once when the query is "
                    + "planned, e.g. tables: {rates: {path: rates.csv, schema: {currency: string, rate: double}}}. The stream "
                    + "may be joined with them on equality conditions (an inner join, or a LEFT JOIN with the stream on the "
                    + "left); the file is not read again while the pipeline runs.";

    private SideTables() {}

    /** The names the SQL uses for side tables (they are not upstream nodes). */
    static Set<String> names(Settings config) {
        return config.getSections(SqlTransform.Type.TABLES).keySet();
    }

    /**
     * Checks every side table and describes it as the core's transform options expect
     * ({@code side_tables::SideTable}: name, file reader options, columns).
     *
     * @throws RuntimeException ({@link Settings#problem}) at the setting at fault, naming the node and the file
     */
    static List<Map<String, Object>> describe(Settings config) {
        List<Map<String, Object>> tables = new ArrayList<>();
        for (Map.Entry<String, ? extends Settings> entry :
                config.getSections(SqlTransform.Type.TABLES).entrySet()) {
            tables.add(describe(entry.getKey(), entry.getValue()));
        }
        return tables;
    }

    private static Map<String, Object> describe(String name, Settings table) {
        if (name.isEmpty() || name.contains(".")) {
            throw table.problem(
                    PATH, "side table '" + name + "': a side table's name must be a plain SQL name (no dots)");
        }
        Path path = table.getPath(PATH);
        if (!Files.isRegularFile(path)) {
            throw table.problem(PATH, "side table '" + name + "': the file " + path + " does not exist");
        }
        String format;
        try {
            format = FileFormats.resolve(table.has(FORMAT) ? table.getString(FORMAT) : null, path);
        } catch (InvalidSettingException e) {
            throw table.problem(FORMAT, "side table '" + name + "': " + e.getMessage());
        }
        Map<String, Object> file = new LinkedHashMap<>();
        file.put("path", path.toString());
        file.put("format", format);
        file.put("header", table.getBoolean(HEADER));
        file.put("delimiter", table.getString(DELIMITER));
        Map<String, Object> description = new LinkedHashMap<>();
        description.put("name", name);
        description.put("file", file);
        if (table.has(SCHEMA)) {
            if (format.equals("parquet")) {
                throw table.problem(
                        SCHEMA,
                        "side table '" + name + "' (" + path
                                + "): a Parquet file carries its own schema; remove `schema:`");
            }
            try {
                description.put("columns", columns(ColumnTypes.schema(table.getMap(SCHEMA))));
            } catch (IllegalArgumentException e) {
                throw table.problem(SCHEMA, "side table '" + name + "' (" + path + "): " + e.getMessage());
            }
        }
        return description;
    }

    private static List<Map<String, Object>> columns(Schema schema) {
        List<Map<String, Object>> columns = new ArrayList<>();
        for (Field field : schema.getFields()) {
            columns.add(Map.of(
                    "name", field.getName(), "type", arrowRsName(field.getType()), "nullable", field.isNullable()));
        }
        return columns;
    }

    /** The type as arrow-rs writes and parses it ({@code DataType::from_str}), for the types {@link ColumnTypes} makes. */
    static String arrowRsName(ArrowType type) {
        return switch (type) {
            case ArrowType.Bool b -> "Boolean";
            case ArrowType.Int i -> (i.getIsSigned() ? "Int" : "UInt") + i.getBitWidth();
            case ArrowType.FloatingPoint f ->
                switch (f.getPrecision()) {
                    case HALF -> "Float16";
                    case SINGLE -> "Float32";
                    case DOUBLE -> "Float64";
                };
            case ArrowType.Utf8 u -> "Utf8";
            case ArrowType.Binary b -> "Binary";
            case ArrowType.Date d ->
                switch (d.getUnit()) {
                    case DAY -> "Date32";
                    case MILLISECOND -> "Date64";
                };
            case ArrowType.Decimal d ->
                "Decimal" + d.getBitWidth() + "(" + d.getPrecision() + ", " + d.getScale() + ")";
            case ArrowType.Timestamp t ->
                "Timestamp("
                        + switch (t.getUnit()) {
                            case SECOND -> "Second";
                            case MILLISECOND -> "Millisecond";
                            case MICROSECOND -> "Microsecond";
                            case NANOSECOND -> "Nanosecond";
                        }
                        + ", " + (t.getTimezone() == null ? "None" : "Some(\"" + t.getTimezone() + "\")") + ")";
            default -> throw new IllegalArgumentException("type " + type + " cannot be declared for a side table");
        };
    }
}
