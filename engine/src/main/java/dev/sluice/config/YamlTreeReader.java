package dev.sluice.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads YAML text into a tree of {@link ConfigValue}s with the line and column of every key and
 * value, using Jackson's streaming YAML parser (a data-binding tree would lose the locations).
 *
 * <p>Beyond plain YAML it rejects duplicate keys (YAML parsers silently keep the last one), resolves
 * aliases of anchored maps and lists, and applies {@code <<} merge keys, so that shared settings can
 * be written once. Anchors on single values are not reported by Jackson, so aliases to them are
 * errors. Syntax errors end the reading; all other problems are reported to a {@link Problems}
 * sink with the key path where they occur, so the caller can say which node they belong to.
 */
final class YamlTreeReader {

    /** Receives the non-fatal problems found while reading. */
    interface Problems {
        /** A key appears twice in one map; {@code path} is the path of that map. */
        void duplicateKey(List<String> path, String key, Location location, Location first);

        /** Any other problem at {@code path}. */
        void problem(List<String> path, Location location, String reason);
    }

    private static final String MERGE_KEY = "<<";

    // YAML 1.2 semantics for words: only true/false are booleans (so "on", "no", "yes" stay strings,
    // avoiding the "Norway problem"), and an empty value is null rather than an empty string.
    private static final YAMLFactory FACTORY = YAMLFactory.builder()
            .enable(YAMLParser.Feature.PARSE_BOOLEAN_LIKE_WORDS_AS_STRINGS)
            .enable(YAMLParser.Feature.EMPTY_STRING_AS_NULL)
            .build();

    private final JsonParser parser;
    private final Path file;
    private final Problems problems;
    private final Map<String, ConfigValue> anchors = new HashMap<>();

    private YamlTreeReader(JsonParser parser, Path file, Problems problems) {
        this.parser = parser;
        this.file = file;
        this.problems = problems;
    }

    /**
     * Reads the single YAML document in {@code yaml}.
     *
     * @return the document's root value, or null if the text holds no document (empty or comments only)
     * @throws ConfigException on a YAML syntax error
     */
    static ConfigValue read(String yaml, Path file, Problems problems) {
        try (JsonParser parser = FACTORY.createParser(yaml)) {
            return new YamlTreeReader(parser, file, problems).readDocument();
        } catch (JsonProcessingException e) {
            throw YamlSyntaxErrors.toConfigException(e, file);
        } catch (IOException e) {
            // Reading from a String does no I/O; Jackson only declares the exception.
            throw new UncheckedIOException(e);
        }
    }

    private ConfigValue readDocument() throws IOException {
        if (parser.nextToken() == null) {
            return null;
        }
        ConfigValue root = readValue(List.of());
        if (parser.nextToken() != null) {
            problems.problem(
                    List.of(),
                    location(),
                    "the file holds more than one YAML document ('---'); a pipeline file holds exactly one");
        }
        return root;
    }

    /** Reads the value at the current token, leaving the parser on its last token. */
    private ConfigValue readValue(List<String> path) throws IOException {
        Location location = location();
        JsonToken token = parser.currentToken();
        return switch (token) {
            case START_OBJECT -> readMap(path, location);
            case START_ARRAY -> readList(path, location);
            case VALUE_STRING -> isAlias() ? resolveAlias(path, location) : text(path, location);
            case VALUE_NUMBER_INT -> new ConfigValue(integer(), location);
            case VALUE_NUMBER_FLOAT -> new ConfigValue(floatingPoint(), location);
            case VALUE_TRUE -> new ConfigValue(true, location);
            case VALUE_FALSE -> new ConfigValue(false, location);
            case VALUE_NULL -> new ConfigValue(null, location);
            default -> {
                problems.problem(path, location, "unsupported YAML value (" + token + "); use a string instead");
                yield new ConfigValue(parser.getText(), location);
            }
        };
    }

    private ConfigValue readMap(List<String> path, Location location) throws IOException {
        String anchor = anchor();
        LocatedMap.Builder map = new LocatedMap.Builder();
        List<ConfigValue> mergeSources = new ArrayList<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String key = parser.currentName();
            Location keyLocation = location();
            parser.nextToken();
            ConfigValue value = readValue(append(path, key));
            if (map.containsKey(key)) {
                problems.duplicateKey(path, key, keyLocation, map.keyLocation(key));
            } else if (key.equals(MERGE_KEY)) {
                collectMergeSources(path, value, mergeSources);
                map.put(key, keyLocation, value); // placeholder, so a second '<<' counts as a duplicate
            } else {
                map.put(key, keyLocation, value);
            }
        }
        LocatedMap entries = map.containsKey(MERGE_KEY) ? merge(map, mergeSources) : map.build();
        ConfigValue result = new ConfigValue(entries, location);
        rememberAnchor(anchor, result);
        return result;
    }

    private ConfigValue readList(List<String> path, Location location) throws IOException {
        String anchor = anchor();
        List<ConfigValue> list = new ArrayList<>();
        while (parser.nextToken() != JsonToken.END_ARRAY) {
            list.add(readValue(append(path, "[" + list.size() + "]")));
        }
        ConfigValue result = new ConfigValue(list, location);
        rememberAnchor(anchor, result);
        return result;
    }

    private void collectMergeSources(List<String> path, ConfigValue value, List<ConfigValue> sources) {
        List<ConfigValue> candidates = value.isList() ? value.asList() : List.of(value);
        for (ConfigValue candidate : candidates) {
            if (candidate.isMap()) {
                sources.add(candidate);
            } else {
                problems.problem(
                        path,
                        candidate.location(),
                        "the merge key '<<' takes a map or a list of maps (usually an alias such as *defaults), got "
                                + candidate.describe());
            }
        }
    }

    /** Applies YAML merge keys: explicit keys win, then earlier merge sources over later ones. */
    private static LocatedMap merge(LocatedMap.Builder explicit, List<ConfigValue> sources) {
        LocatedMap own = explicit.build();
        LocatedMap.Builder merged = new LocatedMap.Builder();
        own.forEach((key, value) -> {
            if (!key.equals(MERGE_KEY)) {
                merged.put(key, own.keyLocation(key), value);
            }
        });
        for (ConfigValue source : sources) {
            source.asMap().forEach((key, value) -> merged.put(key, source.keyLocation(key), value));
        }
        return merged.build();
    }

    private ConfigValue resolveAlias(List<String> path, Location location) throws IOException {
        String name = parser.getText();
        ConfigValue target = anchors.get(name);
        if (target == null) {
            problems.problem(
                    path,
                    location,
                    "alias '*" + name + "' does not refer to an anchored map or list"
                            + " defined before it (anchors on single values are not supported)");
            return new ConfigValue(null, location);
        }
        return target;
    }

    private void rememberAnchor(String anchor, ConfigValue value) {
        if (anchor != null) {
            anchors.put(anchor, value);
        }
    }

    private String anchor() throws IOException {
        Object id = parser.getObjectId();
        return id == null ? null : id.toString();
    }

    private boolean isAlias() {
        return parser instanceof YAMLParser yaml && yaml.isCurrentAlias();
    }

    /** A text value with its environment references resolved ({@link EnvReferences}). */
    private ConfigValue text(List<String> path, Location location) throws IOException {
        String text = parser.getText();
        EnvReferences.Resolved resolved = EnvReferences.resolve(text);
        if (resolved.problem() != null) {
            problems.problem(path, location, resolved.problem());
            return new ConfigValue(null, location);
        }
        if (EnvReferences.isWholeReference(text)) {
            return new ConfigValue(plainScalar(resolved.text()), location);
        }
        return new ConfigValue(resolved.text(), location);
    }

    /**
     * What YAML makes of a plain scalar — a long, a double, true/false — when the value reads back
     * as the same text; otherwise the text itself, so that "007" or "1.50" reach a string setting
     * unchanged instead of as "7" or "1.5".
     */
    private static Object plainScalar(String text) {
        if (text.equals("true") || text.equals("false")) {
            return Boolean.parseBoolean(text);
        }
        try {
            if (text.matches("-?[0-9]+") && Long.toString(Long.parseLong(text)).equals(text)) {
                return Long.parseLong(text);
            }
            if (text.matches("-?[0-9]+\\.[0-9]+")
                    && Double.toString(Double.parseDouble(text)).equals(text)) {
                return Double.parseDouble(text);
            }
        } catch (NumberFormatException tooLarge) {
            // More digits than a long holds: the text, as YAML's own reading keeps it.
        }
        return text;
    }

    /** Integers that fit a long become Long; larger ones keep their text, so that no digit is lost. */
    private Object integer() throws IOException {
        if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            return parser.getText();
        }
        return parser.getLongValue();
    }

    private Object floatingPoint() throws IOException {
        String text = parser.getText();
        String unsigned = text.startsWith("-") || text.startsWith("+") ? text.substring(1) : text;
        switch (unsigned.toLowerCase(Locale.ROOT)) {
            case ".inf":
                return text.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
            case ".nan":
                return Double.NaN;
            default:
                try {
                    return parser.getDoubleValue();
                } catch (JsonProcessingException | NumberFormatException e) {
                    return text; // a YAML 1.1 form Jackson cannot convert; checks later say what is wrong
                }
        }
    }

    private Location location() {
        JsonLocation location = parser.currentTokenLocation();
        return new Location(file, Math.max(0, location.getLineNr()), Math.max(0, location.getColumnNr()));
    }

    private static List<String> append(List<String> path, String key) {
        List<String> longer = new ArrayList<>(path);
        longer.add(key);
        return List.copyOf(longer);
    }
}
