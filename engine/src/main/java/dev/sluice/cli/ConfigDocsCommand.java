package dev.sluice.cli;

import dev.sluice.config.ConfigDocs;
import dev.sluice.config.StageTypes;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code sluice config-docs}: prints the configuration reference generated from the definitions. */
@Command(name = "config-docs", description = "Print the configuration reference (Markdown) of every node type.")
final class ConfigDocsCommand implements Callable<Integer> {

    @Override
    public Integer call() {
        System.out.print(ConfigDocs.markdown(StageTypes.installed()));
        return 0;
    }
}
