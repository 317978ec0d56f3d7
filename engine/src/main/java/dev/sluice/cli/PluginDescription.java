package dev.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.pluginhost.PluginLibrary;
import java.io.IOException;

/** The text {@code sluice plugin inspect} prints for a library. */
final class PluginDescription {

    private static final ObjectMapper JSON = new ObjectMapper();

    private PluginDescription() {}

    static String text(PluginLibrary library) {
        StringBuilder out = new StringBuilder();
        out.append("plugin ")
                .append(library.name())
                .append(' ')
                .append(library.version())
                .append('\n');
        out.append("  file: ").append(library.path()).append('\n');
        out.append("  ABI:  ").append(library.abiVersion()).append('\n');
        out.append("  components:\n");
        for (PluginLibrary.Component component : library.components()) {
            out.append("    ")
                    .append(component.kindName())
                    .append(' ')
                    .append(component.name())
                    .append('\n');
            if (component.description() != null) {
                out.append("      ").append(component.description()).append('\n');
            }
            options(component.optionsSchema(), out);
        }
        return out.toString();
    }

    private static void options(String schema, StringBuilder out) {
        if (schema == null) {
            return;
        }
        JsonNode options;
        try {
            options = JSON.readTree(schema);
        } catch (IOException e) {
            out.append("      options: (unreadable options_schema: ")
                    .append(e.getMessage())
                    .append(")\n");
            return;
        }
        if (!options.isArray() || options.isEmpty()) {
            return;
        }
        out.append("      options:\n");
        for (JsonNode option : options) {
            out.append("        ").append(option.path("name").asText("?"));
            out.append(" (").append(option.path("type").asText("any"));
            if (option.path("required").asBoolean(false)) {
                out.append(", required");
            }
            if (option.has("default")) {
                out.append(", default ").append(option.get("default"));
            }
            out.append(")");
            if (option.hasNonNull("doc")) {
                out.append(": ").append(option.get("doc").asText());
            }
            out.append('\n');
        }
    }
}
