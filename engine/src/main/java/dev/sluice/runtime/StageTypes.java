package dev.sluice.runtime;

import dev.sluice.config.NodeSpec;
import dev.sluice.config.NodeTypeRegistry;
import dev.sluice.config.SettingsParser;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The stage types a pipeline can use: every {@link StageType} on the class path, found with
 * {@link ServiceLoader} (the built-in connectors, the engine's {@code sql} transform, and plugins
 * alike). The runtime knows them only through the SPI, never by class.
 */
public final class StageTypes {

    private final Map<String, StageType> byKey = new LinkedHashMap<>();
    private final NodeTypeRegistry registry = new NodeTypeRegistry();

    /**
     * The stage types listed in {@code META-INF/services/dev.sluice.plugin.StageType} of the class path.
     *
     * @throws IllegalStateException if one was built against another SPI version, or two share a name
     */
    public static StageTypes installed() {
        StageTypes types = new StageTypes();
        for (StageType type : ServiceLoader.load(StageType.class, StageTypes.class.getClassLoader())) {
            types.register(type);
        }
        return types;
    }

    /**
     * Adds a stage type after checking it was built against this engine's SPI version and that its
     * settings' definition is consistent (defaults convert and pass their validators).
     *
     * @throws IllegalStateException if {@code type} was built against another SPI version
     * @throws IllegalArgumentException if its kind already has a type of its name, or a default is bad
     */
    public void register(StageType type) {
        if (type.spiVersion() != StageType.SPI_VERSION) {
            throw new IllegalStateException("stage type '" + type.name() + "' (" + type.getClass().getName()
                    + ") was built against version " + type.spiVersion() + " of the Sluice stage SPI, but this engine "
                    + "implements version " + StageType.SPI_VERSION + "; rebuild it against this engine's plugins-api");
        }
        String key = key(type.kind(), type.name());
        if (byKey.containsKey(key)) {
            throw new IllegalArgumentException("duplicate " + type.kind().word() + " type " + type.name());
        }
        try {
            SettingsParser.check(type.config());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(type.kind().word() + " type '" + type.name() + "': " + e.getMessage(), e);
        }
        registry.register(type.kind(), type.name(), type.config(), type.doc());
        byKey.put(key, type);
    }

    /** The type a node names; a ConfigException with suggestions when it names none. */
    public StageType typeOf(NodeSpec node) {
        registry.defFor(node);
        return byKey.get(key(node.kind(), node.type()));
    }

    public NodeTypeRegistry registry() {
        return registry;
    }

    private static String key(NodeKind kind, String name) {
        return kind + ":" + name;
    }
}
