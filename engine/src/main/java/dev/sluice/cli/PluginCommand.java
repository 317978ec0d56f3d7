package dev.sluice.cli;

import dev.sluice.pluginhost.PluginLibrary;
import dev.sluice.pluginhost.PluginLoadException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code sluice plugin inspect PATH}: what a native plugin library offers. */
@Command(
        name = "plugin",
        description = "Native plugins.",
        subcommands = {PluginCommand.Inspect.class})
final class PluginCommand {

    @Command(
            name = "inspect",
            description = "Print what a plugin library offers: its name, version, ABI version and components "
                    + "with the options they declare. Exit 2 when it is no plugin for this engine.")
    static final class Inspect implements Callable<Integer> {

        @Parameters(paramLabel = "PATH", description = "The plugin's shared library (.so).")
        Path path;

        @Override
        public Integer call() {
            PluginLibrary library;
            try {
                library = PluginLibrary.load(path.toAbsolutePath());
            } catch (PluginLoadException e) {
                System.err.println("sluice plugin inspect: " + e.getMessage());
                return 2;
            }
            System.out.print(PluginDescription.text(library));
            return 0;
        }
    }
}
