package dev.sluice.bridge;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** The file formats the core reads and writes (NativeFileReader, NativeFileWriter), and the one a file name implies. */
public final class FileFormats {

    public static final List<String> ALL = List.of("json", "csv", "parquet");

    /** The extensions {@link #resolve} knows, for messages. */
    public static final String EXTENSIONS = ".json, .jsonl, .ndjson, .csv, .tsv, .parquet, .pq";

    /** What a CSV reader's {@code header} setting means (file sources and side tables read alike). */
    public static final String CSV_HEADER_DOC =
            "CSV: the first line names the columns. A declared schema takes its columns "
                    + "from it by name (exactly, else ignoring case and surrounding spaces); header columns it does not "
                    + "declare are not read.";

    private FileFormats() {}

    /** The explicit format, or the one the file's extension implies. */
    public static String resolve(String configured, Path path) {
        if (configured != null) {
            return configured;
        }
        String name = path.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".csv") || name.endsWith(".tsv")) {
            return "csv";
        }
        if (name.endsWith(".parquet") || name.endsWith(".pq")) {
            return "parquet";
        }
        if (name.endsWith(".json") || name.endsWith(".jsonl") || name.endsWith(".ndjson")) {
            return "json";
        }
        throw new dev.sluice.plugin.InvalidSettingException(
                "format",
                "cannot tell the format of " + path + " from its extension; set format: json, csv or parquet");
    }
}
