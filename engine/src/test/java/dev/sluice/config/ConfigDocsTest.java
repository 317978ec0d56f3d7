package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ConfigDocsTest {

    @Test
    void rendersAMarkdownReference() {
        StageTypes registry = new StageTypes()
                .register(TestStageType.declared(NodeKind.SINK, "stdout", new ConfigDef(), "Prints rows."))
                .register(TestStageType.declared(
                        NodeKind.SOURCE,
                        "generator",
                        ConfigDefTest.generatorDef(),
                        "Generates synthetic\nauction events."))
                .register(TestStageType.declared(
                        NodeKind.SINK,
                        "file",
                        new ConfigDef()
                                .define(
                                        "path",
                                        ConfigType.PATH,
                                        "out.csv",
                                        false,
                                        "Where to write; relative to the pipeline file.")
                                .defineEnum("format", List.of("csv", "json"), "csv", false, "Row format:\n csv | json.")
                                .define("headers", ConfigType.LIST, List.of(), false, ""),
                        ""));
        assertEquals("""
                # Pipeline node types

                ## Sources

                ### `generator`

                Generates synthetic
                auction events.

                | Key | Type | Default | Required | Allowed values | Description |
                | --- | --- | --- | --- | --- | --- |
                | `entity` | enum |  | yes | `bid`, `auction`, `person` | Which events to generate. |
                | `count` | long | `100000` | no | must be positive | How many events to generate. |
                | `batch_size` | int | `8192` | no | must be between 1 and 1000000 | Rows per batch. |
                | `batch_flush_interval` | duration | `50ms` | no |  | Longest wait before a partial batch is sent. |

                ## Transforms

                No transform types are registered.

                ## Sinks

                ### `file`

                | Key | Type | Default | Required | Allowed values | Description |
                | --- | --- | --- | --- | --- | --- |
                | `path` | path | `out.csv` | no |  | Where to write; relative to the pipeline file. |
                | `format` | enum | `csv` | no | `csv`, `json` | Row format: csv \\| json. |
                | `headers` | list | `[]` | no |  |  |

                ### `stdout`

                Prints rows.

                This type takes no settings.
                """, ConfigDocs.nodeTypes(registry));
        String backends = ConfigDocs.lookupBackends(LookupBackends.installed());
        assertTrue(
                backends.contains("\n## `postgres`\n")
                        && backends.contains("| `notify_channel` | string |  | no |  | LISTEN on this channel"),
                backends);
        assertEquals(
                ConfigDocs.PIPELINE_SETTINGS + "\n" + ConfigDocs.nodeTypes(registry) + "\n" + backends + "\n"
                        + ConfigDocs.ENVIRONMENT,
                ConfigDocs.markdown(registry));
    }

    /** A read of an environment variable or system property: the argument is a literal or a constant. */
    private static final Pattern READ = Pattern.compile(
            "(?:System\\.getenv|System\\.getProperty|Boolean\\.getBoolean|Integer\\.getInteger|Long\\.getLong)\\(\\s*(\"[^\"]+\"|[A-Z_]+)");

    @Test
    void everyEnvironmentVariableAndSystemPropertyReadIsDocumented() throws IOException {
        Path repo = Path.of(System.getProperty("sluice.repo.root", ".."))
                .toAbsolutePath()
                .normalize();
        List<String> undocumented = new ArrayList<>();
        int reads = 0;
        for (String module : List.of("engine", "bridge", "connectors", "plugins-api")) {
            List<Path> sources;
            try (Stream<Path> files = Files.walk(repo.resolve(module).resolve("src/main/java"))) {
                sources = files.filter(f -> f.toString().endsWith(".java")).toList();
            }
            for (Path source : sources) {
                String code = Files.readString(source);
                Matcher read = READ.matcher(code);
                while (read.find()) {
                    reads++;
                    String name = read.group(1).startsWith("\"")
                            ? read.group(1).replace("\"", "")
                            : constant(code, read.group(1));
                    if (!documentedNames().contains(name)) {
                        undocumented.add(name + " (" + repo.relativize(source) + ")");
                    }
                }
            }
        }
        assertTrue(reads >= 8, "the scan finds the reads (found " + reads + ")");
        assertEquals(List.of(), undocumented, "read but missing from ConfigDocs.ENVIRONMENT");
    }

    /** The names in the first column of the table (a row may name several, e.g. os.name and os.arch). */
    private static List<String> documentedNames() {
        List<String> names = new ArrayList<>();
        for (String line :
                ConfigDocs.ENVIRONMENT.lines().filter(l -> l.startsWith("| `")).toList()) {
            Matcher name = Pattern.compile("`([^`]+)`").matcher(line.substring(0, line.indexOf(" | ")));
            while (name.find()) {
                names.add(name.group(1));
            }
        }
        return names;
    }

    private static String constant(String code, String name) {
        Matcher definition =
                Pattern.compile("\\b" + name + "\\s*=\\s*\"([^\"]+)\"").matcher(code);
        return definition.find() ? definition.group(1) : name + " (a constant not defined in the same file)";
    }
}
