package dev.sluice.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * The secret values of a pipeline definition, masked in every response, log line, status and
 * error the service produces (and in the errors of {@code run} and {@code validate}): the values of keys known to be secret ({@code password},
 * {@code token}, {@code sasl.jaas.config}, {@code ssl.*.password}, the HTTP headers
 * {@code Authorization}, {@code Cookie} and {@code api-key}/{@code api_key}, and any key ending in
 * one of those after a '.', '_' or '-'), wherever they are in the file, become {@value #MASK}; values that
 * came from an environment reference show as the reference ({@code ${KAFKA_PASSWORD}}).
 */
public final class Secrets implements UnaryOperator<String> {

    public static final String MASK = "****";
    private static final Pattern SECRET_KEY = Pattern.compile(
            "(?i)(.*[._-])?(password|passwd|secret|token|authorization|api[-_]?key|cookie|sasl\\.jaas\\.config)"
                    + "|ssl\\..*\\.password");
    /** Values shorter than this are not masked by search: "a" would mask every 'a' in a message. */
    private static final int MIN_LENGTH = 4;

    /** Each value to hide and what shows instead, longest value first (a secret containing another is hidden whole). */
    private final Map<String, String> replacements;

    private Secrets(Map<String, String> replacements) {
        this.replacements = replacements;
    }

    /** The secrets of pipeline YAML (unparsable text has none to find; its errors carry no values). */
    public static Secrets of(String yaml, Path file) {
        List<String> values = new ArrayList<>();
        collect("", PipelineLoader.rawTree(yaml, file), values);
        Map<String, String> replacements = new TreeMap<>(
                Comparator.comparingInt(String::length).reversed().thenComparing(Comparator.naturalOrder()));
        values.forEach(value -> replacements.put(value, MASK));
        // A secret that came from a reference shows as the reference: as safe, and says where it came from.
        EnvReferences.valuesIn(yaml).forEach(replacements::put);
        replacements.keySet().removeIf(value -> value.length() < MIN_LENGTH);
        return new Secrets(replacements);
    }

    public static boolean isSecretKey(String key) {
        return SECRET_KEY.matcher(key).matches();
    }

    private static void collect(String key, ConfigValue value, List<String> values) {
        if (value == null) {
            return;
        }
        if (value.isMap()) {
            for (Map.Entry<String, ConfigValue> entry : value.asMap().entrySet()) {
                collect(entry.getKey(), entry.getValue(), values);
            }
        } else if (value.isList()) {
            value.asList().forEach(element -> collect(key, element, values));
        } else if (value.value() != null && isSecretKey(key)) {
            values.add(String.valueOf(value.value()));
        }
    }

    /** {@code text} with every secret value replaced by {@value #MASK}. */
    @Override
    public String apply(String text) {
        if (text == null) {
            return null;
        }
        String masked = text;
        for (Map.Entry<String, String> replacement : replacements.entrySet()) {
            masked = masked.replace(replacement.getKey(), replacement.getValue());
        }
        return masked;
    }
}
