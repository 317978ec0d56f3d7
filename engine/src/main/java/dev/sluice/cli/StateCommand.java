package dev.sluice.cli;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativeIoException;
import dev.sluice.bridge.NativePanicException;
import dev.sluice.config.ConfigException;
import dev.sluice.state.ResultPrinter;
import dev.sluice.state.StateDirectories;
import dev.sluice.state.StateJson;
import dev.sluice.state.StateNotFoundException;
import dev.sluice.state.StateRow;
import dev.sluice.state.StateStore;
import dev.sluice.state.StateTable;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice state query|list|set|delete}: reads a pipeline's state DB with SQL and patches
 * single rows. Reads open the DB read-only, so they work while the pipeline runs; writes need
 * the pipeline stopped (RocksDB locks the directory). Exit codes: 0 done, 1 failed (e.g. the
 * pipeline is running, or the row to delete is absent), 2 bad input (bad SQL or JSON, no state).
 */
@Command(
        name = "state",
        description = {
            "Inspect and patch a pipeline's state (checkpoint positions, plugin state) with SQL.",
            "The state is one table, 'state': namespace, key, data (JSON text), created_at (timestamp, UTC).",
            "PIPELINE is the pipeline's .yaml file or its name. The state lives in --state-dir DIR, by default "
                    + "in .sluice/state/<NAME> under the working directory."
        },
        subcommands = {
            StateCommand.Query.class,
            StateCommand.ListRows.class,
            StateCommand.Set.class,
            StateCommand.Delete.class
        },
        footer = {
            "",
            "Examples:",
            "  sluice state query p.yaml \"SELECT namespace, count(*) FROM state GROUP BY 1\"",
            "  sluice state query p \"SELECT key, json_get_int(data, 'offset') FROM state\"",
            "  sluice state set p.yaml p source/in/orders/0 '{\"offset\": 42, \"epoch\": 7}'",
            "  sluice state delete p.yaml p source/in/orders/0"
        })
final class StateCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    // Inherited, so that every subcommand answers --help.
    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            scope = CommandLine.ScopeType.INHERIT,
            description = "Show this help message and exit.")
    boolean help;

    /** {@code sluice state} alone: a subcommand is missing, which is bad input. */
    @Override
    public Integer call() {
        spec.commandLine().usage(System.err);
        return Main.EXIT_CONFIG;
    }

    /** The PIPELINE argument and {@code --state-dir}, resolved to a name and a directory. */
    static final class Target {

        @Parameters(index = "0", paramLabel = "PIPELINE", description = "The pipeline's .yaml file, or its name.")
        String pipeline;

        @Option(
                names = "--state-dir",
                paramLabel = "DIR",
                description = "State directory (default .sluice/state/<NAME>, under the working directory).")
        Path stateDir;

        String name;
        Path dir;

        void resolve() {
            name = StateDirectories.pipelineName(pipeline);
            dir = StateDirectories.forPipeline(name, stateDir);
        }
    }

    /** What every subcommand shares: the target, the common options and the error → exit code mapping. */
    abstract static class Action implements Callable<Integer> {

        @Mixin
        Target target;

        @Mixin
        CommonOptions options;

        @Override
        public final Integer call() {
            options.apply();
            try {
                target.resolve();
                return run();
            } catch (CommandLine.ParameterException e) {
                throw e; // picocli prints it with the usage and exits 2
            } catch (ConfigException e) {
                options.report(System.err, e);
                return Main.EXIT_CONFIG;
            } catch (StateNotFoundException e) {
                return badInput(
                        "no state for pipeline '" + target.name + "': " + e.getMessage()
                                + " (has it checkpointed yet? use --state-dir if its state lives elsewhere)",
                        e);
            } catch (IllegalArgumentException e) {
                return badInput(e.getMessage(), e);
            } catch (NativePanicException | NativeIoException e) {
                options.report(System.err, "error: ", e);
                return Main.EXIT_FAILED;
            } catch (NativeException e) {
                // Plan, execution and data errors of a query are the user's SQL at fault.
                return badInput("SQL: " + e.getMessage(), e);
            } catch (RuntimeException e) {
                options.report(System.err, "error: ", e);
                return Main.EXIT_FAILED;
            }
        }

        /** The subcommand proper; exceptions are mapped to exit codes by {@link #call()}. */
        abstract int run();

        private int badInput(String message, Exception e) {
            System.err.println("error: " + message);
            if (options.verbose) {
                e.printStackTrace(System.err);
            }
            return Main.EXIT_CONFIG;
        }
    }

    /** Accepts {@code table} and {@code json}, in any case. */
    static final class FormatConverter implements CommandLine.ITypeConverter<ResultPrinter.Format> {
        @Override
        public ResultPrinter.Format convert(String value) {
            try {
                return ResultPrinter.Format.valueOf(value.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("expected table or json, got '" + value + "'");
            }
        }
    }

    @Command(
            name = "query",
            description = {
                "Run SQL over the state as table 'state' and print the result to stdout; (N rows) goes to stderr.",
                "Read-only: works while the pipeline runs. Any bounded SQL that only reads works, including aggregations, "
                        + "ORDER BY and JSON functions such as json_get_int(data, 'offset'); statements that write or read files "
                        + "(COPY ... TO, CREATE EXTERNAL TABLE, INSERT, SET) are refused unless --allow-writes."
            })
    static final class Query extends Action {

        @Parameters(
                index = "1",
                paramLabel = "SQL",
                description = "The query, e.g. \"SELECT * FROM state ORDER BY key\".")
        String sql;

        @Option(
                names = "--format",
                paramLabel = "table|json",
                defaultValue = "table",
                converter = FormatConverter.class,
                description = "table (aligned columns, the default) or json (one JSON object per line).")
        ResultPrinter.Format format;

        @Option(
                names = "--allow-writes",
                description = "Let the SQL write and read files (COPY ... TO, CREATE EXTERNAL TABLE). "
                        + "The state DB itself is never changed by a query.")
        boolean allowWrites;

        @Override
        int run() {
            List<StateRow> rows;
            try (StateStore store = StateStore.openReadOnly(target.dir)) {
                rows = store.scan("");
            }
            try (BufferAllocator allocator =
                            ArrowC.rootAllocator().newChildAllocator("state-query", 0, Long.MAX_VALUE);
                    VectorSchemaRoot result = StateTable.query(rows, sql, allocator, allowWrites)) {
                ResultPrinter.print(result, format, System.out);
                System.err.println(rowCount(result.getRowCount()));
            }
            return 0;
        }
    }

    @Command(
            name = "list",
            description = "Print the state rows (all, or under a namespace prefix), by namespace and key.")
    static final class ListRows extends Action {

        @Option(
                names = "--namespace-prefix",
                paramLabel = "PREFIX",
                defaultValue = "",
                description = "Only rows whose namespace starts with PREFIX.")
        String prefix;

        @Option(
                names = "--format",
                paramLabel = "table|json",
                defaultValue = "table",
                converter = FormatConverter.class,
                description = "table (aligned columns, the default) or json (one JSON object per line).")
        ResultPrinter.Format format;

        @Override
        int run() {
            List<StateRow> rows;
            try (StateStore store = StateStore.openReadOnly(target.dir)) {
                rows = store.scan(prefix);
            }
            try (BufferAllocator allocator = ArrowC.rootAllocator().newChildAllocator("state-list", 0, Long.MAX_VALUE);
                    VectorSchemaRoot table = StateTable.toVectors(rows, allocator)) {
                ResultPrinter.print(table, format, System.out);
                System.err.println(rowCount(rows.size()));
            }
            return 0;
        }
    }

    @Command(
            name = "set",
            description = "Write JSON under NAMESPACE and KEY, replacing the row there "
                    + "(created_at = now). Needs the pipeline stopped: exit 1 while it runs.")
    static final class Set extends Action {

        @Parameters(index = "1", paramLabel = "NAMESPACE", description = "The row's namespace, e.g. the pipeline name.")
        String namespace;

        @Parameters(
                index = "2",
                paramLabel = "KEY",
                description = "The row's key, e.g. source/<node>/<topic>/<partition>.")
        String key;

        @Parameters(
                index = "3",
                paramLabel = "JSON",
                description = "The row's data, a JSON value, e.g. '{\"offset\": 42}'.")
        String json;

        @Override
        int run() {
            // Validate before opening, so bad input creates no state directory.
            StateRow row = StateRow.of(namespace, key, StateJson.normalize(json));
            try (StateStore store = StateStore.open(target.dir)) {
                Optional<StateRow> before = store.get(namespace, key);
                store.putAll(List.of(row));
                System.err.printf(
                        "%s (%s, %s) in %s: %s%n",
                        before.isPresent() ? "replaced" : "added",
                        namespace,
                        key,
                        target.dir,
                        before.map(old -> old.data() + " -> " + row.data()).orElse(row.data()));
            }
            return 0;
        }
    }

    @Command(
            name = "delete",
            description = "Delete the row under NAMESPACE and KEY, or with --namespace-prefix "
                    + "every row under that prefix. Exit 1 if nothing was deleted. Needs the pipeline stopped: exit 1 "
                    + "while it runs.")
    static final class Delete extends Action {

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "1", arity = "0..1", paramLabel = "NAMESPACE", description = "The row's namespace.")
        String namespace;

        @Parameters(index = "2", arity = "0..1", paramLabel = "KEY", description = "The row's key.")
        String key;

        @Option(
                names = "--namespace-prefix",
                paramLabel = "PREFIX",
                description = "Delete every row whose namespace starts with PREFIX (non-empty) instead.")
        String prefix;

        @Override
        int run() {
            if ((prefix == null) == (namespace == null) || (namespace != null && key == null)) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "give either NAMESPACE and KEY, or --namespace-prefix PREFIX");
            }
            if (prefix != null && prefix.isEmpty()) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--namespace-prefix must not be empty (it would delete every row)");
            }
            try (StateStore store = StateStore.openExisting(target.dir)) {
                if (prefix != null) {
                    long deleted = store.deletePrefix(prefix);
                    System.err.printf(
                            "deleted %s under namespace prefix '%s' in %s%n", rowCount(deleted), prefix, target.dir);
                    return deleted > 0 ? 0 : Main.EXIT_FAILED;
                }
                if (!store.delete(namespace, key)) {
                    System.err.printf("error: no row (%s, %s) in %s; nothing deleted%n", namespace, key, target.dir);
                    return Main.EXIT_FAILED;
                }
                System.err.printf("deleted (%s, %s) from %s%n", namespace, key, target.dir);
                return 0;
            }
        }
    }

    private static String rowCount(long rows) {
        return "(" + rows + (rows == 1 ? " row)" : " rows)");
    }
}
