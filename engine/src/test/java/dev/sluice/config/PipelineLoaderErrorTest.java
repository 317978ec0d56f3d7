package dev.sluice.config;

import static dev.sluice.config.TestFiles.loadError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineLoaderErrorTest {

    @Test
    void missingFile(@TempDir Path dir) {
        Path file = dir.resolve("nope.yaml");
        ConfigException e = assertThrows(ConfigException.class, () -> PipelineLoader.load(file));
        assertEquals(file + ": pipeline file not found", e.getMessage());
        assertEquals(Location.of(file), e.location());
    }

    @Test
    void directoryIsNotReadable(@TempDir Path dir) {
        ConfigException e = assertThrows(ConfigException.class, () -> PipelineLoader.load(dir));
        assertEquals(dir + ": cannot read pipeline file: it is a directory", e.getMessage());
    }

    @Test
    void invalidUtf8(@TempDir Path dir) throws IOException {
        Path file = Files.write(dir.resolve("latin1.yaml"), new byte[] {'a', ':', ' ', (byte) 0xE9, '\n'});
        ConfigException e = assertThrows(ConfigException.class, () -> PipelineLoader.load(file));
        assertEquals(file + ": cannot read pipeline file: it is not valid UTF-8 text", e.getMessage());
    }

    @Test
    void emptyFile() {
        assertEquals(
                "pipe.yaml: pipeline file is empty; expected a map with name, checkpoint, restart, delivery, inspect, tables, paths, plugins, sources, transforms, sinks",
                loadError("# nothing here\n"));
    }

    @Test
    void yamlSyntaxErrorIsOneLineWithItsPosition() {
        String message = loadError("""
                sources:
                  bid:
                    type: generator
                      count: 5
                """);
        assertEquals("pipe.yaml:4:12: YAML syntax error: mapping values are not allowed here", message);
    }

    @Test
    void yamlSyntaxErrorKeepsItsContext() {
        String message = loadError("""
                sources:
                  bid: {type: generator
                sinks: {}
                """);
        assertEquals(
                "pipe.yaml:3:6: YAML syntax error: expected ',' or '}', but got : "
                        + "(while parsing a flow mapping started at line 2, column 8)",
                message);
    }

    @Test
    void tabIndentationIsASyntaxError() {
        String message = loadError("sources:\n\tbid: {type: generator}\n");
        assertTrue(
                message.startsWith(
                        "pipe.yaml:2:1: YAML syntax error: found character '\\t(TAB)' that cannot start any token"),
                message);
        assertFalse(message.contains("\n"), message);
    }

    @Test
    void duplicateKeysInANode() {
        assertEquals("pipe.yaml:5:5: node 'bid': duplicate key 'count'; first defined at line 4", loadError("""
                sources:
                  bid:
                    type: generator
                    count: 1
                    count: 2
                """));
    }

    @Test
    void duplicateTopLevelKey() {
        assertEquals("pipe.yaml:3:1: duplicate key 'sources'; first defined at line 1", loadError("""
                sources: {}
                sinks: {}
                sources: {}
                """));
    }

    @Test
    void duplicateNodeNameInOneBlock() {
        assertEquals(
                "pipe.yaml:3:3: node 'a': name already used by the source at line 2; "
                        + "node names must be unique across sources, transforms and sinks",
                loadError("""
                sources:
                  a: {type: generator}
                  a: {type: file}
                """));
    }

    @Test
    void duplicateNodeNameAcrossBlocks() {
        assertEquals(
                "pipe.yaml:5:3: node 'a': name already used by the source at line 2; "
                        + "node names must be unique across sources, transforms and sinks",
                loadError("""
                sources:
                  a: {type: generator}
                  b: {type: generator}
                transforms:
                  a: {type: sql, sql: SELECT 1}
                """));
    }

    @Test
    void blockThatIsNotAMap() {
        assertEquals(
                "pipe.yaml:2:3: 'sources' must be a map of node names to source definitions, got a list",
                loadError("""
                sources:
                  - bid
                """));
    }

    @Test
    void nodeThatIsNotAMap() {
        assertEquals("pipe.yaml:2:8: node 'bid': expected a map with at least 'type', got 'generator'", loadError("""
                sources:
                  bid: generator
                """));
        assertEquals(
                "pipe.yaml:2:3: node 'bid': expected a map with at least 'type', got an empty value", loadError("""
                sources:
                  bid:
                """));
    }

    @Test
    void nodeWithoutType() {
        assertEquals("pipe.yaml:2:3: node 'bid': missing 'type'", loadError("""
                sources:
                  bid:
                    count: 5
                """));
    }

    @Test
    void typeThatIsNotAString() {
        assertEquals("pipe.yaml:3:11: node 'bid': 'type' must be a non-empty string, got a list", loadError("""
                sources:
                  bid:
                    type: [generator]
                """));
    }

    @Test
    void fromThatIsNotANameOrList() {
        assertEquals(
                "pipe.yaml:4:11: node 'out': 'from' must be a node name or a list of node names, got a map",
                loadError("""
                sinks:
                  out:
                    type: stdout
                    from: {a: 1}
                """));
        assertEquals("pipe.yaml:4:15: node 'out': 'from' entries must be node names, got 5", loadError("""
                sinks:
                  out:
                    type: stdout
                    from: [a, 5]
                """));
        assertEquals("pipe.yaml:4:11: node 'out': 'from' must name at least one node", loadError("""
                sinks:
                  out:
                    type: stdout
                    from: []
                """));
        assertEquals("pipe.yaml:4:15: node 'out': 'from' lists 'a' twice", loadError("""
                sinks:
                  out:
                    type: stdout
                    from: [a, a]
                """));
    }

    @Test
    void sourceWithFrom() {
        assertEquals(
                "pipe.yaml:4:5: node 'bid': a source does not take 'from'; sources read from outside the pipeline",
                loadError("""
                sources:
                  bid:
                    type: generator
                    from: other
                """));
    }

    @Test
    void sinkWithoutFrom() {
        assertEquals(
                "pipe.yaml:2:3: node 'out': missing 'from': a sink must name the node(s) it reads from",
                loadError("""
                sinks:
                  out: {type: stdout}
                """));
    }

    @Test
    void unknownTopLevelKeySuggestsTheClosest() {
        assertEquals(
                "pipe.yaml:1:1: unknown top-level key 'source'; did you mean 'sources'? "
                        + "Known top-level keys: name, checkpoint, restart, delivery, inspect, tables, paths, plugins, sources, transforms, sinks",
                loadError("source: {}\n"));
        assertEquals(
                "pipe.yaml:2:1: unknown top-level key 'metrics'. "
                        + "Known top-level keys: name, checkpoint, restart, delivery, inspect, tables, paths, plugins, sources, transforms, sinks",
                loadError("sources: {}\nmetrics: {}\n"));
    }

    @Test
    void topLevelMustBeAMap() {
        assertEquals(
                "pipe.yaml:1:1: the top level must be a map with name, checkpoint, restart, delivery, inspect, tables, paths, plugins, sources, transforms, sinks, got a list",
                loadError("- a\n- b\n"));
    }

    @Test
    void nameMustBeAString() {
        assertEquals("pipe.yaml:1:7: 'name' must be a non-empty string, got a list", loadError("name: [x]\n"));
    }

    @Test
    void onlyOneDocument() {
        assertEquals(
                "pipe.yaml:3:1: the file holds more than one YAML document ('---'); a pipeline file holds exactly one",
                loadError("sources: {}\n---\nsinks: {}\n"));
    }

    @Test
    void aliasToUnknownAnchor() {
        assertEquals(
                "pipe.yaml:4:12: node 'bid': alias '*nope' does not refer to an anchored map or list defined"
                        + " before it (anchors on single values are not supported)",
                loadError("""
                sources:
                  bid:
                    type: generator
                    props: *nope
                """));
    }

    @Test
    void reportsAllProblemsOfAFileTogether() {
        Path file = TestFiles.resource("duplicates.yaml");
        ConfigException e = assertThrows(ConfigException.class, () -> PipelineLoader.load(file));
        List<String> expected = List.of(
                file + ":5:5: node 'bid': duplicate key 'count'; first defined at line 4",
                file + ":6:3: node 'bid': name already used by the source at line 2;"
                        + " node names must be unique across sources, transforms and sinks",
                file + ":9:3: node 'out': missing 'from': a sink must name the node(s) it reads from");
        assertEquals(String.join("\n", expected), e.getMessage());
        assertEquals(
                expected, e.problems().stream().map(ConfigException::getMessage).toList());
        assertEquals(new Location(file, 6, 3), e.problems().get(1).location());
        assertEquals("bid", e.problems().get(1).node());
    }
}
