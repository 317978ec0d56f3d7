package dev.sluice.cli;

import dev.sluice.config.ConfigException;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.PipelineSpec;
import dev.sluice.runtime.Pipeline;
import dev.sluice.runtime.StageTypes;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code sluice validate PIPELINE.yaml}: checks config and SQL (planning it) without running. */
@Command(name = "validate", description = "Check a pipeline's configuration and SQL without running it; exit 2 on error.")
final class ValidateCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "PIPELINE.yaml")
    Path file;

    @Mixin
    CommonOptions options;

    @Override
    public Integer call() {
        options.apply();
        try {
            PipelineSpec spec = PipelineLoader.load(file);
            try (Pipeline pipeline = Pipeline.assemble(spec, StageTypes.builtIn())) {
                System.err.printf("%s: pipeline '%s' is valid: %d sources, %d transforms, %d sinks%n", file,
                        spec.name(), spec.sources().size(), spec.transforms().size(), spec.sinks().size());
                for (var node : spec.allNodes()) {
                    if (node.kind() != dev.sluice.config.NodeKind.SINK) {
                        System.err.printf("  %-24s %s%n", node.name(), pipeline.schemaOf(node.name()));
                    }
                }
            }
            return 0;
        } catch (ConfigException e) {
            options.report(System.err, e);
            return Main.EXIT_CONFIG;
        } catch (RuntimeException e) {
            options.report(System.err, "error: " + file + ": ", e);
            return Main.EXIT_CONFIG;
        }
    }
}
