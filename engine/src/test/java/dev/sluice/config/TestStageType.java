package dev.sluice.config;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import java.util.function.Function;

/** A stage type for tests, from its parts; built against this SPI version unless told otherwise. */
public record TestStageType(
        int spiVersion,
        NodeKind kind,
        String name,
        String doc,
        ConfigDef config,
        Function<Settings, ? extends AutoCloseable> factory)
        implements StageType {

    /** A type whose stages {@code factory} makes. */
    public static TestStageType of(
            NodeKind kind, String name, ConfigDef config, Function<Settings, ? extends AutoCloseable> factory) {
        return new TestStageType(SPI_VERSION, kind, name, "a stage type for tests", config, factory);
    }

    /** A type that is only declared (checked and documented), never created. */
    public static TestStageType declared(NodeKind kind, String name, ConfigDef config, String doc) {
        return new TestStageType(SPI_VERSION, kind, name, doc, config, settings -> {
            throw new UnsupportedOperationException("a declared-only test type");
        });
    }

    @Override
    public AutoCloseable create(Settings settings) {
        return factory.apply(settings);
    }

    /** Sinks of this type may run in lanes (the tests that use it run one). */
    @Override
    public boolean supportsLanes() {
        return true;
    }
}
