package dev.sluice.runtime;

import dev.sluice.config.ConfigDef;
import dev.sluice.config.NodeKind;
import dev.sluice.config.NodeSpec;
import dev.sluice.config.ParsedConfig;
import java.util.List;

/**
 * One kind of node a pipeline file can name with {@code type:}: its configuration definition
 * (used to validate the file and to generate the reference docs) and how to create the stage.
 * Built-in connectors and plugins register the same way.
 */
public interface StageType {

    NodeKind kind();

    /** The value of {@code type:} that selects this stage type. */
    String name();

    /** One paragraph for the configuration reference. */
    String doc();

    ConfigDef config();

    /**
     * Creates the stage: a {@link dev.sluice.plugin.Source}, {@link dev.sluice.plugin.Transform}
     * or {@link dev.sluice.plugin.Sink} according to {@link #kind()}.
     */
    AutoCloseable create(ParsedConfig config);

    /** The upstream node names this node reads. Default: its {@code from}. */
    default List<String> inputs(NodeSpec node, ParsedConfig config) {
        return node.from();
    }
}
