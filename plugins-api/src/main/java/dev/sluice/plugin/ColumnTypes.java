package dev.sluice.plugin;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Declared schemas in pipeline files: a map of column name to a SQL-style type name, e.g.
 * {@code {id: bigint, name: string, price: decimal(10,2), at: timestamp(ms, UTC)}}. Columns
 * are nullable unless the type ends in {@code not null}.
 */
public final class ColumnTypes {

    private static final Pattern DECIMAL =
            Pattern.compile("decimal\\((\\d+)\\s*,\\s*(\\d+)\\)", Pattern.CASE_INSENSITIVE);
    private static final Pattern TIMESTAMP =
            Pattern.compile("timestamp(?:\\((s|ms|us|ns)(?:\\s*,\\s*([^)]+?))?\\s*\\))?", Pattern.CASE_INSENSITIVE);

    /** The type names accepted, for error messages and docs. */
    public static final String ACCEPTED = "boolean, tinyint, smallint, int, bigint, float, double, decimal(p,s), "
            + "string (varchar, text), binary, date, timestamp, timestamp(s|ms|us|ns[, ZONE])";

    private ColumnTypes() {}

    public static Schema schema(Map<String, String> columns) {
        List<Field> fields = new ArrayList<>();
        for (Map.Entry<String, String> column : columns.entrySet()) {
            fields.add(field(column.getKey(), column.getValue()));
        }
        return new Schema(fields);
    }

    public static Field field(String name, String typeName) {
        String raw = typeName.trim();
        boolean nullable = true;
        if (raw.toLowerCase(Locale.ROOT).endsWith("not null")) {
            nullable = false;
            raw = raw.substring(0, raw.length() - "not null".length()).trim();
        }
        return new Field(name, new FieldType(nullable, type(name, raw, typeName), null), null);
    }

    private static ArrowType type(String column, String raw, String original) {
        switch (raw.toLowerCase(Locale.ROOT)) {
            case "boolean", "bool":
                return ArrowType.Bool.INSTANCE;
            case "tinyint", "int8":
                return new ArrowType.Int(8, true);
            case "smallint", "int16":
                return new ArrowType.Int(16, true);
            case "int", "integer", "int32":
                return new ArrowType.Int(32, true);
            case "bigint", "long", "int64":
                return new ArrowType.Int(64, true);
            case "float", "real", "float32":
                return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
            case "double", "float64":
                return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
            case "string", "varchar", "text", "utf8":
                return ArrowType.Utf8.INSTANCE;
            case "binary", "bytes", "varbinary":
                return ArrowType.Binary.INSTANCE;
            case "date":
                return new ArrowType.Date(DateUnit.DAY);
            default:
                break;
        }
        Matcher decimal = DECIMAL.matcher(raw);
        if (decimal.matches()) {
            return new ArrowType.Decimal(Integer.parseInt(decimal.group(1)), Integer.parseInt(decimal.group(2)), 128);
        }
        Matcher timestamp = TIMESTAMP.matcher(raw);
        if (timestamp.matches()) {
            TimeUnit unit = switch (timestamp.group(1) == null
                    ? "ms"
                    : timestamp.group(1).toLowerCase(Locale.ROOT)) {
                case "s" -> TimeUnit.SECOND;
                case "us" -> TimeUnit.MICROSECOND;
                case "ns" -> TimeUnit.NANOSECOND;
                default -> TimeUnit.MILLISECOND;
            };
            String zone = timestamp.group(2) == null ? null : timestamp.group(2).trim();
            return new ArrowType.Timestamp(unit, zone);
        }
        throw new IllegalArgumentException(
                "column '" + column + "': unknown type '" + original + "'; use one of " + ACCEPTED);
    }
}
