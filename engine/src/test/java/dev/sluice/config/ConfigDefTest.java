package dev.sluice.config;

import static dev.sluice.config.TestFiles.PIPE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigKey;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Validator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ConfigDefTest {

    /** The definition of the generator source used throughout. */
    static ConfigDef generatorDef() {
        return new ConfigDef()
                .defineEnum("entity", List.of("bid", "auction", "person"), null, true, "Which events to generate.")
                .define("count", ConfigType.LONG, 100_000L, false, "How many events to generate.", Validator.positive())
                .define("batch_size", ConfigType.INT, 8192, false, "Rows per batch.", Validator.between(1, 1_000_000))
                .define(
                        "batch_flush_interval",
                        ConfigType.DURATION,
                        "50ms",
                        false,
                        "Longest wait before a partial batch is sent.");
    }

    /** A source 'gen' of type 'generator' with {@code settings} (one per line) starting on line 4. */
    static NodeSpec generator(String... settings) {
        StringBuilder yaml = new StringBuilder("sources:\n  gen:\n    type: generator\n");
        for (String setting : settings) {
            yaml.append("    ").append(setting).append('\n');
        }
        return TestFiles.parse(yaml.toString()).node("gen");
    }

    private static String error(ConfigDef def, String... settings) {
        return assertThrows(ConfigException.class, () -> SettingsParser.parse(def, generator(settings)))
                .getMessage();
    }

    @Test
    void parsesSettingsAndFillsDefaults() {
        ParsedConfig config = SettingsParser.parse(generatorDef(), generator("entity: auction", "count: 1_000_000"));
        assertEquals("auction", config.getString("entity"));
        assertEquals(1_000_000L, config.getLong("count"));
        assertEquals(8192, config.getInt("batch_size"));
        assertEquals(Duration.ofMillis(50), config.getDuration("batch_flush_interval"));
        assertTrue(config.has("count"));
        assertFalse(config.has("batch_size"));
        assertEquals(new Location(PIPE, 5, 12), config.locationOf("count"));
        assertEquals(new Location(PIPE, 2, 3), config.locationOf("batch_size"), "defaults point at the node");
        assertEquals(
                List.of("entity", "count", "batch_size", "batch_flush_interval"),
                List.copyOf(config.values().keySet()));
        assertEquals("gen", config.node().name());
    }

    @Test
    void unknownKeySuggestsTheClosestKnownKey() {
        assertEquals(
                "pipe.yaml:5:5: node 'gen': unknown key 'batchsize' for source type 'generator';"
                        + " did you mean 'batch_size'? Known keys: batch_flush_interval, batch_size, count, entity",
                error(generatorDef(), "entity: bid", "batchsize: 10"));
        assertEquals(
                "pipe.yaml:5:5: node 'gen': unknown key 'colour' for source type 'generator'."
                        + " Known keys: batch_flush_interval, batch_size, count, entity",
                error(generatorDef(), "entity: bid", "colour: red"));
        assertEquals(
                "pipe.yaml:4:5: node 'gen': unknown key 'x': source type 'generator' takes no settings",
                error(new ConfigDef(), "x: 1"));
    }

    @Test
    void missingRequiredKeyIsReportedAtTheNode() {
        assertEquals(
                "pipe.yaml:2:3: node 'gen': missing required key 'entity' for source type 'generator'",
                error(generatorDef(), "count: 5"));
    }

    @Test
    void badValuesNameTheKeyTheTypeAndTheValue() {
        assertEquals(
                "pipe.yaml:5:12: node 'gen': key 'count': expected long, got 'ten'",
                error(generatorDef(), "entity: bid", "count: ten"));
        assertEquals(
                "pipe.yaml:5:12: node 'gen': key 'count' must be positive, got -5",
                error(generatorDef(), "entity: bid", "count: -5"));
        assertEquals(
                "pipe.yaml:4:13: node 'gen': key 'entity': expected one of bid, auction, person, got 'bids';"
                        + " did you mean 'bid'?",
                error(generatorDef(), "entity: bids"));
        assertEquals(
                "pipe.yaml:4:13: node 'gen': key 'entity': expected one of bid, auction, person, got a list",
                error(generatorDef(), "entity: [bid]"));
        assertEquals(
                "pipe.yaml:4:11: node 'gen': key 'count': expected long, got an empty value",
                error(generatorDef(), "count:", "entity: bid"));
    }

    @Test
    void reportsEveryProblemOfANodeInFileOrder() {
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> SettingsParser.parse(
                        generatorDef(), generator("count: lots", "batchsize: 1", "batch_flush_interval: soon")));
        assertEquals("""
                pipe.yaml:2:3: node 'gen': missing required key 'entity' for source type 'generator'
                pipe.yaml:4:12: node 'gen': key 'count': expected long, got 'lots'
                pipe.yaml:5:5: node 'gen': unknown key 'batchsize' for source type 'generator'; did you mean 'batch_size'? \
                Known keys: batch_flush_interval, batch_size, count, entity
                pipe.yaml:6:27: node 'gen': key 'batch_flush_interval': expected duration (e.g. 50ms, 1s, 2m, 1h), \
                got 'soon' (units: ns, us, ms, s, m, h, d; a number without unit means milliseconds)""", e.getMessage());
        assertEquals(4, e.problems().size());
        assertNull(e.location());
    }

    @Test
    void longsAcceptUnderscoresExponentsAndQuotedNumbers() {
        Map<String, Long> cases = Map.of(
                "100000", 100_000L,
                "1_000_000", 1_000_000L,
                "1e6", 1_000_000L,
                "1.5e3", 1_500L,
                "'8192'", 8192L,
                "\"2_000\"", 2_000L,
                "9223372036854775807", Long.MAX_VALUE);
        cases.forEach((text, expected) -> assertEquals(
                expected.longValue(),
                SettingsParser.parse(generatorDef(), generator("entity: bid", "count: " + text))
                        .getLong("count"),
                text));
    }

    @Test
    void longsRejectFractionsAndOverflow() {
        assertEquals(
                "pipe.yaml:5:12: node 'gen': key 'count': expected long, got 1.5 (not a whole number)",
                error(generatorDef(), "entity: bid", "count: 1.5"));
        assertEquals(
                "pipe.yaml:5:12: node 'gen': key 'count': expected long, got 1.0E30 (out of range)",
                error(generatorDef(), "entity: bid", "count: 1e30"));
        assertEquals(
                "pipe.yaml:5:12: node 'gen': key 'count': expected long, got '99999999999999999999' (out of range)",
                error(generatorDef(), "entity: bid", "count: 99999999999999999999"));
        assertEquals(
                "pipe.yaml:5:17: node 'gen': key 'batch_size': expected int, got 3000000000 (out of range)",
                error(generatorDef(), "entity: bid", "batch_size: 3000000000"));
        assertEquals(
                "pipe.yaml:5:17: node 'gen': key 'batch_size' must be between 1 and 1000000, got 0",
                error(generatorDef(), "entity: bid", "batch_size: 0"));
    }

    @Test
    void durationsInAllForms() {
        Map<String, Duration> cases = Map.of(
                "50ms", Duration.ofMillis(50),
                "1s", Duration.ofSeconds(1),
                "2m", Duration.ofMinutes(2),
                "1h", Duration.ofHours(1),
                "250us", Duration.ofNanos(250_000),
                "1.5s", Duration.ofMillis(1500),
                "1m30s", Duration.ofSeconds(90),
                "75", Duration.ofMillis(75),
                "PT5S", Duration.ofSeconds(5));
        cases.forEach((text, expected) -> assertEquals(
                expected,
                SettingsParser.parse(generatorDef(), generator("entity: bid", "batch_flush_interval: " + text))
                        .getDuration("batch_flush_interval"),
                text));
        assertEquals(
                "pipe.yaml:5:27: node 'gen': key 'batch_flush_interval': expected duration (e.g. 50ms, 1s, 2m, 1h),"
                        + " got -5 (durations cannot be negative)",
                error(generatorDef(), "entity: bid", "batch_flush_interval: -5"));
        assertEquals(
                "pipe.yaml:5:27: node 'gen': key 'batch_flush_interval': expected duration (e.g. 50ms, 1s, 2m, 1h),"
                        + " got 1.5 (a number without unit means whole milliseconds; add a unit, e.g. 1.5s)",
                error(generatorDef(), "entity: bid", "batch_flush_interval: 1.5"));
    }

    @Test
    void booleansAreTrueOrFalseOnly() {
        ConfigDef def = new ConfigDef().define("compress", ConfigType.BOOLEAN, false, false, "Compress output.");
        assertTrue(SettingsParser.parse(def, generator("compress: true")).getBoolean("compress"));
        assertTrue(SettingsParser.parse(def, generator("compress: 'TRUE'")).getBoolean("compress"));
        assertFalse(SettingsParser.parse(def, generator()).getBoolean("compress"));
        assertEquals(
                "pipe.yaml:4:15: node 'gen': key 'compress': expected boolean (true or false), got 'yes'",
                error(def, "compress: yes"));
    }

    @Test
    void stringsListsMapsAndDoubles() {
        ConfigDef def = new ConfigDef()
                .define("topic", ConfigType.STRING, null, false, "")
                .define("servers", ConfigType.LIST, List.of("localhost:9092"), false, "")
                .define("props", ConfigType.MAP, null, false, "")
                .define("ratio", ConfigType.DOUBLE, 0.5, false, "");
        ParsedConfig config = SettingsParser.parse(
                def,
                generator(
                        "topic: 2024", "servers: a:9092, b:9092", "props: {acks: all, retries: 3}", "ratio: 1_000.25"));
        assertEquals("2024", config.getString("topic"));
        assertEquals(List.of("a:9092", "b:9092"), config.getList("servers"));
        assertEquals(Map.of("acks", "all", "retries", "3"), config.getMap("props"));
        assertEquals(1000.25, config.getDouble("ratio"));

        ParsedConfig defaults = SettingsParser.parse(def, generator());
        assertNull(defaults.getString("topic"));
        assertEquals(List.of("localhost:9092"), defaults.getList("servers"));
        assertEquals(Map.of(), defaults.getMap("props"));
        assertEquals(0.5, defaults.getDouble("ratio"));
        assertEquals(
                List.of("x", "y"),
                SettingsParser.parse(def, generator("servers: [x, y]")).getList("servers"));

        assertEquals(
                "pipe.yaml:4:18: node 'gen': key 'servers': expected list of strings, but element 2 is a map",
                error(def, "servers: [a, {b: 1}]"));
        assertEquals(
                "pipe.yaml:4:22: node 'gen': key 'props': expected map of strings, but the value of 'b' is a list",
                error(def, "props: {a: 1, b: [2]}"));
        assertEquals(
                "pipe.yaml:4:12: node 'gen': key 'topic': expected string, got a map", error(def, "topic: {a: 1}"));
        assertEquals("pipe.yaml:4:12: node 'gen': key 'ratio': expected double, got 'half'", error(def, "ratio: half"));
    }

    @Test
    void pathsAreResolvedAgainstThePipelineDirectory() {
        ConfigDef def = new ConfigDef()
                .define("path", ConfigType.PATH, null, true, "")
                .define("checkpoint_dir", ConfigType.PATH, "state", false, "");
        Path file = Path.of("pipelines", "etl.yaml").toAbsolutePath();
        NodeSpec node = PipelineLoader.parse("sources:\n  f:\n    type: file\n    path: ../data/in.csv\n", file)
                .node("f");
        ParsedConfig config = SettingsParser.parse(def, node);
        Path dir = file.getParent();
        assertEquals(dir.resolve("../data/in.csv").normalize(), config.getPath("path"));
        assertEquals(dir.resolve("state"), config.getPath("checkpoint_dir"));
        assertTrue(config.getPath("path").isAbsolute());
    }

    @Test
    void gettersCheckKeysAndTypes() {
        ConfigDef def = generatorDef().define("limit", ConfigType.INT, null, false, "");
        ParsedConfig config = SettingsParser.parse(def, generator("entity: person"));
        assertEquals(
                "key 'count' has type long, not int",
                assertThrows(IllegalArgumentException.class, () -> config.getInt("count"))
                        .getMessage());
        assertEquals(
                "key 'nope' is not defined for source type 'generator'",
                assertThrows(IllegalArgumentException.class, () -> config.get("nope"))
                        .getMessage());
        assertThrows(IllegalStateException.class, () -> config.getInt("limit"));
        assertEquals(OptionalInt.empty(), config.getOptionalInt("limit"));
        assertEquals(OptionalLong.of(100_000L), config.getOptionalLong("count"));
        assertEquals(
                Optional.empty(),
                SettingsParser.parse(new ConfigDef().define("b", ConfigType.BOOLEAN, null, false, ""), generator())
                        .getOptionalBoolean("b"));
        assertEquals(Entity.PERSON, config.getEnum("entity", Entity.class));
    }

    enum Entity {
        BID,
        AUCTION,
        PERSON
    }

    @Test
    void problemPointsAtTheValueOfAKey() {
        ParsedConfig config = SettingsParser.parse(generatorDef(), generator("entity: bid", "count: 5"));
        assertEquals(
                "pipe.yaml:5:12: node 'gen': count exceeds the licence",
                config.problem("count", "count exceeds the licence").getMessage());
    }

    @Test
    void definitionsAreCheckedWhenDeclaredAndDefaultsWhenChecked() {
        assertEquals(
                "key 'a' is required, so it cannot have a default",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> new ConfigDef().define("a", ConfigType.LONG, 1L, true, ""))
                        .getMessage());
        assertEquals(
                "key 'a': use defineEnum to give the allowed values",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> new ConfigDef().define("a", ConfigType.ENUM, null, false, ""))
                        .getMessage());
        assertEquals(
                "key 'a' is already defined",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> new ConfigDef()
                                        .define("a", ConfigType.LONG, null, false, "")
                                        .define("a", ConfigType.INT, null, false, ""))
                        .getMessage());
        assertEquals(
                "key 'from' is reserved for every node",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> new ConfigDef().define("from", ConfigType.STRING, null, false, ""))
                        .getMessage());
        assertEquals(
                "key 'a': bad default 5x: expected duration (e.g. 50ms, 1s, 2m, 1h), got '5x'"
                        + " (units: ns, us, ms, s, m, h, d; a number without unit means milliseconds)",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SettingsParser.check(
                                        new ConfigDef().define("a", ConfigType.DURATION, "5x", false, "")))
                        .getMessage());
        assertEquals(
                "key 'a': default 0 must be positive",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SettingsParser.check(new ConfigDef()
                                        .define("a", ConfigType.INT, 0, false, "", Validator.positive())))
                        .getMessage());
        assertEquals(
                "key 'e': bad default c: expected one of a, b, got 'c'",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SettingsParser.check(
                                        new ConfigDef().defineEnum("e", List.of("a", "b"), "c", false, "")))
                        .getMessage());
    }

    @Test
    void keysDescribeTheDefinitions() {
        List<ConfigKey> keys = generatorDef().keys();
        assertEquals(
                List.of("entity", "count", "batch_size", "batch_flush_interval"),
                keys.stream().map(ConfigKey::name).toList());
        ConfigKey entity = keys.getFirst();
        assertEquals(ConfigType.ENUM, entity.type());
        assertTrue(entity.required());
        assertEquals(List.of("bid", "auction", "person"), entity.allowedValues());
        assertEquals("50ms", keys.get(3).defaultValue(), "as declared");
        assertEquals(Duration.ofMillis(50), SettingsParser.defaultOf(keys.get(3)));
        assertEquals(8192, keys.get(2).defaultValue());
        assertEquals("must be positive", keys.get(1).validator().requirement());
    }
}
