package dev.sluice.config;

import dev.sluice.plugin.LookupBackend;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.config.ConfigKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Renders the reference documentation of all registered stage types as Markdown, from the same
 * {@link ConfigDef}s that check pipeline files, so the docs cannot drift from the code. The output
 * is deterministic (types sorted by name, keys in definition order) so it can be committed and
 * compared in tests.
 */
public final class ConfigDocs {

    private ConfigDocs() {}

    /** The Markdown reference: the pipeline-wide settings, then {@link #nodeTypes} and {@link #lookupBackends}. */
    public static String markdown(StageTypes registry) {
        return PIPELINE_SETTINGS + "\n" + nodeTypes(registry) + "\n" + lookupBackends(LookupBackends.installed()) + "\n"
                + ENVIRONMENT;
    }

    /** A subsection per lookup backend ({@code tables.NAME.backend}) with a table of its block's keys. */
    static String lookupBackends(LookupBackends backends) {
        StringBuilder out = new StringBuilder("# Dynamic table backends\n");
        out.append("\nA dynamic table with `backend: NAME` is a bounded cache of that store; its settings go in")
                .append(" the table's block named `NAME` (e.g. `tables.customers.postgres`).\n");
        for (LookupBackend backend : backends.all()) {
            out.append("\n## `").append(backend.name()).append("`\n");
            appendKeys(out, backend.config().keys());
        }
        return out.toString();
    }

    /** The top-level settings of a pipeline file (read by PipelineLoader, PathPolicy and the runtime). */
    static final String PIPELINE_SETTINGS = """
            # Pipeline settings

            Top-level keys of a pipeline file besides `sources`, `transforms` and `sinks`.

            | Key | Type | Default | Description |
            | --- | --- | --- | --- |
            | `name` | string | the file name without its extension | The pipeline's name: its state DB (`.sluice/state/NAME`), the default consumer group (`sluice-NAME`), the progress line. |
            | `checkpoint.interval` | duration | `10s` | Time between checkpoints (a barrier through every node, then the sources' positions are saved and committed). |
            | `checkpoint.timeout` | duration | `60s` | Longest the sinks may take to make an epoch durable; an epoch that misses it is given up, counted, and the run goes on. |
            | `restart.max_attempts` | integer | `3` | Under `sluice serve`: how many times in a row a pipeline that failed while running is restarted from its last checkpoint before it stays `failed` (0: never). A checkpoint after a restart resets the count. `sluice run` never restarts. |
            | `restart.backoff` | duration | `5s` | Under `sluice serve`: the wait before the first restart, doubling for each further attempt up to 5 minutes. |
            | `delivery` | `at_least_once` or `exactly_once` | `at_least_once` | `at_least_once`: after a crash the records since the last checkpoint are replayed; idempotent sinks make the result exact. `exactly_once`: every checkpoint epoch is one Kafka transaction per lane holding the sinks' messages and the sources' offsets, so consumers with `isolation.level=read_committed` see each input record's output exactly once; every source and sink must be `kafka` on one cluster (`validate` says which node cannot). |
            | `inspect.sample_rows` | integer | `15` | Rows of each node's output the live inspector keeps a sample of per window (at most 1000; 0 turns sampling off). Rows are taken a few at a time, spread over the window, encoded as JSON in the core; `sluice inspect` and the `/inspect/NAME` page show them. |
            | `inspect.sample_window` | duration | `30s` | The window `inspect.sample_rows` counts over (at least 100ms). |
            | `inspect.mask_columns` | list | none | Column names whose values the inspector shows as `****`, at any depth of a row (a field of a struct too). Only the inspector: sinks get the real values. |
            | `tables.NAME.type` | `dynamic` | required | A dynamic table: keyed rows every `sql` transform may join by `NAME` (`JOIN NAME c ON s.k = c.id`, `LEFT JOIN` too) and test with `dynamic_contains('NAME', value)` while they change. |
            | `tables.NAME.from` | node name | required (not with a backend other than `memory`) | The source or transform whose rows fill the table: each row upserts its key, or deletes it when its `_op` column is `d` (`i`, `u`, `c`, `r` or NULL upsert; a Debezium topic's `_op` works as is). A change is applied when the node emits it, before its own downstream nodes get the batch; every batch pushed into a transform afterwards sees it. |
            | `tables.NAME.schema` | map | required | Columns and types, e.g. `{id: bigint, name: string}`; the `from` node must emit every column (values are cast strictly: one that does not fit fails the run). |
            | `tables.NAME.key` | string or list | required | The column(s) that identify a row; a NULL key fails the run. `dynamic_contains` needs a one-column key. |
            | `tables.NAME.backend` | `memory` or a backend below (`postgres`) | `memory` | Where the rows live. `memory`: in the core's memory, filled `from` a node, checkpointed to the state DB with the sources' positions (the whole table, when it changed since the last checkpoint), so a restart does not replay what filled it. `postgres`: the table is a bounded cache of a PostgreSQL table (settings in `tables.NAME.postgres`, see [Dynamic table backends](#dynamic-table-backends)); each batch's missing keys are read in one query, cached rows are dropped when their keys are notified or every `refresh_interval`; not checkpointed. |
            | `tables.NAME.max_rows` | integer | `1000000` | More live rows than this fail the run, naming the table (nothing is evicted silently). For a `postgres` cache: the most keys cached (with or without a row); the oldest are evicted beyond it. |
            | `tables.NAME.max_bytes` | integer or size | `256MiB` | The same for the bytes of the table's Arrow buffers (e.g. `64MiB`). |
            | `paths.allowed_dirs` | list | the pipeline file's directory and the working directory | The directories every file the pipeline names must be inside: file sources and sinks, dead letters, side tables, schema files — every setting of type path. Relative entries are relative to the pipeline file; listing directories replaces the defaults. Paths are compared after `..` and symbolic links are resolved; one outside is refused by `validate` and `run` with its file:line:column, node and reason. |
            | `plugins.allowed_dirs` | list | the pipeline file's directory (and below) | The directories plugin libraries and JARs may be loaded from (`type: plugin` nodes, `plugins.udfs`, `plugins.jars`, `plugins.preprocessors`); checked like `paths.allowed_dirs`. |
            | `plugins.udfs` | list of maps | none | Libraries whose scalar functions every `sql` transform may call by name: `{path: LIB.so}` for a native plugin (called by the core without entering the JVM), `{jar: LIB.jar}` for Java `ScalarFunction`s; `functions: [names]` picks some (default: all it offers). |
            | `plugins.jars` | list | none | JARs of Java stage types (`StageType` in `META-INF/services`), usable as node types in this pipeline. |
            | `plugins.preprocessors` | list of maps | none | `{path: LIB.so, component: NAME, options: {...}}`: native preprocessors that rewrite the pipeline file's text, in order, before it is checked. |
            """;

    /**
     * Every environment variable and Java system property the engine, the bridge and the connectors
     * read (ConfigDocsTest scans their sources so that a new one cannot go undocumented). The
     * launcher's own variables are in README.md.
     */
    static final String ENVIRONMENT = """
            # Environment variables and system properties

            Read by the engine besides the pipeline file. The launcher's own `SLUICE_*` variables (the JVM,
            `SLUICE_JAVA_OPTS`, `SLUICE_CDS`, ...) are described in README.md; system properties are set with
            `-Dname=value` in `SLUICE_JAVA_OPTS`.

            | Name | Kind | Default | Description |
            | --- | --- | --- | --- |
            | `SLUICE_SUMMARY_JSON` | environment | unset | `run` writes the run's totals (records in and out, wall seconds and the part spent planning and opening the pipeline, when the run began after the JVM's start, CPU seconds) as JSON to this file, for scripts and benchmarks. |
            | `SLUICE_CDS_ARCHIVE` | environment | unset; set by the launcher | The start-up cache a `run` uses or creates (an AOT cache on Java 25+, a class-data-sharing archive before); a run that ends before its first record, or whose JVM could not map the cache, marks it partial so the launcher records a new one. |
            | `OTEL_EXPORTER_OTLP_ENDPOINT` | environment | unset | When set (e.g. `http://collector:4318`), `serve` and `run` also push their metrics over OTLP/HTTP to `ENDPOINT/v1/metrics` (resource `service.name=sluice`), and a run once more when it ends. |
            | `OTEL_METRIC_EXPORT_INTERVAL` | environment | `60000` | Milliseconds between two OTLP pushes. |
            | `SLUICE_SERVER` | environment | `http://127.0.0.1:7878` | The service `apply`, `pause`, `resume`, `delete`, `list`, `status` and `logs` talk to, unless `--server` is given. |
            | `SLUICE_TOKEN_FILE` | environment | unset | A file holding the service's bearer token, for those commands, unless `--token-file` is given. |
            | any `NAME` in `${NAME}` | environment | unset | Environment references in pipeline values: `${NAME}` or `${NAME:-default}`, resolved when the file is read (`$${` is a literal `${`); a missing variable without a default is an error at its line. |
            | `XDG_CACHE_HOME` | environment | `~/.cache` | Base of the directory the native core is extracted to from the JAR (`$XDG_CACHE_HOME/sluice/native`), unless `sluice.native.cache` is set, and of the lock files of the files runs write (`$XDG_CACHE_HOME/sluice/locks`), unless `sluice.locks.dir` is set. |
            | `sluice.bridge` | system property | `ffm` | How Java calls the native core: `ffm` (Foreign Function & Memory API) or `jni`. |
            | `sluice.native.path` | system property | unset: the library inside the JAR | A native core to load instead: the library file, or a directory holding it. |
            | `sluice.native.cache` | system property | `$XDG_CACHE_HOME/sluice/native` | The directory the native core is extracted to from the JAR. |
            | `sluice.locks.dir` | system property | `$XDG_CACHE_HOME/sluice/locks` | Where a run keeps a lock file per file it writes (named by the hash of its path, naming the run inside), so that a second run writing the same file (sinks' from the start, dead letters' from their first line), in another process or a service, is refused while the first runs. |
            | `sluice.ffm.warmUpRounds` | system property | `1500`; `0` when the run maps an AOT cache its command line recorded | At start, under the FFM bridge, how many times a warm-up thread calls each per-batch native call with NULL handles so that the JIT compiles its Java glue before the first batch; `0` turns it off. A mapped AOT cache holds the JIT profiles of the run that recorded it (which warmed up), so its runs skip the calls. |
            | `user.home` | system property | the JVM's | `~` at the start of a path setting; the default of `XDG_CACHE_HOME`. |
            | `os.name`, `os.arch` | system property | the JVM's | Which native core in the JAR fits the platform. |
            | `java.vm.info` | system property | the JVM's | Whether the JVM mapped the launcher's start-up cache (it says `sharing`); a `run` whose JVM could not marks the cache partial. |
            """;

    /** A section per node kind, a subsection per type with a table of its keys. */
    public static String nodeTypes(StageTypes registry) {
        StringBuilder out = new StringBuilder("# Pipeline node types\n");
        for (NodeKind kind : NodeKind.values()) {
            String block = kind.blockName();
            out.append("\n## ")
                    .append(Character.toUpperCase(block.charAt(0)))
                    .append(block.substring(1))
                    .append('\n');
            List<StageType> types = registry.types(kind);
            if (types.isEmpty()) {
                out.append("\nNo ").append(kind.word()).append(" types are registered.\n");
            }
            for (StageType type : types) {
                appendType(out, type);
            }
        }
        return out.toString();
    }

    private static void appendType(StringBuilder out, StageType type) {
        out.append("\n### `").append(type.name()).append("`\n");
        String doc = type.doc() == null ? "" : type.doc();
        if (!doc.isBlank()) {
            out.append('\n').append(doc.strip()).append('\n');
        }
        List<ConfigKey> keys = type.config().keys();
        if (keys.isEmpty()) {
            out.append("\nThis type takes no settings.\n");
            return;
        }
        appendKeys(out, keys);
        for (ConfigKey key : keys) {
            if (key.sections() != null) {
                out.append("\nEach section of `").append(key.name()).append("`:\n");
                appendKeys(out, key.sections().keys());
            }
        }
    }

    private static void appendKeys(StringBuilder out, List<ConfigKey> keys) {
        out.append("\n| Key | Type | Default | Required | Allowed values | Description |\n");
        out.append("| --- | --- | --- | --- | --- | --- |\n");
        for (ConfigKey key : keys) {
            out.append("| `")
                    .append(key.name())
                    .append("` | ")
                    .append(key.type().displayName())
                    .append(" | ")
                    .append(key.defaultValue() == null ? "" : code(format(SettingsParser.defaultOf(key))))
                    .append(" | ")
                    .append(key.required() ? "yes" : "no")
                    .append(" | ")
                    .append(cell(allowed(key)))
                    .append(" | ")
                    .append(cell(key.doc()))
                    .append(" |\n");
        }
    }

    private static String allowed(ConfigKey key) {
        List<String> parts = new ArrayList<>();
        if (!key.allowedValues().isEmpty()) {
            parts.add(key.allowedValues().stream().map(ConfigDocs::code).collect(Collectors.joining(", ")));
        }
        if (key.validator() != null) {
            parts.add(key.validator().requirement());
        }
        return String.join("; ", parts);
    }

    /** A default as it would be written in a pipeline file. */
    private static String format(Object value) {
        return switch (value) {
            case Duration d -> Durations.format(d);
            case Path p -> p.toString();
            case List<?> list ->
                list.isEmpty() ? "[]" : list.stream().map(String::valueOf).collect(Collectors.joining(", "));
            case Map<?, ?> map ->
                map.isEmpty()
                        ? "{}"
                        : map.entrySet().stream()
                                .map(e -> e.getKey() + ": " + e.getValue())
                                .collect(Collectors.joining(", "));
            case String s when s.isEmpty() -> "\"\"";
            default -> String.valueOf(value);
        };
    }

    private static String code(String text) {
        return "`" + cell(text) + "`";
    }

    /** Table cells are one line, and a '|' would end the cell. */
    private static String cell(String text) {
        return text.strip().replaceAll("\\s*\\R\\s*", " ").replace("|", "\\|");
    }
}
