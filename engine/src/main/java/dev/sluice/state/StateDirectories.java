package dev.sluice.state;

import dev.sluice.config.PipelineLoader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where a pipeline's state DB lives: the {@code --state-dir} given, else
 * {@code .sluice/state/<NAME>} under the current working directory. The engine (when it opens
 * the DB to checkpoint) and the CLI (when it inspects it) both resolve it here, so they agree.
 * Stateless and thread-safe.
 */
public final class StateDirectories {

    /** The default parent of the state directories, relative to the working directory. */
    public static final Path DEFAULT_ROOT = Path.of(".sluice", "state");

    private StateDirectories() {}

    /**
     * The pipeline name a CLI argument means: for a {@code .yaml}/{@code .yml} file, the file's
     * top-level {@code name:} or else its file name without extension (what
     * {@link PipelineLoader} decides); any other argument is the name itself.
     *
     * @throws dev.sluice.config.ConfigException if the YAML file is missing or malformed
     */
    public static String pipelineName(String pipelineOrFile) {
        String lower = pipelineOrFile.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".yaml") || lower.endsWith(".yml")) {
            return PipelineLoader.load(Path.of(pipelineOrFile)).name();
        }
        return pipelineOrFile;
    }

    /**
     * The state directory of pipeline {@code name}: {@code stateDir} if not null, else
     * {@code .sluice/state/<name>} under the working directory; absolute either way.
     *
     * @throws IllegalArgumentException if {@code stateDir} is null and {@code name} cannot be a
     *     directory name (empty, {@code .}, {@code ..}, or containing a path separator or NUL)
     */
    public static Path forPipeline(String name, Path stateDir) {
        if (stateDir != null) {
            return stateDir.toAbsolutePath().normalize();
        }
        checkDirectoryName(name);
        return DEFAULT_ROOT.resolve(name).toAbsolutePath().normalize();
    }

    /**
     * How a state DB records the pipeline file whose checkpoints it holds
     * ({@link StatePositionStore#claimFor}): its real path relative to the working directory, under
     * which the default state directory lies too, so a project moved as a whole keeps its DBs.
     */
    public static String ownerOf(Path pipelineFile) {
        Path file = pipelineFile.toAbsolutePath().normalize();
        try {
            return Path.of("").toRealPath().relativize(file.toRealPath()).toString();
        } catch (IOException | IllegalArgumentException e) {
            return file.toString(); // unreadable (the load reports it) or on another root
        }
    }

    private static void checkDirectoryName(String name) {
        boolean bad = name.isBlank()
                || name.equals(".")
                || name.equals("..")
                || name.indexOf('/') >= 0
                || name.indexOf('\\') >= 0
                || name.indexOf('\u0000') >= 0;
        if (bad) {
            throw new IllegalArgumentException(
                    "pipeline name '" + name + "' cannot name a state directory; pass --state-dir DIR");
        }
    }
}
