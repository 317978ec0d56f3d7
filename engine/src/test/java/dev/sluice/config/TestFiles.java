package dev.sluice.config;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/** Helpers shared by the config tests. */
final class TestFiles {

    /** The made-up file name used for pipelines given as text. */
    static final Path PIPE = Path.of("pipe.yaml");

    private TestFiles() {}

    /** A file under src/test/resources/config. */
    static Path resource(String name) {
        URL url = TestFiles.class.getResource("/config/" + name);
        if (url == null) {
            throw new IllegalArgumentException("no test resource config/" + name);
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static PipelineSpec parse(String yaml) {
        return PipelineLoader.parse(yaml, PIPE);
    }

    /** The message of the ConfigException that parsing {@code yaml} must throw. */
    static String loadError(String yaml) {
        return assertThrows(ConfigException.class, () -> parse(yaml)).getMessage();
    }
}
