package dev.sluice.cli;

import dev.sluice.plugin.NodeKind;
import dev.sluice.runtime.Pipeline;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code sluice validate PIPELINE.yaml}: checks config and SQL (planning it) without running. */
@Command(
        name = "validate",
        description = "Check a pipeline's configuration and SQL without running it; exit 2 on error.")
final class ValidateCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "PIPELINE.yaml")
    Path file;

    @Mixin
    CommonOptions options;

    @Override
    public Integer call() {
        options.apply();
        try (Pipeline pipeline = options.assemble(file, System.err)) {
            if (pipeline == null) {
                return Main.EXIT_CONFIG;
            }
            var spec = pipeline.spec();
            System.err.printf(
                    "%s: pipeline '%s' is valid: %d sources, %d transforms, %d sinks%n",
                    file,
                    spec.name(),
                    spec.sources().size(),
                    spec.transforms().size(),
                    spec.sinks().size());
            for (var node : spec.allNodes()) {
                if (node.kind() != NodeKind.SINK) {
                    System.err.printf("  %-24s %s%n", node.name(), pipeline.schemaOf(node.name()));
                }
            }
            return 0;
        }
    }
}
