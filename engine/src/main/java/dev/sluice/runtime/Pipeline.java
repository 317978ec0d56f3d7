package dev.sluice.runtime;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeException;
import dev.sluice.config.ConfigException;
import dev.sluice.config.Location;
import dev.sluice.config.NodeSpec;
import dev.sluice.config.ParsedConfig;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.SettingsParser;
import dev.sluice.observe.RunStats;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.StandardKeys;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An assembled pipeline: every node's config validated, the graph resolved and checked, and
 * every stage opened in topological order (so each knows its input schemas and SQL is planned
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
    private final PositionStore positions;
    private boolean started;

    private Pipeline(PipelineSpec spec, List<PipelineNode> order, RunStats stats, BufferAllocator allocator,
            List<DeadLetterFile> deadLetters, CheckpointSettings checkpoint, PositionStore positions) {
        this.spec = spec;
        this.order = order;
        this.stats = stats;
        this.allocator = allocator;
        this.deadLetters = deadLetters;
        this.checkpoint = checkpoint;
        this.positions = positions;
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
        try {
            checkpoint = CheckpointSettings.of(spec);
        } catch (ConfigException e) {
            problems.add(e);
        }
        try {
            nodes = configure(spec, types);
        } catch (ConfigException e) {
            problems.add(e);
        }
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
        List<PipelineNode> order = link(spec, nodes);
        checkLanes(order);
        List<String> names = order.stream().map(PipelineNode::name).toList();
        RunStats stats = shared != null ? shared : new RunStats(names, namesOf(order, NodeKind.SOURCE), namesOf(order, NodeKind.SINK));
        BufferAllocator allocator = ArrowC.rootAllocator().newChildAllocator("pipeline " + spec.name(), 0, Long.MAX_VALUE);
        List<DeadLetterFile> deadLetters = new ArrayList<>();
        Pipeline pipeline = new Pipeline(spec, order, stats, allocator, deadLetters, checkpoint, positions);
        try {
            positions.awaitOpen();
            pipeline.open(defaultDeadLetterDirectory(spec, order), lane);
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

    public String name() {
        return spec.name();
    }

    public RunStats stats() {
        return stats;
    }

    public CheckpointSettings checkpointSettings() {
        return checkpoint;
    }

    PositionStore positions() {
        return positions;
    }

    List<PipelineNode> nodes() {
        return order;
    }

    List<DeadLetterFile> deadLetters() {
        return deadLetters;
    }

    /**
     * How many lanes the run wants: the largest {@code parallelism} of its sources. Each lane is
     * a full copy of the pipeline on its own thread, with its own consumer in the group.
     */
    public int lanes() {
        return lanesOf(order);
    }

    private static int lanesOf(List<PipelineNode> order) {
        int lanes = 1;
        for (PipelineNode node : order) {
            if (node.kind() == NodeKind.SOURCE && node.type.supportsLanes() && definesKey(node, StandardKeys.PARALLELISM)) {
                lanes = Math.max(lanes, node.config.getInt(StandardKeys.PARALLELISM));
            }
        }
        return lanes;
    }

    /** Lanes copy every node: only types that declare they can be copied ({@link StageType#supportsLanes}) qualify. */
    private static void checkLanes(List<PipelineNode> order) {
        if (lanesOf(order) == 1) {
            return;
        }
        List<ConfigException> problems = new ArrayList<>();
        for (PipelineNode node : order) {
            if (!node.type.supportsLanes()) {
                problems.add(new ConfigException(node.spec.location(), node.name(), "parallelism > 1 runs a copy of every node per "
                        + "lane, which a " + node.type.name() + " " + node.kind().word() + " cannot be"));
            }
        }
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
    }

    /** One line per dead-letter file that received records: how many and where. */
    public List<String> deadLetterReport() {
        return deadLetters.stream().filter(d -> d.written() > 0)
                .map(d -> d.written() + " rejected records written to " + d.path()).toList();
    }

    /** The schema of the batches a node emits (sources and transforms) or receives (sinks). */
    public Schema schemaOf(String node) {
        return order.stream().filter(n -> n.name().equals(node)).findFirst().orElseThrow().schema;
    }

    // -- assembly -------------------------------------------------------------------------------

    /** Parses every node's settings against its type's definition; all problems at once. */
    private static Map<String, PipelineNode> configure(PipelineSpec spec, StageTypes types) {
        List<ConfigException> problems = new ArrayList<>();
        Map<String, PipelineNode> nodes = new LinkedHashMap<>();
        for (NodeSpec node : spec.allNodes()) {
            try {
                StageType type = types.typeOf(node);
                type.prepare();
                ParsedConfig config = SettingsParser.parse(type.config(), node);
                List<String> inputs = inputsOf(node, type, config);
                nodes.put(node.name(), new PipelineNode(node, type, config, inputs));
            } catch (ConfigException e) {
                problems.addAll(e.problems());
            }
        }
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
        return nodes;
    }

    private static List<String> inputsOf(NodeSpec node, StageType type, ParsedConfig config) {
        try {
            return type.inputs(node.from(), config);
        } catch (InvalidSettingException e) {
            throw at(node, e.key(), e.getMessage());
        }
    }

    /** Resolves inputs to edges, checks the graph and orders it topologically. */
    private static List<PipelineNode> link(PipelineSpec spec, Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>();
        for (PipelineNode node : nodes.values()) {
            if (node.kind() == NodeKind.SOURCE) {
                continue;
            }
            if (node.inputs.isEmpty()) {
                problems.add(new ConfigException(node.spec.location(), node.name(),
                        node.kind() == NodeKind.SINK
                                ? "a sink needs `from:` naming the node it reads"
                                : "this transform reads no input"));
            }
            for (int i = 0; i < node.inputs.size(); i++) {
                String input = node.inputs.get(i);
                PipelineNode upstream = nodes.get(input);
                Location where = locationOfInput(node, input);
                if (upstream == null) {
                    problems.add(new ConfigException(where, node.name(), "reads '" + input
                            + "', but the pipeline has no source or transform of that name (it has: "
                            + String.join(", ", producers(nodes)) + ")"));
                } else if (upstream.kind() == NodeKind.SINK) {
                    problems.add(new ConfigException(where, node.name(), "reads '" + input + "', which is a sink; sinks emit nothing"));
                } else {
                    upstream.downstream.add(new PipelineNode.Edge(node, i));
                }
            }
        }
        // An input name that is wrong leaves its intended upstream unread: say that only when all names resolve.
        boolean namesResolve = problems.isEmpty();
        for (PipelineNode node : nodes.values()) {
            if (node.kind() != NodeKind.SINK && node.downstream.isEmpty() && namesResolve) {
                problems.add(new ConfigException(node.spec.location(), node.name(),
                        "nothing reads this " + node.kind().word() + "; name it in a transform's SQL or a sink's `from:`"));
            }
        }
        problems.addAll(cycles(nodes));
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
        return topologicalOrder(nodes);
    }

    /**
     * One problem per cycle of the graph (per strongly connected component with an edge inside),
     * naming exactly its nodes in the order the rows flow, e.g. {@code a → b → c → a}, at the place
     * where the first of them names its input.
     */
    private static List<ConfigException> cycles(Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>();
        for (List<PipelineNode> component : Cycles.stronglyConnected(nodes.values())) {
            PipelineNode first = component.stream().min(java.util.Comparator.comparing(n -> n.spec.location())).orElseThrow();
            List<PipelineNode> cycle = Cycles.shortestThrough(first, new java.util.HashSet<>(component));
            if (cycle == null) {
                continue; // a single node that does not read itself
            }
            List<String> names = new ArrayList<>(cycle.stream().map(PipelineNode::name).toList());
            names.add(first.name());
            PipelineNode last = cycle.get(cycle.size() - 1);
            problems.add(new ConfigException(locationOfInput(first, last.name()), first.name(),
                    "the pipeline has a cycle: " + String.join(" → ", names) + " (each node reads the one before it); "
                            + "rows cannot flow around a loop"));
        }
        return problems;
    }

    private static List<PipelineNode> topologicalOrder(Map<String, PipelineNode> nodes) {
        Map<PipelineNode, Integer> pending = new HashMap<>();
        Deque<PipelineNode> ready = new ArrayDeque<>();
        for (PipelineNode node : nodes.values()) {
            pending.put(node, node.inputs.size());
            if (node.inputs.isEmpty()) {
                ready.add(node);
            }
        }
        List<PipelineNode> order = new ArrayList<>();
        while (!ready.isEmpty()) {
            PipelineNode node = ready.poll();
            order.add(node);
            for (PipelineNode.Edge edge : node.downstream) {
                if (pending.merge(edge.to(), -1, Integer::sum) == 0) {
                    ready.add(edge.to());
                }
            }
        }
        if (order.size() < nodes.size()) {
            throw new IllegalStateException("cycles are reported before ordering: " + nodes.keySet() + " ordered as " + order);
        }
        return order;
    }

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
        for (PipelineNode node : order) {
            byName.put(node.name(), node);
            if (node.inputs.stream().anyMatch(failed::contains)) {
                failed.add(node.name());
                continue;
            }
            try {
                openNode(node, byName, defaultDeadLetterDir, lane);
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
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
    }

    /** Opens one stage: its error policy and dead letter, its context, then the stage itself. */
    private void openNode(PipelineNode node, Map<String, PipelineNode> byName, Path defaultDeadLetterDir, int lane) {
        ParsedConfig config = node.config;
        ErrorPolicy policy = definesKey(node, StandardKeys.ON_ERROR)
                ? ErrorPolicy.parse(config.getString(StandardKeys.ON_ERROR))
                : ErrorPolicy.FAIL;
        DeadLetterFile deadLetter = null;
        if (policy == ErrorPolicy.DEAD_LETTER) {
            Path path = definesKey(node, StandardKeys.DEAD_LETTER) && config.has(StandardKeys.DEAD_LETTER)
                    ? config.getPath(StandardKeys.DEAD_LETTER)
                    : defaultDeadLetterDir.resolve(node.name() + ".dead-letter.jsonl");
            if (lane > 0) {
                // Each lane writes its own file: two writers must not share one.
                path = path.resolveSibling(path.getFileName().toString().replaceFirst("(\\.[^.]*)?$", ".lane" + lane + "$1"));
            }
            // A dead_letter setting was checked as a path; the default next to the output must stay inside too.
            String refusal = spec.paths().refusal(path);
            if (refusal != null) {
                throw at(node.spec, StandardKeys.DEAD_LETTER, "the dead letter " + refusal + "; or set dead_letter: to a file inside them");
            }
            deadLetter = new DeadLetterFile(path);
            deadLetters.add(deadLetter);
        }
        node.stats = stats.node(node.name());
        node.context = new NodeContext(node.name(), spec.name(), directory(spec), allocator, node.stats, policy, deadLetter,
                node.kind() == NodeKind.SOURCE ? positions.load(node.name()) : Map.of());
        try {
            node.stage = node.type.create(config);
            node.schema = switch (node.kind()) {
                case SOURCE -> node.source().open(node.context);
                case TRANSFORM -> {
                    List<Schema> schemas = node.inputs.stream().map(i -> byName.get(i).schema).toList();
                    yield inheritKey(((Transform) node.stage).open(node.context, node.inputs, schemas), node, byName);
                }
                case SINK -> {
                    Schema schema = inheritKey(sinkSchema(node, byName), node, byName);
                    node.sink().open(node.context, schema);
                    yield schema;
                }
            };
        } catch (Exception e) {
            throw openFailure(node, e);
        }
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
     * A source's primary key travels downstream in schema metadata ({@link PrimaryKey}) while
     * the node still has all its columns and its inputs agree on one key; SQL plans do not
     * carry it themselves.
     */
    private static Schema inheritKey(Schema schema, PipelineNode node, Map<String, PipelineNode> byName) {
        List<List<String>> keys = node.inputs.stream().map(i -> PrimaryKey.of(byName.get(i).schema)).distinct().toList();
        List<String> key = keys.size() == 1 ? keys.get(0) : List.of();
        return PrimaryKey.with(schema, PrimaryKey.coveredBy(key, schema) ? key : List.of());
    }

    /** A sink reading several nodes needs them to agree on the schema. */
    private static Schema sinkSchema(PipelineNode sink, Map<String, PipelineNode> byName) {
        Schema first = byName.get(sink.inputs.get(0)).schema;
        for (String input : sink.inputs) {
            Schema other = byName.get(input).schema;
            if (!other.equals(first)) {
                throw new InvalidSettingException(null, "its inputs have different schemas: '" + sink.inputs.get(0)
                        + "' has " + first + " but '" + input + "' has " + other + "; union them in a SQL transform");
            }
        }
        return first;
    }

    private static boolean definesKey(PipelineNode node, String key) {
        return node.type.config().key(key).isPresent();
    }

    private static ConfigException at(NodeSpec node, String key, String reason) {
        Location where = key != null && node.locationOf(key) != null ? node.locationOf(key) : node.location();
        return new ConfigException(where, node.name(), reason);
    }

    private static Location locationOfInput(PipelineNode node, String input) {
        if (node.spec.from().contains(input)) {
            return node.spec.fromLocation(input);
        }
        Location sql = node.spec.locationOf("sql");
        return sql != null ? sql : node.spec.location();
    }

    private static List<String> producers(Map<String, PipelineNode> nodes) {
        return nodes.values().stream().filter(n -> n.kind() != NodeKind.SINK).map(PipelineNode::name).toList();
    }

    private static List<String> namesOf(List<PipelineNode> order, NodeKind kind) {
        return order.stream().filter(n -> n.kind() == kind).map(PipelineNode::name).toList();
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
            Path parent = node.type.outputFile(node.config).map(p -> p.toAbsolutePath().getParent()).orElse(null);
            if (parent != null) {
                return parent;
            }
        }
        return directory(spec);
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
        for (DeadLetterFile deadLetter : deadLetters) {
            try {
                deadLetter.close();
            } catch (IOException e) {
                failure = chain(failure, new IllegalStateException("closing " + deadLetter.path() + ": " + e.getMessage(), e));
            }
        }
        try {
            positions.close();
        } catch (RuntimeException e) {
            failure = chain(failure, e);
        }
        try {
            allocator.close();
        } catch (IllegalStateException e) {
            failure = chain(failure, new IllegalStateException("Arrow memory still in use after the pipeline closed: " + e.getMessage(), e));
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
