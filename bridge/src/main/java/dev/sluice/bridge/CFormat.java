package dev.sluice.bridge;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/** C Data Interface format strings of flat Arrow types, both ways (Arrow Java keeps its own private). */
final class CFormat {

    private CFormat() {}

    /**
     * The format string of a flat type, or null for a type {@link DirectExport} does not write
     * (nested, dictionary, view, extension types and Null, whose arrays have no buffers).
     */
    static String of(ArrowType type) {
        return switch (type) {
            case ArrowType.Int t -> {
                String f = switch (t.getBitWidth()) {
                    case 8 -> "c";
                    case 16 -> "s";
                    case 32 -> "i";
                    case 64 -> "l";
                    default -> null;
                };
                yield f == null || t.getIsSigned() ? f : f.toUpperCase(java.util.Locale.ROOT);
            }
            case ArrowType.FloatingPoint t ->
                switch (t.getPrecision()) {
                    case HALF -> "e";
                    case SINGLE -> "f";
                    case DOUBLE -> "g";
                };
            case ArrowType.Bool t -> "b";
            case ArrowType.Utf8 t -> "u";
            case ArrowType.LargeUtf8 t -> "U";
            case ArrowType.Binary t -> "z";
            case ArrowType.LargeBinary t -> "Z";
            case ArrowType.FixedSizeBinary t -> "w:" + t.getByteWidth();
            case ArrowType.Decimal t ->
                "d:" + t.getPrecision() + "," + t.getScale() + (t.getBitWidth() == 128 ? "" : "," + t.getBitWidth());
            case ArrowType.Date t ->
                switch (t.getUnit()) {
                    case DAY -> "tdD";
                    case MILLISECOND -> "tdm";
                };
            case ArrowType.Time t ->
                switch (t.getUnit()) {
                    case SECOND -> t.getBitWidth() == 32 ? "tts" : null;
                    case MILLISECOND -> t.getBitWidth() == 32 ? "ttm" : null;
                    case MICROSECOND -> t.getBitWidth() == 64 ? "ttu" : null;
                    case NANOSECOND -> t.getBitWidth() == 64 ? "ttn" : null;
                };
            case ArrowType.Timestamp t ->
                "ts" + unit(t.getUnit()) + ":" + (t.getTimezone() == null ? "" : t.getTimezone());
            case ArrowType.Duration t -> "tD" + unit(t.getUnit());
            case ArrowType.Interval t ->
                switch (t.getUnit()) {
                    case YEAR_MONTH -> "tiM";
                    case DAY_TIME -> "tiD";
                    case MONTH_DAY_NANO -> "tin";
                };
            default -> null;
        };
    }

    private static String unit(TimeUnit unit) {
        return switch (unit) {
            case SECOND -> "s";
            case MILLISECOND -> "m";
            case MICROSECOND -> "u";
            case NANOSECOND -> "n";
        };
    }

    /** The flat type a C Data Interface format string stands for, or null for one not read here. */
    static ArrowType parse(String format) {
        if (format == null) {
            return null;
        }
        switch (format) {
            case "n":
                return ArrowType.Null.INSTANCE;
            case "b":
                return ArrowType.Bool.INSTANCE;
            case "c", "s", "i", "l":
                return new ArrowType.Int(intWidth(format), true);
            case "C", "S", "I", "L":
                return new ArrowType.Int(intWidth(format.toLowerCase(java.util.Locale.ROOT)), false);
            case "e":
                return new ArrowType.FloatingPoint(FloatingPointPrecision.HALF);
            case "f":
                return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
            case "g":
                return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
            case "u":
                return ArrowType.Utf8.INSTANCE;
            case "U":
                return ArrowType.LargeUtf8.INSTANCE;
            case "z":
                return ArrowType.Binary.INSTANCE;
            case "Z":
                return ArrowType.LargeBinary.INSTANCE;
            case "tdD":
                return new ArrowType.Date(DateUnit.DAY);
            case "tdm":
                return new ArrowType.Date(DateUnit.MILLISECOND);
            case "tts":
                return new ArrowType.Time(TimeUnit.SECOND, 32);
            case "ttm":
                return new ArrowType.Time(TimeUnit.MILLISECOND, 32);
            case "ttu":
                return new ArrowType.Time(TimeUnit.MICROSECOND, 64);
            case "ttn":
                return new ArrowType.Time(TimeUnit.NANOSECOND, 64);
            case "tiM":
                return new ArrowType.Interval(IntervalUnit.YEAR_MONTH);
            case "tiD":
                return new ArrowType.Interval(IntervalUnit.DAY_TIME);
            case "tin":
                return new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO);
            default:
                break;
        }
        try {
            if (format.startsWith("w:")) {
                return new ArrowType.FixedSizeBinary(Integer.parseInt(format.substring(2)));
            }
            if (format.startsWith("d:")) {
                String[] parts = format.substring(2).split(",", -1);
                if (parts.length < 2 || parts.length > 3) {
                    return null;
                }
                int bitWidth = parts.length == 3 ? Integer.parseInt(parts[2]) : 128;
                return new ArrowType.Decimal(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), bitWidth);
            }
        } catch (NumberFormatException e) {
            return null;
        }
        if (format.length() >= 4 && format.startsWith("ts") && format.charAt(3) == ':') {
            TimeUnit unit = timeUnit(format.charAt(2));
            String zone = format.substring(4);
            return unit == null ? null : new ArrowType.Timestamp(unit, zone.isEmpty() ? null : zone);
        }
        if (format.length() == 3 && format.startsWith("tD")) {
            TimeUnit unit = timeUnit(format.charAt(2));
            return unit == null ? null : new ArrowType.Duration(unit);
        }
        return null;
    }

    private static int intWidth(String format) {
        return switch (format) {
            case "c" -> 8;
            case "s" -> 16;
            case "i" -> 32;
            default -> 64;
        };
    }

    private static TimeUnit timeUnit(char c) {
        return switch (c) {
            case 's' -> TimeUnit.SECOND;
            case 'm' -> TimeUnit.MILLISECOND;
            case 'u' -> TimeUnit.MICROSECOND;
            case 'n' -> TimeUnit.NANOSECOND;
            default -> null;
        };
    }
}
