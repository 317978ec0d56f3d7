package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StageTypesTest {

    private final ConfigDef generator = ConfigDefTest.generatorDef();
    private final StageTypes registry = new StageTypes()
            .register(TestStageType.declared(NodeKind.SOURCE, "generator", generator, "Synthetic events."))
            .register(TestStageType.declared(
                    NodeKind.SOURCE, "file", new ConfigDef().define("path", ConfigType.PATH, null, true, "File."), ""))
            .register(TestStageType.declared(NodeKind.SOURCE, "kafka", new ConfigDef(), ""))
            .register(TestStageType.declared(
                    NodeKind.TRANSFORM, "sql", new ConfigDef().define("sql", ConfigType.STRING, null, true, ""), ""))
            .register(TestStageType.declared(NodeKind.SINK, "stdout", new ConfigDef(), ""));

    @Test
    void findsTheDefinitionOfANodesType() {
        NodeSpec node = ConfigDefTest.generator("entity: bid");
        assertSame(generator, registry.defFor(node));
        assertEquals("generator", registry.typeOf(node).name());
        assertEquals(
                List.of("file", "generator", "kafka"),
                registry.types(NodeKind.SOURCE).stream().map(StageType::name).toList());
    }

    @Test
    void unknownTypeIsReportedAtTheTypeValue() {
        String yaml = "sources:\n  in:\n    type: kafak\n";
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> registry.defFor(TestFiles.parse(yaml).node("in")));
        assertEquals(
                "pipe.yaml:3:11: node 'in': unknown source type 'kafak'; did you mean 'kafka'?"
                        + " Known source types: file, generator, kafka",
                e.getMessage());

        String sink = "sinks:\n  out:\n    type: kafka\n    from: x\n";
        e = assertThrows(
                ConfigException.class,
                () -> registry.defFor(TestFiles.parse(sink).node("out")));
        assertEquals("pipe.yaml:3:11: node 'out': unknown sink type 'kafka'. Known sink types: stdout", e.getMessage());
    }

    @Test
    void parseAllReportsTheProblemsOfEveryNode() {
        PipelineSpec spec = TestFiles.parse("""
                sources:
                  bid:
                    type: generator
                    entity: bid
                  broken:
                    type: generator
                    count: 0
                transforms:
                  t:
                    type: sq
                sinks:
                  out:
                    type: stdout
                    from: t
                    colour: red
                """);
        ConfigException e = assertThrows(ConfigException.class, () -> registry.parseAll(spec));
        assertEquals("""
                pipe.yaml:5:3: node 'broken': missing required key 'entity' for source type 'generator'
                pipe.yaml:7:12: node 'broken': key 'count' must be positive, got 0
                pipe.yaml:10:11: node 't': unknown transform type 'sq'; did you mean 'sql'? Known transform types: sql
                pipe.yaml:15:5: node 'out': unknown key 'colour': sink type 'stdout' takes no settings""", e.getMessage());
    }

    @Test
    void parseAllReturnsEveryNodesSettings() {
        PipelineSpec spec = PipelineLoader.load(TestFiles.resource("quickstart.yaml"));
        Map<String, ParsedConfig> parsed = registry.parseAll(spec);
        assertEquals(List.of("bid", "expensive_bids", "out"), List.copyOf(parsed.keySet()));
        assertEquals(100_000L, parsed.get("bid").getLong("count"));
        assertTrue(parsed.get("expensive_bids").getString("sql").startsWith("SELECT auction"));
    }

    @Test
    void typesAreRegisteredOnce() {
        assertEquals(
                "source type 'file' is already registered",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> registry.register(
                                        TestStageType.declared(NodeKind.SOURCE, "file", new ConfigDef(), "")))
                        .getMessage());
        registry.register(
                TestStageType.declared(NodeKind.SINK, "file", new ConfigDef(), "")); // another kind may reuse the name
    }
}
