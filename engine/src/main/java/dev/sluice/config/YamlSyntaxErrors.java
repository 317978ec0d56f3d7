package dev.sluice.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the parser's multi-line YAML errors into one-line {@link ConfigException}s.
 *
 * <p>SnakeYAML (under Jackson) reports a context line, then "in 'reader', line L, column C:", a
 * snippet and a caret, then the problem with its own mark. We read that text rather than the
 * exception's fields because Jackson only exposes them through deprecated wrapper classes, and
 * because Jackson's own {@code getLocation()} is sometimes the last token rather than the problem.
 */
final class YamlSyntaxErrors {

    private static final Pattern MARK = Pattern.compile("^\\s*in '[^']*', line (\\d+), column (\\d+):?\\s*$");
    // Jackson sometimes prints a raw SnakeYAML event, e.g. <org.yaml.snakeyaml.events.SequenceStartEvent(...)>.
    private static final Pattern EVENT = Pattern.compile("<org\\.yaml\\.snakeyaml\\.events\\.(\\w+?)Event\\b[^>]*>");
    private static final int MAX_REASON = 200;

    private YamlSyntaxErrors() {}

    static ConfigException toConfigException(JsonProcessingException e, Path file) {
        String message = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        List<String> text = new ArrayList<>();
        List<int[]> marks = new ArrayList<>();
        String[] lines = message.split("\\R");
        for (int i = 0; i < lines.length; i++) {
            Matcher mark = MARK.matcher(lines[i]);
            if (mark.matches()) {
                marks.add(new int[] {Integer.parseInt(mark.group(1)), Integer.parseInt(mark.group(2))});
                i += 2; // the snippet line and the caret line under it
            } else if (!lines[i].isBlank()) {
                text.add(lines[i].strip());
            }
        }
        String problem = text.isEmpty() ? "malformed YAML" : text.getLast();
        StringBuilder reason = new StringBuilder("YAML syntax error: ").append(problem);
        if (text.size() > 1) {
            reason.append(" (").append(text.getFirst());
            if (marks.size() > 1) {
                int[] context = marks.getFirst();
                reason.append(" started at line ")
                        .append(context[0])
                        .append(", column ")
                        .append(context[1]);
            }
            reason.append(')');
        }
        Location location = marks.isEmpty()
                ? fromJackson(e.getLocation(), file)
                : new Location(file, marks.getLast()[0], marks.getLast()[1]);
        return new ConfigException(location, shorten(EVENT.matcher(reason).replaceAll("$1")));
    }

    private static Location fromJackson(JsonLocation location, Path file) {
        if (location == null || location.getLineNr() <= 0) {
            return Location.of(file);
        }
        return new Location(file, location.getLineNr(), Math.max(0, location.getColumnNr()));
    }

    private static String shorten(String reason) {
        return reason.length() <= MAX_REASON ? reason : reason.substring(0, MAX_REASON - 3) + "...";
    }
}
