package dev.sluice.plugin;

import dev.sluice.plugin.config.ConfigDef;

/**
 * A {@link StageType} whose kind, name, doc and settings are fixed values given to the
 * constructor, so a type only implements {@link #create} (and the capabilities it has). It does
 * not implement {@link #spiVersion()}: that must be compiled into the concrete class, as
 * {@code return SPI_VERSION;}, for the engine's version check to see the version the type was
 * built against.
 */
public abstract class AbstractStageType implements StageType {

    private final NodeKind kind;
    private final String name;
    private final String doc;
    private final ConfigDef config;

    protected AbstractStageType(NodeKind kind, String name, String doc, ConfigDef config) {
        this.kind = kind;
        this.name = name;
        this.doc = doc;
        this.config = config;
    }

    @Override
    public final NodeKind kind() {
        return kind;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final String doc() {
        return doc;
    }

    @Override
    public final ConfigDef config() {
        return config;
    }
}
