package dev.sluice.cli;

import dev.sluice.bridge.NativeCore;
import dev.sluice.config.ConfigException;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.Secrets;
import dev.sluice.config.StageTypes;
import dev.sluice.observe.Logs;
import dev.sluice.pluginhost.Preprocessors;
import dev.sluice.runtime.BackgroundPositionStore;
import dev.sluice.runtime.Pipeline;
import dev.sluice.runtime.PositionStore;
import dev.sluice.state.StateDirectories;
import dev.sluice.state.StatePositionStore;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Options every command that touches a pipeline shares, and how it reports errors. */
final class CommonOptions {

    @Option(names = "--verbose", description = "Print stack traces with errors, and the Kafka clients' warnings.")
    boolean verbose;

    @Option(
            names = "--bridge",
            paramLabel = "ffm|jni",
            description = "How Java calls the native core: ffm (Foreign Function & Memory API, the default) or jni.")
    String bridge;

    @Option(
            names = "--log-format",
            paramLabel = "text|json",
            description = "Log lines on stderr as text (default) or as JSON objects, one per line, with the pipeline"
                    + " and node of each.")
    String logFormat = "text";

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    /** Applies the options; called first by every command, before anything touches the core. */
    void apply() {
        Logs.Format format;
        try {
            format = Logs.Format.parse(logFormat);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(command.commandLine(), e.getMessage());
        }
        if (format == Logs.Format.JSON || verbose) {
            Logs.configure(format, verbose); // else Logs.Configurator's text lines, already in place
        }
        if (bridge != null) {
            try {
                NativeCore.select(bridge);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(command.commandLine(), e.getMessage());
            }
        }
    }

    /**
     * Loads and assembles (validates, plans, opens) the pipeline in {@code file}; on a problem
     * prints the report and returns null, which the caller turns into {@link Main#EXIT_CONFIG}.
     */
    Pipeline assemble(Path file, PrintStream err) {
        return assemble(file, err, false, null);
    }

    /**
     * As {@link #assemble(Path, PrintStream)}; with {@code withState}, sources resume from and
     * checkpoint into the pipeline's state DB: {@code stateDir}, or {@code .sluice/state/NAME}
     * when it is null, which may not hold checkpoints another pipeline file of the same name saved.
     */
    Pipeline assemble(Path file, PrintStream err, boolean withState, Path stateDir) {
        PositionStore positions = PositionStore.NONE;
        try {
            // Preprocessors (plugins.preprocessors) rewrite the text first; without them this is PipelineLoader.load.
            PipelineSpec spec = Preprocessors.load(file);
            if (withState) {
                // Opens while the pipeline is validated and planned; Pipeline waits for it before opening stages.
                Path directory = StateDirectories.forPipeline(spec.name(), stateDir);
                // A --state-dir named by the user is theirs to hand from one pipeline file to another.
                String owner = StateDirectories.ownerOf(file);
                positions = new BackgroundPositionStore(
                        () -> StatePositionStore.open(directory, spec.name()).claimFor(owner, stateDir != null));
            }
            return Pipeline.assemble(spec, StageTypes.installed(), positions);
        } catch (ConfigException e) {
            positions.close();
            report(err, e, maskOf(file));
        } catch (RuntimeException e) {
            positions.close();
            report(err, "error: " + file + ": ", e, maskOf(file));
        }
        return null;
    }

    /** JSON log lines asked for: then what a command writes on stderr goes through {@link #err}. */
    boolean jsonLogs() {
        return logFormat.equals("json");
    }

    /**
     * Where a command writes its messages of {@code level} about {@code pipeline} (may be null):
     * stderr, or with JSON logs a stream whose lines become log lines.
     */
    PrintStream err(ch.qos.logback.classic.Level level, String pipeline) {
        return jsonLogs() ? Logs.lines(level, pipeline) : System.err;
    }

    /** Messages show environment references, not their values, and no secret (read only on an error). */
    static UnaryOperator<String> maskOf(Path file) {
        try {
            return Secrets.of(PipelineLoader.read(file), file);
        } catch (ConfigException unreadable) {
            return UnaryOperator.identity();
        }
    }

    /** Prints a configuration problem report: one paragraph per problem, no stack trace. */
    void report(PrintStream err, ConfigException e) {
        report(err, e, UnaryOperator.identity());
    }

    private void report(PrintStream err, ConfigException e, UnaryOperator<String> mask) {
        for (ConfigException problem : e.problems()) {
            err.println("error: " + mask.apply(problem.getMessage()));
        }
        if (verbose) {
            e.printStackTrace(err);
        }
    }

    void report(PrintStream err, String prefix, Throwable e) {
        report(err, prefix, e, UnaryOperator.identity());
    }

    private void report(PrintStream err, String prefix, Throwable e, UnaryOperator<String> mask) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        err.println(prefix + mask.apply(message));
        if (verbose) {
            e.printStackTrace(err);
        } else {
            err.println("(run with --verbose for the stack trace)");
        }
    }
}
