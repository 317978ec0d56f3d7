package dev.sluice.runtime;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeException;
import dev.sluice.config.ConfigException;
import dev.sluice.config.Location;
import dev.sluice.config.NodeSpec;
import dev.sluice.config.ParsedConfig;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.StageTypes;
import dev.sluice.observe.Inspections;
import dev.sluice.observe.RunStats;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.pluginhost.PipelinePlugins;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An assembled pipeline: every node's config validated and the graph built ({@link PipelineGraph})
 * and checked ({@link GraphValidation}), then (here) every stage opened in topological order (so each knows its input schemas and SQL is planned
 * now, once). Assembling is also all that {@code sluice validate} does, so it has no effect
 * outside the process: destinations and connections open only in {@link #start}, which a run
 * calls. Close it to close every stage and free the native memory.
 */
public final class Pipeline implements AutoCloseable {

    private final PipelineSpec spec;
    private final List<PipelineNode> order;
    private final RunStats stats;
    private final BufferAllocator allocator;
    private final List<DeadLetterFile> deadLetters;
    private final CheckpointSettings checkpoint;
    private final RestartPolicy restart;
    private final DeliverySetting delivery;
    private final InspectSettings inspect;
    private final PositionStore positions;
    /** Objects the stages of this lane share ({@code StageContext.laneShared}), closed after them. */
    private final Map<String, AutoCloseable> laneShared = new java.util.LinkedHashMap<>();
    /** The {@code plugins:} block: where libraries may come from, the pipeline's UDFs. */
    private final PipelinePlugins plugins;
    /** The {@code tables:} block: dynamic tables the transforms read and nodes fill. */
    private final DynamicTables tables;

    private boolean started;
    /** Whether this run goes on from an earlier run's checkpoint (see {@link #open}). */
    private boolean resuming;
    /** The locks on the files this lane writes, held from {@link #start} to {@link #close}. */
    private OutputLocks outputLocks;

    private Pipeline(
            PipelineSpec spec,
            List<PipelineNode> order,
            RunStats stats,
            BufferAllocator allocator,
            List<DeadLetterFile> deadLetters,
            CheckpointSettings checkpoint,
            RestartPolicy restart,
            DeliverySetting delivery,
            InspectSettings inspect,
            PositionStore positions,
            PipelinePlugins plugins,
            DynamicTables tables) {
        this.spec = spec;
        this.order = order;
        this.stats = stats;
        this.allocator = allocator;
        this.deadLetters = deadLetters;
        this.checkpoint = checkpoint;
        this.restart = restart;
        this.delivery = delivery;
        this.inspect = inspect;
        this.positions = positions;
        this.plugins = plugins;
        this.tables = tables;
    }

    /**
     * Validates and opens a pipeline.
     *
     * @throws ConfigException naming file, line, node and reason for every problem found
     */
    public static Pipeline assemble(PipelineSpec spec, StageTypes types) {
        return assemble(spec, types, PositionStore.NONE);
    }

    /**
     * Validates and opens a pipeline whose sources resume from, and checkpoint into,
     * {@code positions} (the state DB). The pipeline closes the store.
     *
     * @throws ConfigException naming file, line, node and reason for every problem found
     */
    public static Pipeline assemble(PipelineSpec spec, StageTypes types, PositionStore positions) {
        return assemble(spec, types, positions, null, 0);
    }

    /**
     * Assembles one lane of a pipeline: lanes after the first pass the first lane's
     * {@link #stats()}, so the counters cover the whole run.
     */
    static Pipeline assemble(PipelineSpec spec, StageTypes types, PositionStore positions, RunStats shared, int lane) {
        // Pipeline-wide settings and every node's settings are checked together: all problems at once.
        List<ConfigException> problems = new ArrayList<>();
        CheckpointSettings checkpoint = null;
        Map<String, PipelineNode> nodes = null;
        PipelinePlugins plugins = null;
        RestartPolicy restart = null;
        DeliverySetting delivery = null;
        InspectSettings inspect = null;
        List<DynamicTables.Definition> tableDefinitions = List.of();
        try {
            checkpoint = CheckpointSettings.of(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            restart = RestartPolicy.of(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            delivery = DeliverySetting.of(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            inspect = InspectSettings.of(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            plugins = PipelinePlugins.read(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            tableDefinitions = DynamicTables.read(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            // A pipeline's Java plugins (plugins.jars) add stage types for this pipeline only.
            StageTypes withPlugins = plugins == null ? types : types.with(plugins.stageTypes());
            nodes = PipelineGraph.configure(spec, withPlugins);
        } catch (ConfigException e) {
            problems.add(e);
        } catch (IllegalArgumentException | IllegalStateException e) {
            // A JAR's stage type clashing with another, or built against another SPI version.
            if (plugins == null || plugins.stageTypes().isEmpty()) {
                throw e;
            }
            problems.add(new ConfigException(
                    spec.topLevel().get(PipelineLoader.PLUGINS).location(), "plugins.jars: " + e.getMessage()));
        }
        if (!problems.isEmpty()) {
            if (plugins != null) {
                plugins.close();
            }
            throw ConfigException.of(problems);
        }
        DynamicTables tables;
        List<PipelineNode> order;
        try {
            tables = tableDefinitions.isEmpty()
                    ? DynamicTables.NONE
                    : DynamicTables.create(tableDefinitions, plugins.functionsForTables(), spec.name());
        } catch (NativeException e) {
            plugins.close();
            throw new ConfigException(spec.topLevel().get(DynamicTables.BLOCK).location(), e.getMessage());
        } catch (ConfigException e) {
            plugins.close(); // a lookup backend refused its settings
            throw e;
        }
        try {
            List<ConfigException> tableProblems = tables.attach(nodes);
            if (!tableProblems.isEmpty()) {
                throw ConfigException.of(tableProblems);
            }
            order = PipelineGraph.link(nodes);
            List<ConfigException> graphProblems = new ArrayList<>(delivery.problems(order));
            if (!tables.isEmpty() && GraphValidation.laneCount(order) > 1) {
                graphProblems.add(new ConfigException(
                        spec.topLevel().get(DynamicTables.BLOCK).location(),
                        "tables: a dynamic table must see every change, but parallelism > 1 runs lanes that would each "
                                + "see a part of them; run the pipeline with parallelism 1"));
            }
            Path deadLetterDir = defaultDeadLetterDirectory(spec, order);
            graphProblems.addAll(FileClaims.problems(
                    spec.file(), order, node -> deadLetterPath(node, deadLetterDir, spec.name(), lane)));
            if (!graphProblems.isEmpty()) {
                throw ConfigException.of(graphProblems);
            }
        } catch (RuntimeException e) {
            tables.close();
            plugins.close();
            throw e;
        }
        List<String> names = order.stream().map(PipelineNode::name).toList();
        RunStats stats = shared != null
                ? shared
                : new RunStats(
                        names,
                        namesOf(order, NodeKind.SOURCE),
                        namesOf(order, NodeKind.SINK),
                        inspect.sampleRows(),
                        inspect.sampleWindow().toNanos());
        tables.measureInto(stats);
        BufferAllocator allocator =
                ArrowC.rootAllocator().newChildAllocator("pipeline " + spec.name(), 0, Long.MAX_VALUE);
        List<DeadLetterFile> deadLetters = new ArrayList<>();
        Pipeline pipeline = new Pipeline(
                spec,
                order,
                stats,
                allocator,
                deadLetters,
                checkpoint,
                restart,
                delivery,
                inspect,
                positions,
                plugins,
                tables);
        try {
            positions.awaitOpen();
            pipeline.open(defaultDeadLetterDirectory(spec, order), lane);
            tables.restore(positions, allocator, pipeline.resuming);
            stats.opened();
        } catch (RuntimeException e) {
            try {
                pipeline.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return pipeline;
    }

    public PipelineSpec spec() {
        return spec;
    }

    /**
     * The files this pipeline writes (its sinks' and its dead letters'), symbolic links resolved,
     * each with the node writing it: the service holds them against its other pipelines'
     * ({@link FileClaims#overlapping}).
     */
    public Map<Path, String> writtenFiles() {
        Path deadLetterDir = defaultDeadLetterDirectory(spec, order);
        return FileClaims.written(order, node -> deadLetterPath(node, deadLetterDir, spec.name(), 0));
    }

    private PipelineNode nodeNamed(String name) {
        return order.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
    }

    public String name() {
        return spec.name();
    }

    public RunStats stats() {
        return stats;
    }

    public CheckpointSettings checkpointSettings() {
        return checkpoint;
    }

    /**
     * Each source's lag by partition ({@code Source.lag}): safe to read from any thread, also
     * while or after the pipeline closes (a closed source reports none).
     */
    public Map<String, Map<String, Long>> lag() {
        Map<String, Map<String, Long>> lag = new java.util.TreeMap<>();
        for (PipelineNode node : order) {
            if (node.kind() == NodeKind.SOURCE && node.stage instanceof dev.sluice.plugin.Source source) {
                lag.put(node.name(), source.lag());
            }
        }
        return lag;
    }

    /** The {@code inspect:} block: how the nodes' rows are sampled for live inspection. */
    public InspectSettings inspectSettings() {
        return inspect;
    }

    /** The nodes in topological order, with their kinds and inputs: what the inspector draws. */
    public List<Inspections.Node> graph() {
        return order.stream()
                .map(n -> new Inspections.Node(n.name(), n.kind().word(), n.type.name(), n.inputs))
                .toList();
    }

    BufferAllocator allocator() {
        return allocator;
    }

    /** The {@code restart:} block, which the service follows when the pipeline fails. */
    public RestartPolicy restartPolicy() {
        return restart;
    }

    PositionStore positions() {
        return positions;
    }

    List<PipelineNode> nodes() {
        return order;
    }

    DynamicTables tables() {
        return tables;
    }

    List<DeadLetterFile> deadLetters() {
        return deadLetters;
    }

    /**
     * How many lanes the run wants: the largest {@code parallelism} of its sources. Each lane is
     * a full copy of the pipeline on its own thread, with its own consumer in the group.
     */
    public int lanes() {
        return GraphValidation.laneCount(order);
    }

    /** One line per dead-letter file that received records: how many and where. */
    public List<String> deadLetterReport() {
        return deadLetters.stream()
                .filter(d -> d.written() > 0)
                .map(d -> d.written() + " rejected records written to " + d.path())
                .toList();
    }

    /** The schema of the batches a node emits (sources and transforms) or receives (sinks). */
    public Schema schemaOf(String node) {
        return order.stream().filter(n -> n.name().equals(node)).findFirst().orElseThrow().schema;
    }

    // -- assembly -------------------------------------------------------------------------------

    /**
     * Opens every stage in topological order; a failure names the node and the setting. A stage
     * that fails does not stop the others: every node whose inputs opened is still opened, so
     * all problems are reported at once (a node after a failed one is skipped, as its input
     * schema is unknown).
     */
    private void open(Path defaultDeadLetterDir, int lane) {
        Map<String, PipelineNode> byName = new HashMap<>();
        List<ConfigException> problems = new ArrayList<>();
        java.util.Set<String> failed = new java.util.HashSet<>();
        // A run resumes when a source has positions from an earlier run: then sinks, dead
        // letters and dynamic tables continue what that run made durable; a run that starts over
        // replaces them. Positions of sources whose type does not resume a run (files) count only
        // beside one that does, and are dropped when the run starts over.
        Map<String, Map<String, String>> sourcePositions = new HashMap<>();
        for (PipelineNode node : order) {
            if (node.kind() == NodeKind.SOURCE) {
                sourcePositions.put(node.name(), positions.load(node.name()));
            }
        }
        boolean resuming = order.stream()
                .anyMatch(n -> n.kind() == NodeKind.SOURCE
                        && n.type.positionsResumeARun()
                        && !sourcePositions.get(n.name()).isEmpty());
        if (!resuming) {
            sourcePositions.replaceAll((name, restored) -> Map.of());
        }
        this.resuming = resuming;
        if (resuming && lane == 0) {
            problems.addAll(sinksNoLongerHere());
        }
        for (PipelineNode node : order) {
            byName.put(node.name(), node);
            if (node.inputs.stream().anyMatch(failed::contains)) {
                failed.add(node.name());
                continue;
            }
            if (node.kind() == NodeKind.SINK) {
                node.sinkStateKey = PositionStore.SINK + node.name() + laneSuffix(lane);
            }
            Map<String, String> restored = switch (node.kind()) {
                case SOURCE -> sourcePositions.get(node.name());
                case SINK -> resuming ? positions.load(node.sinkStateKey) : Map.of();
                case TRANSFORM -> Map.of();
            };
            try {
                openNode(node, byName, defaultDeadLetterDir, lane, restored, resuming);
            } catch (ConfigException e) {
                failed.add(node.name());
                problems.add(e);
            }
        }
        // Checks the stages left running (broker round trips) overlapped the opening of the rest.
        for (PipelineNode node : order) {
            if (node.context == null) {
                continue;
            }
            try {
                node.context.awaitChecks();
            } catch (Exception e) {
                if (!failed.contains(node.name())) {
                    problems.add(openFailure(node, e));
                }
            }
        }
        Map<String, Schema> schemas = new HashMap<>();
        byName.forEach((name, node) -> schemas.put(name, node.schema));
        problems.addAll(tables.checkColumns(schemas));
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
    }

    /**
     * Sinks that saved positions but are no longer in the pipeline, while its sources resume: a
     * sink renamed (same file) would start its file over — without the rows written before, which
     * the sources do not read again. The run is refused until the positions are moved or dropped.
     */
    private List<ConfigException> sinksNoLongerHere() {
        java.util.Set<String> sinks = new java.util.HashSet<>();
        order.stream().filter(n -> n.kind() == NodeKind.SINK).forEach(n -> sinks.add(n.name()));
        List<String> gone = positions.sinksWithPositions().stream()
                .map(sink -> sink.replaceFirst(java.util.regex.Pattern.quote(LANE_SUFFIX) + "\\d+$", ""))
                .filter(sink -> !sinks.contains(sink))
                .distinct()
                .toList();
        return gone.stream()
                .map(sink -> new ConfigException(
                        Location.of(spec.file()),
                        "the state DB holds the checkpoint of sink '" + sink + "', which this pipeline no longer has, "
                                + "while its sources go on after what they read: a sink renamed would start its "
                                + "output over without the rows it wrote before. Name the sink '" + sink + "' again, "
                                + "or move its rows (keys sink/" + sink + "/…, `sluice state list`) to the new name "
                                + "with `sluice state set`, or drop them with `sluice state delete` if the sink is "
                                + "gone for good"))
                .toList();
    }

    /**
     * Opens one stage: its error policy and dead letter, its context, then the stage itself.
     * {@code restored} are the node's positions to resume from; when {@code resuming}, its dead
     * letter continues from the length the last finalized epoch recorded.
     */
    private void openNode(
            PipelineNode node,
            Map<String, PipelineNode> byName,
            Path defaultDeadLetterDir,
            int lane,
            Map<String, String> restored,
            boolean resuming) {
        ParsedConfig config = node.config;
        ErrorPolicy policy = definesKey(node, StandardKeys.ON_ERROR)
                ? ErrorPolicy.parse(config.getString(StandardKeys.ON_ERROR))
                : ErrorPolicy.FAIL;
        DeadLetterFile deadLetter = null;
        if (policy == ErrorPolicy.DEAD_LETTER) {
            Path path = deadLetterPath(node, defaultDeadLetterDir, spec.name(), lane);
            // A dead_letter setting was checked as a path; the default next to the output must stay inside too.
            String refusal = spec.paths().refusal(path);
            if (refusal != null) {
                throw at(
                        node.spec,
                        StandardKeys.DEAD_LETTER,
                        "the dead letter " + refusal + "; or set dead_letter: to a file inside them");
            }
            String key = PositionStore.DEAD_LETTER + node.name() + laneSuffix(lane);
            deadLetter = new DeadLetterFile(
                    path,
                    key,
                    resuming ? DeadLetterFile.restoredLength(positions.load(key), path) : -1,
                    spec.name(),
                    node.name());
            deadLetters.add(deadLetter);
        }
        node.stats = stats.node(node.name());
        node.context = new NodeContext(
                node.name(),
                spec.name(),
                directory(spec),
                allocator,
                node.stats,
                policy,
                deadLetter,
                restored,
                plugins,
                node.inputs,
                delivery.delivery(),
                checkpoint.interval(),
                this::laneShared);
        try {
            node.stage = node.type.create(config);
            node.schema = switch (node.kind()) {
                case SOURCE -> node.source().open(node.context);
                case TRANSFORM -> {
                    List<Schema> schemas =
                            node.inputs.stream().map(i -> byName.get(i).schema).toList();
                    // The transform's schema says which key its rows keep (PrimaryKey): only it knows.
                    yield ((Transform) node.stage).open(node.context, node.inputs, schemas);
                }
                case SINK -> {
                    Schema schema = sinkSchema(node, byName);
                    node.sink().open(node.context, schema);
                    yield schema;
                }
            };
        } catch (Exception e) {
            throw openFailure(node, e);
        }
        if (node.kind() != NodeKind.SINK) {
            refuseRepeatedColumnNames(node);
        }
    }

    /**
     * A node's output with two columns of one name (`SELECT t.id, s.id`, a Parquet file's), or a
     * struct with two fields of one name (`named_struct('a', x, 'a', y)`), became a JSON record
     * with a key twice, whose readers keep one value, and a Parquet file or table no reader can
     * address by name: refused, naming both.
     */
    private static void refuseRepeatedColumnNames(PipelineNode node) {
        String repeated = repeatedName(node.schema.getFields(), "");
        if (repeated != null) {
            String where = node.kind() == NodeKind.TRANSFORM ? "the query's output" : "the output";
            throw at(
                    node.spec,
                    node.kind() == NodeKind.TRANSFORM ? "sql" : null,
                    where + " has " + repeated + ": a JSON record would hold the key twice and its readers keep "
                            + "one value; name them apart" + (node.kind() == NodeKind.TRANSFORM ? " with AS" : ""));
        }
    }

    /** "two columns named 'x' (columns 1 and 2)" for the first name {@code fields} repeat, inside structs too. */
    private static String repeatedName(List<Field> fields, String inside) {
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < fields.size(); i++) {
            Integer first = seen.putIfAbsent(fields.get(i).getName(), i);
            if (first != null) {
                return inside.isEmpty()
                        ? "two columns named '" + fields.get(i).getName() + "' (columns " + (first + 1) + " and "
                                + (i + 1) + ")"
                        : "two fields named '" + fields.get(i).getName() + "' in " + inside;
            }
        }
        for (Field field : fields) {
            String path = (inside.isEmpty() ? "column " : inside + ".") + "'" + field.getName() + "'";
            String nested = repeatedName(field.getChildren(), path); // a list's item, a map's entries too
            if (nested != null) {
                return nested;
            }
        }
        return null;
    }

    /**
     * Opens what the stages write to and read from (files, producers, consumer groups), sinks
     * first so that no source connects for a run whose output cannot open. Called by a run,
     * never by validation; idempotent. A failure is reported at the node like one in opening.
     *
     * @throws ConfigException naming the node (and setting, if known) whose destination failed
     */
    public void start() {
        if (started) {
            return;
        }
        started = true;
        try {
            // The sinks' files; a dead letter locks its file when it first writes one (DeadLetterFile).
            outputLocks = OutputLocks.acquire(spec.name(), FileClaims.written(order, node -> null));
        } catch (OutputLocks.Taken taken) {
            throw at(nodeNamed(taken.node()).spec, null, taken.getMessage());
        }
        for (NodeKind kind : List.of(NodeKind.SINK, NodeKind.SOURCE)) {
            for (PipelineNode node : order) {
                if (node.kind() != kind) {
                    continue;
                }
                try {
                    if (kind == NodeKind.SINK) {
                        node.sink().start();
                    } else {
                        node.source().start();
                    }
                } catch (Exception e) {
                    throw openFailure(node, e);
                }
            }
        }
    }

    /** A stage's failure to open as a configuration problem at its node (and setting, if known). */
    private static ConfigException openFailure(PipelineNode node, Exception e) {
        return switch (e) {
            case ConfigException config -> config;
            case InvalidSettingException setting -> at(node.spec, setting.key(), setting.getMessage());
            case NativeException nativeFailure -> at(node.spec, null, nativeFailure.getMessage());
            default -> at(node.spec, null, e.getMessage() == null ? e.toString() : e.getMessage());
        };
    }

    /**
     * A sink reading several nodes needs them to agree on the columns; it keeps a key
     * ({@link PrimaryKey}) only when they all have the same one.
     */
    private static Schema sinkSchema(PipelineNode sink, Map<String, PipelineNode> byName) {
        Schema first = byName.get(sink.inputs.get(0)).schema;
        boolean oneKey = true;
        for (String input : sink.inputs) {
            Schema other = byName.get(input).schema;
            if (!other.getFields().equals(first.getFields())) {
                throw new InvalidSettingException(
                        null,
                        "its inputs have different schemas: '" + sink.inputs.get(0) + "' has " + first + " but '"
                                + input + "' has " + other + "; union them in a SQL transform");
            }
            oneKey &= PrimaryKey.of(other).equals(PrimaryKey.of(first));
        }
        return oneKey ? first : PrimaryKey.with(first, List.of());
    }

    /**
     * Where {@code node}'s lane {@code lane} writes its dead letters; null unless its on_error is
     * dead_letter. The default name holds the pipeline's name as well as the node's: pipelines
     * in one directory (the service's base directory) often share node names like {@code events}.
     */
    private static Path deadLetterPath(PipelineNode node, Path defaultDeadLetterDir, String pipeline, int lane) {
        if (!definesKey(node, StandardKeys.ON_ERROR)
                || ErrorPolicy.parse(node.config.getString(StandardKeys.ON_ERROR)) != ErrorPolicy.DEAD_LETTER) {
            return null;
        }
        Path path = definesKey(node, StandardKeys.DEAD_LETTER) && node.config.has(StandardKeys.DEAD_LETTER)
                ? node.config.getPath(StandardKeys.DEAD_LETTER)
                : defaultDeadLetterDir.resolve(pipeline + "." + node.name() + ".dead-letter.jsonl");
        if (lane > 0) {
            // Each lane writes its own file: two writers must not share one.
            path = path.resolveSibling(
                    path.getFileName().toString().replaceFirst("(\\.[^.]*)?$", ".lane" + lane + "$1"));
        }
        return path;
    }

    private static boolean definesKey(PipelineNode node, String key) {
        return node.type.config().key(key).isPresent();
    }

    /** A problem at {@code node}'s setting {@code key} (null: at the node). */
    static ConfigException at(NodeSpec node, String key, String reason) {
        Location where = key != null && node.locationOf(key) != null ? node.locationOf(key) : node.location();
        return new ConfigException(where, node.name(), reason);
    }

    private static List<String> namesOf(List<PipelineNode> order, NodeKind kind) {
        return order.stream()
                .filter(n -> n.kind() == kind)
                .map(PipelineNode::name)
                .toList();
    }

    static Path directory(PipelineSpec spec) {
        Path parent = spec.file().toAbsolutePath().getParent();
        return parent != null ? parent : Path.of(".").toAbsolutePath();
    }

    /** Dead letters go next to the output: the directory of the first sink writing a file ({@link StageType#outputFile}), else the pipeline's. */
    private static Path defaultDeadLetterDirectory(PipelineSpec spec, List<PipelineNode> order) {
        for (PipelineNode node : order) {
            if (node.kind() != NodeKind.SINK) {
                continue;
            }
            Path parent = node.type
                    .outputFile(node.config)
                    .map(p -> p.toAbsolutePath().getParent())
                    .orElse(null);
            if (parent != null) {
                return parent;
            }
        }
        return directory(spec);
    }

    /** How a lane after the first tells its sinks' and dead letters' state rows apart from the first's. */
    /** Lane n's state keys end in {@code .lane<n>} (lane 0's in nothing). */
    private static final String LANE_SUFFIX = ".lane";

    private static String laneSuffix(int lane) {
        return lane > 0 ? LANE_SUFFIX + lane : "";
    }

    /** The lane's shared object under {@code key}, made by {@code create} on first use. */
    private <T extends AutoCloseable> T laneShared(String key, Class<T> type, java.util.function.Supplier<T> create) {
        AutoCloseable shared = laneShared.get(key);
        if (shared == null) {
            shared = java.util.Objects.requireNonNull(create.get(), "laneShared: create returned null");
            laneShared.put(key, shared);
        }
        return type.cast(shared);
    }

    // -- shutdown -------------------------------------------------------------------------------

    /** Closes every stage (sinks first), the dead letters and the allocator. Idempotent. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (int i = order.size() - 1; i >= 0; i--) {
            PipelineNode node = order.get(i);
            if (node.stage != null) {
                try {
                    node.stage.close();
                } catch (Exception e) {
                    failure = chain(failure, new StageFailure(node.name(), e));
                }
                node.stage = null;
            }
        }
        // After the stages: a stage may still use a shared object while it closes.
        for (Map.Entry<String, AutoCloseable> shared : laneShared.entrySet()) {
            try {
                shared.getValue().close();
            } catch (Exception e) {
                failure = chain(
                        failure, new IllegalStateException("closing " + shared.getKey() + ": " + e.getMessage(), e));
            }
        }
        laneShared.clear();
        tables.close();
        plugins.close();
        for (DeadLetterFile deadLetter : deadLetters) {
            try {
                deadLetter.close();
            } catch (IOException e) {
                failure = chain(
                        failure, new IllegalStateException("closing " + deadLetter.path() + ": " + e.getMessage(), e));
            }
        }
        try {
            positions.close();
        } catch (RuntimeException e) {
            failure = chain(failure, e);
        }
        if (outputLocks != null) {
            outputLocks.close(); // once nothing writes the files any more
            outputLocks = null;
        }
        try {
            allocator.close();
        } catch (IllegalStateException e) {
            failure = chain(
                    failure,
                    new IllegalStateException(
                            "Arrow memory still in use after the pipeline closed: " + e.getMessage(), e));
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException chain(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
