package dev.sluice.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code sluice} command line: {@code run}, {@code validate}, {@code serve} and the commands that operate a service, .... */
@Command(
        name = "sluice",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "A lightweight streaming SQL engine: YAML pipelines of sources, SQL transforms and sinks.",
        subcommands = {
            RunCommand.class,
            ValidateCommand.class,
            StateCommand.class,
            ConfigDocsCommand.class,
            PluginCommand.class,
            ServeCommand.class,
            ServiceCommands.Apply.class,
            ServiceCommands.Pause.class,
            ServiceCommands.Resume.class,
            ServiceCommands.Delete.class,
            ServiceCommands.ListPipelines.class,
            ServiceCommands.Status.class,
            ServiceCommands.Logs.class,
            InspectCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main implements java.util.concurrent.Callable<Integer> {

    /** Exit code for a pipeline file, SQL or setting that is wrong (nothing ran). */
    public static final int EXIT_CONFIG = 2;
    /** Exit code for a run that failed while running. */
    public static final int EXIT_FAILED = 1;
    /** Exit code for a command line without a command (picocli uses 2 for other usage errors too). */
    public static final int EXIT_USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // A plain `run` skips picocli (see RunCommand.parseDirect): restarts resume sooner.
        RunCommand run = RunCommand.parseDirect(args);
        System.exit(run != null ? run.call() : execute(args));
    }

    /** Runs the command line and returns the exit code (tests call this in-process). */
    public static int execute(String... args) {
        return new CommandLine(new Main()).execute(args);
    }

    /** No command: the usage, and a non-zero exit so that scripts notice. */
    @Override
    public Integer call() {
        spec.commandLine().usage(System.err);
        return EXIT_USAGE;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Main.class.getPackage().getImplementationVersion();
            return new String[] {
                "sluice " + (version == null ? "(development build)" : version) + " on Java " + Runtime.version()
            };
        }
    }
}
