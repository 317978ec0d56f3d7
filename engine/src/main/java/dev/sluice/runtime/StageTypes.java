package dev.sluice.runtime;

import dev.sluice.config.NodeKind;
import dev.sluice.config.NodeSpec;
import dev.sluice.config.NodeTypeRegistry;
import dev.sluice.connector.blackhole.BlackholeSink;
import dev.sluice.connector.file.FileSink;
import dev.sluice.connector.file.FileSource;
import dev.sluice.connector.generator.GeneratorSource;
import dev.sluice.connector.kafka.KafkaSink;
import dev.sluice.connector.kafka.KafkaSource;
import dev.sluice.connector.stdout.StdoutSink;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The stage types a pipeline can use: the built-ins, and (later) those of loaded plugins. */
public final class StageTypes {

    private final Map<String, StageType> byKey = new LinkedHashMap<>();
    private final NodeTypeRegistry registry = new NodeTypeRegistry();

    /** The built-in sources, transforms and sinks. */
    public static StageTypes builtIn() {
        StageTypes types = new StageTypes();
        types.register(GeneratorSource.TYPE);
        types.register(FileSource.TYPE);
        types.register(KafkaSource.TYPE);
        types.register(SqlTransform.TYPE);
        types.register(StdoutSink.TYPE);
        types.register(FileSink.TYPE);
        types.register(KafkaSink.TYPE);
        types.register(BlackholeSink.TYPE);
        return types;
    }

    public void register(StageType type) {
        String key = key(type.kind(), type.name());
        if (byKey.putIfAbsent(key, type) != null) {
            throw new IllegalArgumentException("duplicate " + type.kind().word() + " type " + type.name());
        }
        registry.register(type.kind(), type.name(), type.config(), type.doc());
    }

    /** The type a node names; a ConfigException with suggestions when it names none. */
    public StageType typeOf(NodeSpec node) {
        registry.defFor(node);
        return byKey.get(key(node.kind(), node.type()));
    }

    public List<StageType> all() {
        return new ArrayList<>(byKey.values());
    }

    public NodeTypeRegistry registry() {
        return registry;
    }

    private static String key(NodeKind kind, String name) {
        return kind + ":" + name;
    }
}
