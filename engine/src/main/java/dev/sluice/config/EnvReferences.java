package dev.sluice.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Environment variable references in pipeline values: {@code ${NAME}} and {@code ${NAME:-default}}
 * (the default when NAME is unset or empty), resolved as the file is read — before validation,
 * in {@code run}, {@code validate} and {@code serve} alike. {@code $${} writes a literal
 * {@code ${}. A value that is exactly one reference takes the type its text has in YAML (so
 * {@code port: ${PORT}} is a number) when the number reads back as the same text ("007" stays
 * text); anything else stays text.
 */
public final class EnvReferences {

    /** A reference: group 1 the name, group 3 the default (null without ':-'). */
    static final Pattern REFERENCE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?}");

    private static volatile Function<String, String> environment = System::getenv;

    private EnvReferences() {}

    /** The text with references resolved, or the reason it cannot be (an unset variable without a default). */
    record Resolved(String text, String problem) {}

    static Resolved resolve(String text) {
        if (!text.contains("${")) {
            return new Resolved(text, null);
        }
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            if (text.startsWith("$${", i)) {
                out.append("${");
                i += 3;
                continue;
            }
            Matcher reference = REFERENCE.matcher(text).region(i, text.length());
            if (text.startsWith("${", i) && reference.lookingAt()) {
                String value = environment.apply(reference.group(1));
                if (value == null || value.isEmpty()) {
                    if (reference.group(3) == null) {
                        return new Resolved(
                                null,
                                "environment variable " + reference.group(1) + " is not set (referenced as "
                                        + reference.group() + "; give a default with ${" + reference.group(1)
                                        + ":-VALUE})");
                    }
                    value = reference.group(3);
                }
                out.append(value);
                i = reference.end();
            } else {
                out.append(text.charAt(i++));
            }
        }
        return new Resolved(out.toString(), null);
    }

    /** Whether the text is exactly one reference (its value is then typed as YAML would type it). */
    static boolean isWholeReference(String text) {
        return REFERENCE.matcher(text).matches();
    }

    /**
     * The value of every reference in {@code yaml} that resolves, by the reference's text: messages
     * show the reference instead of the value.
     */
    public static Map<String, String> valuesIn(String yaml) {
        Map<String, String> values = new LinkedHashMap<>();
        Matcher reference = REFERENCE.matcher(yaml);
        while (reference.find()) {
            Resolved resolved = resolve(reference.group());
            if (resolved.problem() == null) {
                values.put(resolved.text(), reference.group());
            }
        }
        return values;
    }

    /** For tests: where variables are looked up (default: the process environment). */
    static void lookUpIn(Function<String, String> lookup) {
        environment = lookup;
    }
}
