package dev.sluice.runtime;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import java.util.function.Function;

/** A stage type for tests, from its parts; built against this SPI version unless told otherwise. */
record TestStageType(int spiVersion, NodeKind kind, String name, ConfigDef config,
        Function<Settings, ? extends AutoCloseable> factory) implements StageType {

    static TestStageType of(NodeKind kind, String name, ConfigDef config, Function<Settings, ? extends AutoCloseable> factory) {
        return new TestStageType(SPI_VERSION, kind, name, config, factory);
    }

    @Override
    public String doc() {
        return "a stage type for tests";
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
