package dev.sluice.peers.kstreams;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** q13's side table: a CSV file of {@code key BIGINT, value STRING} rows, no header, loaded whole. */
final class SideInput {

    private SideInput() {}

    static Map<Long, String> load(Path file) throws IOException {
        Map<Long, String> table = new HashMap<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int lineNumber = 0;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lineNumber++;
                if (line.isEmpty()) {
                    continue;
                }
                int comma = line.indexOf(',');
                if (comma < 0) {
                    throw new IOException(file + ":" + lineNumber + ": expected key,value");
                }
                try {
                    table.put(Long.parseLong(line.substring(0, comma).trim()), unquote(line.substring(comma + 1)));
                } catch (NumberFormatException e) {
                    throw new IOException(file + ":" + lineNumber + ": key is not a BIGINT: " + line.substring(0, comma));
                }
            }
        }
        return table;
    }

    /** A CSV field: "a ""quoted"" value" becomes a "quoted" value; a bare field is taken as is. */
    static String unquote(String field) {
        if (field.length() >= 2 && field.startsWith("\"") && field.endsWith("\"")) {
            return field.substring(1, field.length() - 1).replace("\"\"", "\"");
        }
        return field;
    }
}
