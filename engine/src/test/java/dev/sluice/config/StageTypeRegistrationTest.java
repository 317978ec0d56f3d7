package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Validator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Registration through the SPI: ServiceLoader discovery and the checks made on each type. */
class StageTypeRegistrationTest {

    @Test
    void everyBuiltInTypeIsFoundThroughTheServiceLoader() {
        StageTypes types = StageTypes.installed();
        // "plugin" of each kind adapts a native plugin's component (dev.sluice.pluginhost).
        assertEquals(List.of("file", "generator", "kafka", "plugin", "postgres"), names(types, NodeKind.SOURCE));
        assertEquals(List.of("http", "plugin", "script", "sql"), names(types, NodeKind.TRANSFORM));
        assertEquals(
                List.of("blackhole", "file", "kafka", "plugin", "postgres", "stdout", "webhook"),
                names(types, NodeKind.SINK));
    }

    @Test
    void aTypeBuiltAgainstAnotherSpiVersionIsRefused() {
        StageTypes types = new StageTypes();
        TestStageType newer = new TestStageType(
                StageType.SPI_VERSION + 1,
                NodeKind.SINK,
                "from-the-future",
                "built against a later SPI",
                new ConfigDef(),
                settings -> null);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> types.register(newer));
        assertEquals(
                "stage type 'from-the-future' (" + TestStageType.class.getName() + ") was built against version "
                        + (StageType.SPI_VERSION + 1) + " of the Sluice stage SPI, but this engine implements version "
                        + StageType.SPI_VERSION + "; rebuild it against this engine's plugins-api",
                e.getMessage());
        assertTrue(types.types(NodeKind.SINK).isEmpty(), "a refused type is not registered");
    }

    @Test
    void aTypeWithABadDefaultIsRefusedAtRegistration() {
        StageTypes types = new StageTypes();
        ConfigDef def = new ConfigDef().define("size", ConfigType.INT, 0, false, "", Validator.positive());
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> types.register(TestStageType.of(NodeKind.SOURCE, "bad", def, settings -> null)));
        assertEquals("source type 'bad': key 'size': default 0 must be positive", e.getMessage());
    }

    private static List<String> names(StageTypes types, NodeKind kind) {
        return types.types(kind).stream().map(StageType::name).toList();
    }
}
