package dev.sluice.plugin;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a stage that writes a file had made durable at a checkpoint: the file and its length,
 * kept as the JSON of a position ({@code {"bytes": 1042, "path": "/data/out.jsonl"}}). A run
 * that resumes continues the file from {@code bytes} only if it still writes the same path: a
 * pipeline whose output moved to another file starts that file anew and leaves the old one.
 *
 * @param path the file, absolute and normalized
 * @param bytes its length when the checkpoint was taken
 */
public record FileCheckpoint(Path path, long bytes) {

    private static final Pattern JSON =
            Pattern.compile("\\{\"bytes\": ?(\\d+), ?\"path\": ?\"((?:[^\"\\\\]|\\\\.)*)\"}");

    public FileCheckpoint {
        path = path.toAbsolutePath().normalize();
    }

    /** The checkpoint as a position's JSON. */
    public String toJson() {
        StringBuilder json = new StringBuilder("{\"bytes\": ").append(bytes).append(", \"path\": \"");
        for (char c : path.toString().toCharArray()) {
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        return json.append("\"}").toString();
    }

    /** Reads {@link #toJson}'s form back. */
    public static FileCheckpoint parse(String json) {
        Matcher m = JSON.matcher(json);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a file checkpoint: " + json);
        }
        StringBuilder path = new StringBuilder();
        String escaped = m.group(2);
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c != '\\') {
                path.append(c);
            } else if (escaped.charAt(++i) == 'u') {
                path.append((char) Integer.parseInt(escaped.substring(i + 1, i + 5), 16));
                i += 4;
            } else {
                path.append(escaped.charAt(i));
            }
        }
        return new FileCheckpoint(Path.of(path.toString()), Long.parseLong(m.group(1)));
    }

    /**
     * The length to continue {@code file} from, when this checkpoint is of that file; -1 when it
     * is of another (the output moved: start anew).
     */
    public long lengthOf(Path file) {
        return path.equals(file.toAbsolutePath().normalize()) ? bytes : -1;
    }
}
