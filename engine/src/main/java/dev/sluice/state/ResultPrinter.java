package dev.sluice.state;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.util.Text;

/**
 * Prints a query result for people ({@link Format#TABLE}: aligned columns, numbers right-aligned,
 * NULL for null) or for programs ({@link Format#JSON}: one JSON object per row). Timestamps
 * print as ISO-8601; nested values (lists, structs) as JSON. Stateless and thread-safe.
 */
public final class ResultPrinter {

    /** How to print. */
    public enum Format {
        TABLE,
        JSON
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String NULL = "NULL";

    private ResultPrinter() {}

    /** Prints every row of {@code root} to {@code out}. */
    public static void print(VectorSchemaRoot root, Format format, PrintStream out) {
        switch (format) {
            case TABLE -> printTable(root, out);
            case JSON -> printJsonLines(root, out);
        }
        out.flush();
    }

    private static void printJsonLines(VectorSchemaRoot root, PrintStream out) {
        List<FieldVector> columns = root.getFieldVectors();
        for (int row = 0; row < root.getRowCount(); row++) {
            Map<String, Object> object = new LinkedHashMap<>();
            for (FieldVector column : columns) {
                object.put(column.getName(), value(column, row));
            }
            out.println(json(object));
        }
    }

    private static void printTable(VectorSchemaRoot root, PrintStream out) {
        List<FieldVector> columns = root.getFieldVectors();
        int rows = root.getRowCount();
        String[][] cells = new String[rows][columns.size()];
        int[] widths = new int[columns.size()];
        boolean[] numeric = new boolean[columns.size()];
        for (int c = 0; c < columns.size(); c++) {
            FieldVector column = columns.get(c);
            widths[c] = width(column.getName());
            ArrowType type = column.getField().getType();
            numeric[c] = type instanceof ArrowType.Int
                    || type instanceof ArrowType.FloatingPoint
                    || type instanceof ArrowType.Decimal;
            for (int r = 0; r < rows; r++) {
                cells[r][c] = cell(value(column, r));
                widths[c] = Math.max(widths[c], width(cells[r][c]));
            }
        }
        String[] header = columns.stream().map(FieldVector::getName).toArray(String[]::new);
        out.println(line(header, widths, numeric));
        StringBuilder rule = new StringBuilder();
        for (int c = 0; c < widths.length; c++) {
            rule.append(c == 0 ? "" : "-+-").append("-".repeat(widths[c]));
        }
        out.println(rule);
        for (String[] row : cells) {
            out.println(line(row, widths, numeric));
        }
    }

    private static String line(String[] cells, int[] widths, boolean[] rightAligned) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < cells.length; c++) {
            String padding = " ".repeat(widths[c] - width(cells[c]));
            line.append(c == 0 ? "" : " | ");
            line.append(rightAligned[c] ? padding + cells[c] : cells[c] + padding);
        }
        // Trailing blanks of the last column are noise for diff and grep.
        return line.toString().stripTrailing();
    }

    private static int width(String text) {
        return text.codePointCount(0, text.length());
    }

    /** A table cell: one line, so control characters are escaped. */
    private static String cell(Object value) {
        String text = value == null
                ? NULL
                : value instanceof String s
                        ? s
                        : value instanceof BigDecimal d
                                ? d.toPlainString()
                                : value instanceof List<?> || value instanceof Map<?, ?>
                                        ? json(value)
                                        : value.toString();
        return text.replace("\\", "\\\\")
                .replace("\n", "\\n")
                .replace("\r", "\\r")
                .replace("\t", "\\t");
    }

    /** The value at {@code row} as a plain Java value Jackson can write (no Arrow types). */
    static Object value(FieldVector column, int row) {
        if (column.isNull(row)) {
            return null;
        }
        if (column instanceof TimeStampVector timestamps) {
            return timestamp(timestamps, row);
        }
        if (column instanceof DateDayVector days) {
            return LocalDate.ofEpochDay(days.get(row)).toString();
        }
        return plain(column.getObject(row));
    }

    private static String timestamp(TimeStampVector column, int row) {
        var type = (ArrowType.Timestamp) column.getField().getType();
        long raw = column.get(row);
        Instant instant = switch (type.getUnit()) {
            case SECOND -> Instant.ofEpochSecond(raw);
            case MILLISECOND -> Instant.ofEpochMilli(raw);
            case MICROSECOND ->
                Instant.ofEpochSecond(Math.floorDiv(raw, 1_000_000L), Math.floorMod(raw, 1_000_000L) * 1_000L);
            case NANOSECOND ->
                Instant.ofEpochSecond(Math.floorDiv(raw, 1_000_000_000L), Math.floorMod(raw, 1_000_000_000L));
        };
        // As many fraction digits as the unit has, always: a column's values line up.
        int digits = switch (type.getUnit()) {
            case SECOND -> 0;
            case MILLISECOND -> 3;
            case MICROSECOND -> 6;
            case NANOSECOND -> 9;
        };
        String pattern = "uuuu-MM-dd'T'HH:mm:ss" + (digits == 0 ? "" : "." + "S".repeat(digits));
        String zone = type.getTimezone();
        if (zone == null || zone.isEmpty()) {
            return DateTimeFormatter.ofPattern(pattern).format(LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
        }
        return DateTimeFormatter.ofPattern(pattern + "XXX").format(instant.atZone(ZoneId.of(zone)));
    }

    private static Object plain(Object value) {
        return switch (value) {
            case null -> null;
            case Text text -> text.toString();
            case byte[] bytes -> "0x" + HexFormat.of().formatHex(bytes);
            case Number number -> number;
            case Boolean bool -> bool;
            case String string -> string;
            case List<?> list -> {
                List<Object> copy = new ArrayList<>(list.size());
                list.forEach(element -> copy.add(plain(element)));
                yield copy;
            }
            case Map<?, ?> map -> {
                Map<String, Object> copy = new LinkedHashMap<>();
                map.forEach((k, v) -> copy.put(String.valueOf(plain(k)), plain(v)));
                yield copy;
            }
            default -> value.toString();
        };
    }

    private static String json(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a query result as JSON", e);
        }
    }
}
