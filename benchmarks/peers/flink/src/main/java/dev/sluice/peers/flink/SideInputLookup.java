package dev.sluice.peers.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;

/**
 * Looks a key up in q13's side input, a CSV file of {@code key,value} lines (no header, no
 * quoting) read whole into memory when the task opens — what Nexmark's q13 did on Flink 1.x with
 * the legacy CSV table source's lookup function.
 */
public final class SideInputLookup extends LookupFunction {

    private final String path;
    private transient Map<Long, List<RowData>> rows;

    SideInputLookup(Path path) {
        this.path = path.toString();
    }

    @Override
    public void open(FunctionContext context) throws IOException {
        rows = read(Path.of(path));
    }

    @Override
    public Collection<RowData> lookup(RowData keyRow) {
        return keyRow.isNullAt(0) ? List.of() : rows.getOrDefault(keyRow.getLong(0), List.of());
    }

    private static Map<Long, List<RowData>> read(Path csv) throws IOException {
        Map<Long, List<RowData>> byKey = new HashMap<>();
        try (BufferedReader lines = Files.newBufferedReader(csv, StandardCharsets.UTF_8)) {
            int number = 0;
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                int comma = line.indexOf(',');
                long key;
                try {
                    key = Long.parseLong(line.substring(0, Math.max(comma, 0)).trim());
                } catch (NumberFormatException e) {
                    throw new IOException(csv + ":" + number + ": expected key,value with an integer key: " + line);
                }
                RowData row = GenericRowData.of(key, StringData.fromString(line.substring(comma + 1)));
                // A key on several lines joins with each of them, as a join would.
                byKey.merge(key, List.of(row), (a, b) -> {
                    List<RowData> both = new java.util.ArrayList<>(a);
                    both.addAll(b);
                    return List.copyOf(both);
                });
            }
        }
        return byKey;
    }
}
