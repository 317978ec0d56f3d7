package dev.sluice.config;

import static dev.sluice.config.TestFiles.PIPE;
import static dev.sluice.config.TestFiles.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.plugin.NodeKind;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PipelineLoaderTest {

    @Test
    void loadsTheQuickstartFile() {
        Path file = TestFiles.resource("quickstart.yaml");
        PipelineSpec spec = PipelineLoader.load(file);

        assertEquals(file, spec.file());
        assertEquals("quickstart", spec.name());
        assertEquals(List.of("bid"), List.copyOf(spec.sources().keySet()));
        assertEquals(List.of("expensive_bids"), List.copyOf(spec.transforms().keySet()));
        assertEquals(List.of("out"), List.copyOf(spec.sinks().keySet()));
        assertEquals(
                List.of("name", "sources", "transforms", "sinks"),
                List.copyOf(spec.topLevel().keySet()));

        NodeSpec bid = spec.node("bid");
        assertEquals(NodeKind.SOURCE, bid.kind());
        assertEquals("bid", bid.name());
        assertEquals("generator", bid.type());
        assertEquals(new Location(file, 3, 3), bid.location());
        assertEquals(new Location(file, 4, 11), bid.typeLocation());
        assertEquals(List.of(), bid.from());
        assertEquals(
                List.of("entity", "count", "batch_size", "batch_flush_interval"),
                List.copyOf(bid.settings().keySet()));
        assertEquals(
                new ConfigValue("bid", new Location(file, 5, 13)),
                bid.settings().get("entity"));
        assertEquals(
                new ConfigValue(100_000L, new Location(file, 6, 12)),
                bid.settings().get("count"));
        assertEquals(
                new ConfigValue("50ms", new Location(file, 8, 27)),
                bid.settings().get("batch_flush_interval"));
        assertEquals(new Location(file, 7, 5), bid.locationOf("batch_size"));
        assertEquals(new Location(file, 4, 5), bid.locationOf("type"));
        assertEquals(bid.location(), bid.locationOf("absent"));

        NodeSpec sql = spec.node("expensive_bids");
        assertEquals(NodeKind.TRANSFORM, sql.kind());
        assertEquals(
                "SELECT auction, price FROM bid WHERE price > 1000\n",
                sql.settings().get("sql").value());
        assertEquals(List.of(), sql.from());

        NodeSpec out = spec.node("out");
        assertEquals(List.of("expensive_bids"), out.from());
        assertEquals(new Location(file, 17, 11), out.fromLocation("expensive_bids"));
        assertEquals(Map.of(), out.settings());
        assertEquals(List.of(bid, sql, out), spec.allNodes());
        assertSame(out, spec.nodes(NodeKind.SINK).get("out"));
        assertNull(spec.node("nope"));
    }

    @Test
    void nameDefaultsToFileNameAndNodeNamesMayHaveDots() {
        Path file = TestFiles.resource("unnamed-pipeline.yaml");
        PipelineSpec spec = PipelineLoader.load(file);
        assertEquals("unnamed-pipeline", spec.name());
        assertEquals(List.of("raw.transactions"), spec.node("archive").from());
        assertEquals(
                List.of("path"), List.copyOf(spec.node("archive").settings().keySet()));
        assertEquals("file", spec.node("raw.transactions").type());
    }

    @Test
    void fromMayListSeveralNodes() {
        PipelineSpec spec = parse("""
                sources:
                  a: {type: generator}
                  b: {type: generator}
                sinks:
                  out:
                    type: stdout
                    from:
                      - a
                      - b
                """);
        NodeSpec out = spec.node("out");
        assertEquals(List.of("a", "b"), out.from());
        assertEquals(new Location(PIPE, 8, 9), out.fromLocation("a"));
        assertEquals(new Location(PIPE, 9, 9), out.fromLocation("b"));
    }

    @Test
    void keepsScalarTypesAndNestedLocations() {
        PipelineSpec spec = parse("""
                sources:
                  k:
                    type: kafka
                    answer: no
                    enabled: true
                    ratio: 0.5
                    big: 99999999999999999999
                    grouped: 1_000_000
                    empty:
                    props:
                      acks: all
                      retries: [1, 2]
                """);
        Map<String, ConfigValue> settings = spec.node("k").settings();
        assertEquals("no", settings.get("answer").value(), "YAML 1.1 words such as 'no' stay strings");
        assertEquals(true, settings.get("enabled").value());
        assertEquals(0.5, settings.get("ratio").value());
        assertEquals("99999999999999999999", settings.get("big").value());
        assertEquals(1_000_000L, settings.get("grouped").value());
        assertTrue(settings.get("empty").isNull());
        ConfigValue props = settings.get("props");
        assertEquals(new Location(PIPE, 11, 7), props.keyLocation("acks"));
        assertEquals(new Location(PIPE, 11, 13), props.asMap().get("acks").location());
        assertEquals(
                new Location(PIPE, 12, 20),
                props.asMap().get("retries").asList().get(1).location());
        assertEquals(Map.of("acks", "all", "retries", List.of(1L, 2L)), props.toPlain());
    }

    @Test
    void resolvesAliasesAndMergeKeys() {
        PipelineSpec spec = parse("""
                sources:
                  a:
                    type: kafka
                    props: &common
                      acks: all
                      linger: 5ms
                  b:
                    type: kafka
                    props:
                      <<: *common
                      acks: '1'
                    tags: &tags [x, y]
                    more_tags: *tags
                """);
        Map<String, ConfigValue> b = spec.node("b").settings();
        assertEquals(Map.of("acks", "1", "linger", "5ms"), b.get("props").toPlain());
        assertEquals(
                List.of("acks", "linger"), List.copyOf(b.get("props").asMap().keySet()));
        assertEquals(
                new Location(PIPE, 6, 15),
                b.get("props").asMap().get("linger").location(),
                "merged values keep the location where they were written");
        assertEquals(List.of("x", "y"), b.get("more_tags").toPlain());
    }

    @Test
    void emptyBlocksHaveNoNodes() {
        PipelineSpec spec = parse("""
                sources:
                transforms: {}
                """);
        assertTrue(spec.allNodes().isEmpty());
        assertEquals("pipe", spec.name());
    }

    @Test
    void byteOrderMarkIsIgnored() {
        PipelineSpec spec = parse("\uFEFFsources:\n  a: {type: generator}\n");
        assertEquals(new Location(PIPE, 2, 3), spec.node("a").location());
        assertFalse(spec.sources().isEmpty());
    }
}
