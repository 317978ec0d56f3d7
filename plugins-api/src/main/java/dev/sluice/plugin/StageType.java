package dev.sluice.runtime;

import dev.sluice.config.ConfigDef;
import dev.sluice.config.NodeKind;
import dev.sluice.config.NodeSpec;
import dev.sluice.config.ParsedConfig;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

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

    /**
     * Called as soon as a pipeline names this type, before its nodes are configured, once per
     * node (so it must be idempotent): a type starts slow one-time initialization here, in the
     * background, to shorten the way to the first record. Default: nothing.
     */
    default void prepare() {}

    /** The upstream node names this node reads. Default: its {@code from}. */
    default List<String> inputs(NodeSpec node, ParsedConfig config) {
        return node.from();
    }

    /** A stage type from its parts; inputs come from {@code from:}. */
    static Basic of(NodeKind kind, String name, String doc, ConfigDef config,
            Function<ParsedConfig, ? extends AutoCloseable> factory) {
        return new Basic(kind, name, doc, config, factory, (node, parsed) -> node.from(), () -> {});
    }

    /** A stage type whose inputs are derived from its settings (as SQL names its tables). */
    static Basic of(NodeKind kind, String name, String doc, ConfigDef config,
            Function<ParsedConfig, ? extends AutoCloseable> factory,
            BiFunction<NodeSpec, ParsedConfig, List<String>> inputs) {
        return new Basic(kind, name, doc, config, factory, inputs, () -> {});
    }

    /** The plain implementation behind {@link #of}. */
    record Basic(NodeKind kind, String name, String doc, ConfigDef config,
            Function<ParsedConfig, ? extends AutoCloseable> factory,
            BiFunction<NodeSpec, ParsedConfig, List<String>> inputResolver, Runnable preparation) implements StageType {

        /** This type with {@code preparation} as its {@link #prepare()}. */
        public Basic preparedBy(Runnable preparation) {
            return new Basic(kind, name, doc, config, factory, inputResolver, preparation);
        }

        @Override
        public void prepare() {
            preparation.run();
        }

        @Override
        public AutoCloseable create(ParsedConfig parsed) {
            return factory.apply(parsed);
        }

        @Override
        public List<String> inputs(NodeSpec node, ParsedConfig parsed) {
            return inputResolver.apply(node, parsed);
        }
    }
}
