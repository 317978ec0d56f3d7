package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigDocsTest {

    @Test
    void rendersAMarkdownReference() {
        NodeTypeRegistry registry = new NodeTypeRegistry()
                .register(NodeKind.SINK, "stdout", new ConfigDef(), "Prints rows.")
                .register(NodeKind.SOURCE, "generator", ConfigDefTest.generatorDef(), "Generates synthetic\nauction events.")
                .register(NodeKind.SINK, "file", new ConfigDef()
                        .define("path", ConfigType.PATH, "out.csv", false, "Where to write; relative to the pipeline file.")
                        .defineEnum("format", List.of("csv", "json"), "csv", false, "Row format:\n csv | json.")
                        .define("headers", ConfigType.LIST, List.of(), false, ""), "");
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
        assertEquals(ConfigDocs.PIPELINE_SETTINGS + "\n" + ConfigDocs.nodeTypes(registry), ConfigDocs.markdown(registry));
    }
}
