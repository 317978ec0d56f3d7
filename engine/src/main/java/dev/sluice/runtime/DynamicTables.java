package dev.sluice.runtime;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDynamicTable;
import dev.sluice.bridge.NativeFunctions;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblems;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Location;
import dev.sluice.config.LookupBackends;
import dev.sluice.config.ParsedConfig;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.SettingsParser;
import dev.sluice.observe.RunStats;
import dev.sluice.observe.TableSize;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.ColumnTypes;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.LookupBackend;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The pipeline's top-level {@code tables:} block: dynamic tables, keyed tables that every SQL
 * transform of the pipeline may join by name and test with {@code dynamic_contains(name, value)}
 * while they change. A table is filled {@code from:} a node of the pipeline: each row it emits
 * upserts its key, or deletes it when its {@code _op} is {@code d}. The rows live in the core
 * ({@link NativeDynamicTable}); this class reads the block, feeds the tables and checkpoints them.
 *
 * <p>Checkpoints: a table that changed since the last finalized epoch is written whole, in the same
 * atomic state-DB write as the sources' positions (Arrow IPC, base64, in chunks of
 * {@value #CHUNK_ROWS} rows), so a restart resumes the table and the sources from one epoch and
 * never replays the stream that filled it.
 *
 * <p>A table with another {@code backend} (a {@link LookupBackend}, e.g. {@code postgres}) is instead a
 * bounded cache of that store, filled by lookups of the keys each batch needs; it is not
 * checkpointed (the store keeps its rows) and starts empty.
 */
final class DynamicTables implements AutoCloseable {

    static final String BLOCK = "tables";
    static final String TYPE = "type";
    static final String BACKEND = "backend";
    static final String FROM = "from";
    static final String SCHEMA = "schema";
    static final String KEY = "key";
    static final String MAX_ROWS = "max_rows";
    static final String MAX_BYTES = "max_bytes";
    private static final List<String> KEYS = List.of(TYPE, BACKEND, FROM, SCHEMA, KEY, MAX_ROWS, MAX_BYTES);

    static final long DEFAULT_MAX_ROWS = 1_000_000;
    static final long DEFAULT_MAX_BYTES = 256L << 20;
    /** Rows per state-DB row of a checkpointed table. */
    static final int CHUNK_ROWS = 100_000;
    /** The position-store "node" under which a table's checkpoint is kept ({@link PositionStore}). */
    static final String STATE_PREFIX = "table:";

    private static final Pattern SIZE =
            Pattern.compile("(\\d+)\\s*(|b|kib|mib|gib|kb|mb|gb)", Pattern.CASE_INSENSITIVE);

    /** One table as written in the file. */
    record Definition(
            String name,
            Location location,
            String from,
            Location fromLocation,
            Schema schema,
            List<String> key,
            long maxRows,
            long maxBytes,
            LookupBackend backend,
            ParsedConfig backendSettings) {

        /** Whether the table is a cache of a backend, filled by lookups rather than by a node. */
        boolean isLookup() {
            return backend != null;
        }
    }

    /** A table being fed: its definition, the core's table, and the version last checkpointed. */
    static final class Table {
        final Definition definition;
        final NativeDynamicTable rows;
        /** The lookups of a lookup table; null for one filled by a node. */
        LookupBackend.Lookup lookup;

        long checkpointedVersion;
        /** Where metrics read the table's size; set by {@link #measureInto}. */
        private TableSize size;

        Table(Definition definition, NativeDynamicTable rows) {
            this.definition = definition;
            this.rows = rows;
        }

        /** Applies the changes a node emitted; the core's error names the table. */
        void apply(Batch batch, BufferAllocator allocator) {
            try {
                NativeBatch.with(batch, allocator, rows::apply);
            } finally {
                measure();
            }
        }

        private void measure() {
            if (size != null) {
                NativeDynamicTable.Stats stats = rows.stats();
                size.set(stats.rows(), stats.bytes());
                size.lookups(stats.hits(), stats.misses(), stats.loads());
            }
        }
    }

    /** Reports each table's size into {@code stats} (metrics read it), from now on. */
    void measureInto(RunStats stats) {
        for (Table table : tables) {
            table.size = stats.table(table.definition.name());
            table.measure();
        }
    }

    private final List<Table> tables;
    /** Where lookup tables' loader stubs live: closed after the transforms that call them. */
    private final Arena upcalls = Arena.ofShared();
    /** For the keys and rows of lookups; made when a lookup table is. */
    private BufferAllocator allocator;

    private DynamicTables(List<Table> tables) {
        this.tables = tables;
    }

    private BufferAllocator allocator() {
        if (allocator == null) {
            allocator = ArrowC.rootAllocator().newChildAllocator("dynamic table lookups", 0, Long.MAX_VALUE);
        }
        return allocator;
    }

    static final DynamicTables NONE = new DynamicTables(List.of());

    /** The names the block gives its tables (as written, valid or not): they are not upstream nodes. */
    static Set<String> names(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get(BLOCK);
        return block != null && block.isMap() ? block.asMap().keySet() : Set.of();
    }

    /**
     * Reads the block.
     *
     * @throws ConfigException at each setting at fault, all at once
     */
    static List<Definition> read(PipelineSpec spec) {
        ConfigValue block = spec.topLevel().get(BLOCK);
        if (block == null || block.isNull()) {
            return List.of();
        }
        if (!block.isMap()) {
            throw new ConfigException(
                    block.location(),
                    "tables: expected a map of dynamic tables, e.g. {customers: {type: dynamic, from: customer_changes, "
                            + "schema: {id: bigint, name: string}, key: [id]}}");
        }
        ConfigProblems problems = new ConfigProblems();
        List<Definition> definitions = new ArrayList<>();
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            Definition definition =
                    definition(entry.getKey(), entry.getValue(), block.keyLocation(entry.getKey()), problems);
            if (definition != null) {
                definitions.add(definition);
            }
        }
        problems.throwIfAny();
        return definitions;
    }

    private static Definition definition(String name, ConfigValue table, Location where, ConfigProblems problems) {
        String at = "tables." + name;
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            problems.add(where, null, at + ": a table's name must be a plain SQL name (letters, digits, _)");
            return null;
        }
        if (!table.isMap()) {
            problems.add(table.location(), null, at + ": expected a map with type, from, schema and key");
            return null;
        }
        Map<String, ConfigValue> settings = table.asMap();
        int before = problems.list().size();
        String backend = settings.containsKey(BACKEND) ? text(settings.get(BACKEND)) : "memory";
        LookupBackend lookupBackend =
                backend == null ? null : LookupBackends.installed().get(backend);
        for (String key : settings.keySet()) {
            if (!KEYS.contains(key) && !(lookupBackend != null && key.equals(backend))) {
                problems.add(
                        table.keyLocation(key),
                        null,
                        "unknown key '" + at + "." + key + "'; known: " + String.join(", ", KEYS));
            }
        }
        String type = text(settings.get(TYPE));
        if (!"dynamic".equals(type)) {
            problems.add(
                    settings.containsKey(TYPE) ? settings.get(TYPE).location() : table.location(),
                    null,
                    at + ".type must be dynamic (the only kind of pipeline table; static files are a sql transform's "
                            + "own tables:), got " + (type == null ? "nothing" : "'" + type + "'"));
        }
        boolean lookup = lookupBackend != null;
        if (!lookup && !"memory".equals(backend)) {
            List<String> stores = LookupBackends.installed().all().stream()
                    .map(LookupBackend::name)
                    .toList();
            problems.add(
                    settings.get(BACKEND).location(),
                    null,
                    at + ".backend must be memory (rows filled from a node) or a store the table caches ("
                            + String.join(", ", stores) + "), got "
                            + (backend == null ? settings.get(BACKEND).describe() : "'" + backend + "'"));
        }
        String from = text(settings.get(FROM));
        if (from == null && !lookup) {
            problems.add(table.location(), null, at + ".from must name the node whose rows fill the table");
        } else if (from != null && lookup) {
            problems.add(
                    settings.get(FROM).location(),
                    null,
                    at + ".from: a table with backend: " + backend + " is filled by lookups in it, not from a node");
        }
        ParsedConfig backendSettings = null;
        if (lookup) {
            ConfigValue block = settings.get(backend);
            if (block == null || !block.isMap()) {
                problems.add(
                        block == null ? table.location() : block.location(),
                        null,
                        at + "." + backend + " must map the settings of backend: " + backend
                                + " (its connection and table; see docs/configuration.md)");
            } else {
                try {
                    backendSettings = SettingsParser.parseBlock(lookupBackend.config(), block, at + "." + backend);
                } catch (ConfigException e) {
                    e.problems().forEach(problem -> problems.add(problem));
                }
            }
        }
        Schema schema = null;
        ConfigValue schemaValue = settings.get(SCHEMA);
        if (schemaValue == null || !schemaValue.isMap() || schemaValue.asMap().isEmpty()) {
            problems.add(
                    schemaValue == null ? table.location() : schemaValue.location(),
                    null,
                    at + ".schema must map each column to its type, e.g. {id: bigint, name: string}; types: "
                            + ColumnTypes.ACCEPTED);
        } else {
            Map<String, String> columns = new LinkedHashMap<>();
            schemaValue
                    .asMap()
                    .forEach((column, columnType) -> columns.put(column, String.valueOf(columnType.toPlain())));
            try {
                schema = ColumnTypes.schema(columns);
                schema.getFields().forEach(f -> SideTables.arrowRsName(f.getType()));
            } catch (IllegalArgumentException e) {
                problems.add(schemaValue.location(), null, at + ".schema: " + e.getMessage());
            }
        }
        List<String> key = new ArrayList<>();
        ConfigValue keyValue = settings.get(KEY);
        if (keyValue != null && keyValue.value() instanceof String single) {
            key.add(single);
        } else if (keyValue != null
                && keyValue.isList()
                && keyValue.asList().stream().allMatch(v -> v.value() instanceof String)) {
            keyValue.asList().forEach(v -> key.add((String) v.value()));
        }
        if (key.isEmpty()) {
            problems.add(
                    keyValue == null ? table.location() : keyValue.location(),
                    null,
                    at + ".key must name the column (or list the columns) that identify a row");
        } else if (schema != null) {
            Set<String> columns = new LinkedHashSet<>(
                    schema.getFields().stream().map(Field::getName).toList());
            for (String column : key) {
                if (!columns.contains(column)) {
                    problems.add(
                            keyValue.location(),
                            null,
                            at + ".key: '" + column + "' is not a column of its schema " + columns);
                }
            }
        }
        long maxRows = limit(settings.get(MAX_ROWS), DEFAULT_MAX_ROWS, at + "." + MAX_ROWS, false, problems);
        long maxBytes = limit(settings.get(MAX_BYTES), DEFAULT_MAX_BYTES, at + "." + MAX_BYTES, true, problems);
        if (problems.list().size() > before) {
            return null;
        }
        return new Definition(
                name,
                where,
                from,
                from == null ? null : settings.get(FROM).location(),
                schema,
                List.copyOf(key),
                maxRows,
                maxBytes,
                lookupBackend,
                backendSettings);
    }

    private static String text(ConfigValue value) {
        return value != null && value.value() instanceof String s ? s : null;
    }

    private static long limit(ConfigValue value, long fallback, String what, boolean size, ConfigProblems problems) {
        if (value == null) {
            return fallback;
        }
        if (value.value() instanceof Long number && number > 0) {
            return number;
        }
        Matcher m = size && value.value() instanceof String s ? SIZE.matcher(s.trim()) : null;
        if (m != null && m.matches()) {
            long unit = switch (m.group(2).toLowerCase(java.util.Locale.ROOT)) {
                case "kib" -> 1L << 10;
                case "mib" -> 1L << 20;
                case "gib" -> 1L << 30;
                case "kb" -> 1_000L;
                case "mb" -> 1_000_000L;
                case "gb" -> 1_000_000_000L;
                default -> 1L;
            };
            return Long.parseLong(m.group(1)) * unit;
        }
        problems.add(
                value.location(),
                null,
                what + " must be a positive whole number" + (size ? " of bytes or a size such as 64MiB" : "") + ", got "
                        + value.describe());
        return fallback;
    }

    /**
     * Creates the tables in the core and adds them to the pipeline's functions, so that every
     * transform planned afterwards can read them.
     */
    static DynamicTables create(List<Definition> definitions, NativeFunctions functions, String pipelineName) {
        if (definitions.isEmpty()) {
            return NONE;
        }
        List<Table> tables = new ArrayList<>();
        DynamicTables created = new DynamicTables(tables);
        try {
            for (Definition d : definitions) {
                List<Map<String, Object>> columns = new ArrayList<>();
                for (Field field : d.schema().getFields()) {
                    columns.add(Map.of(
                            "name", field.getName(),
                            "type", SideTables.arrowRsName(field.getType()),
                            "nullable", true));
                }
                NativeDynamicTable rows =
                        NativeDynamicTable.create(d.name(), columns, d.key(), d.maxRows(), d.maxBytes());
                Table table = new Table(d, rows);
                tables.add(table);
                if (d.isLookup()) {
                    table.lookup = open(d, pipelineName, created.allocator());
                    LookupBackend.Lookup lookup = table.lookup;
                    BufferAllocator allocator = created.allocator();
                    rows.setLoader(keys -> toNative(lookup.load(keys), allocator), created.upcalls);
                }
                functions.addTable(rows);
            }
        } catch (RuntimeException e) {
            created.close();
            throw e;
        }
        return created;
    }

    /** Opens a lookup table's backend; a setting it refuses is reported at its place in the file. */
    private static LookupBackend.Lookup open(Definition d, String pipelineName, BufferAllocator allocator) {
        try {
            return d.backend()
                    .open(
                            d.backendSettings(),
                            d.schema(),
                            d.key(),
                            new LookupBackend.Context(pipelineName, d.name(), allocator));
        } catch (InvalidSettingException e) {
            String where = "tables." + d.name() + "." + d.backend().name();
            throw new ConfigException(
                    e.key() == null ? d.location() : d.backendSettings().locationOf(e.key()),
                    where + (e.key() == null ? "" : "." + e.key()) + ": " + e.getMessage());
        }
    }

    /** A batch a backend returned, as the core's own (no copy when it already is one). */
    private static NativeBatch toNative(Batch rows, BufferAllocator allocator) {
        if (rows == null || rows instanceof NativeBatch) {
            return (NativeBatch) rows;
        }
        try (rows;
                VectorSchemaRoot root = rows.toVectors(allocator)) {
            return NativeBatch.fromVectors(allocator, root);
        }
    }

    List<Table> tables() {
        return tables;
    }

    boolean isEmpty() {
        return tables.isEmpty();
    }

    /**
     * The problems of the {@code from:} settings once the graph is known: a table must be filled by
     * a source or transform of the pipeline, and its name must not be a node's.
     */
    List<ConfigException> attach(Map<String, PipelineNode> nodes) {
        List<ConfigException> problems = new ArrayList<>();
        for (Table table : tables) {
            Definition d = table.definition;
            if (nodes.containsKey(d.name())) {
                problems.add(new ConfigException(
                        d.location(), "tables." + d.name() + ": a node has the same name; rename one"));
            }
            if (d.isLookup()) {
                continue;
            }
            PipelineNode from = nodes.get(d.from());
            if (from == null || !GraphValidation.produces(from)) {
                problems.add(new ConfigException(
                        d.fromLocation(),
                        "tables." + d.name() + ".from: '" + d.from() + "' is no source or transform of the pipeline"));
                continue;
            }
            List<Table> feeds = new ArrayList<>(from.tableFeeds);
            feeds.add(table);
            from.tableFeeds = List.copyOf(feeds);
        }
        return problems;
    }

    /** After the stages opened: each filling node emits every column of its table. */
    List<ConfigException> checkColumns(Map<String, Schema> schemas) {
        List<ConfigException> problems = new ArrayList<>();
        for (Table table : tables) {
            Definition d = table.definition;
            Schema from = d.isLookup() ? null : schemas.get(d.from());
            if (from == null) {
                continue; // the node failed to open; that is reported at the node
            }
            Set<String> emitted = new LinkedHashSet<>(
                    from.getFields().stream().map(Field::getName).toList());
            List<String> missing = d.schema().getFields().stream()
                    .map(Field::getName)
                    .filter(c -> !emitted.contains(c))
                    .toList();
            if (!missing.isEmpty()) {
                problems.add(new ConfigException(
                        d.fromLocation(),
                        "tables." + d.name() + ": '" + d.from() + "' emits no column " + String.join(", ", missing)
                                + " (it emits " + emitted + ")"));
            }
        }
        return problems;
    }

    /**
     * Puts back each table's rows of the last finalized epoch, if the run resumes and the state
     * DB has them (a run that starts over reads its sources from the start, and they fill the
     * tables again); lookup tables start following their backend's changes instead.
     */
    void restore(PositionStore positions, BufferAllocator allocator, boolean resuming) {
        for (Table table : tables) {
            if (table.lookup != null) {
                NativeDynamicTable rows = table.rows;
                table.lookup.follow(new LookupBackend.Changes() {
                    @Override
                    public void forget(java.util.Collection<List<String>> keys) {
                        rows.forget(keys);
                    }

                    @Override
                    public void forgetAll() {
                        rows.forgetAll();
                    }
                });
                continue;
            }
            if (!resuming) {
                continue;
            }
            Map<String, String> saved = positions.load(STATE_PREFIX + table.definition.name());
            String meta = saved.get("meta");
            if (meta == null) {
                continue;
            }
            int chunks = Integer.parseInt(field(meta, "chunks"));
            for (int i = 0; i < chunks; i++) {
                String chunk = saved.get(chunkKey(i));
                if (chunk == null) {
                    throw new IllegalStateException("dynamic table '" + table.definition.name()
                            + "': the state DB lacks " + chunkKey(i) + " of its checkpoint");
                }
                byte[] ipc = Base64.getDecoder().decode(ipcOf(chunk));
                try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(ipc), allocator)) {
                    VectorSchemaRoot root = reader.getVectorSchemaRoot();
                    while (reader.loadNextBatch()) {
                        try (NativeBatch batch = NativeBatch.fromVectors(allocator, root)) {
                            table.rows.apply(batch);
                        }
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(
                            "dynamic table '" + table.definition.name() + "': reading its checkpoint: "
                                    + e.getMessage(),
                            e);
                }
            }
            table.checkpointedVersion = table.rows.stats().version();
            table.measure();
        }
    }

    /**
     * The state-DB entries of every table that changed since its last checkpoint, to save with
     * the epoch's positions; {@link #saved} records that they were.
     */
    Map<String, Map<String, String>> checkpoint(BufferAllocator allocator) {
        Map<String, Map<String, String>> entries = new LinkedHashMap<>();
        for (Table table : tables) {
            if (table.lookup != null) {
                table.measure(); // lookups change it inside the core: metrics see it per checkpoint
                continue;
            }
            long version = table.rows.stats().version();
            if (version == table.checkpointedVersion) {
                continue;
            }
            Map<String, String> rows = new LinkedHashMap<>();
            int chunks = 0;
            try (NativeBatch snapshot = table.rows.snapshot();
                    VectorSchemaRoot root = snapshot.toVectors(allocator)) {
                for (int start = 0; start < root.getRowCount(); start += CHUNK_ROWS) {
                    int length = Math.min(CHUNK_ROWS, root.getRowCount() - start);
                    try (VectorSchemaRoot slice = root.slice(start, length)) {
                        rows.put(
                                chunkKey(chunks++),
                                "{\"ipc\":\"" + Base64.getEncoder().encodeToString(ipc(slice)) + "\"}");
                    }
                }
                rows.put(
                        "meta",
                        "{\"version\":" + version + ",\"rows\":" + root.getRowCount() + ",\"chunks\":" + chunks + "}");
            }
            entries.put(STATE_PREFIX + table.definition.name(), rows);
        }
        return entries;
    }

    /** The entries {@link #checkpoint} returned are in the state DB. */
    void saved(Map<String, Map<String, String>> entries) {
        for (Table table : tables) {
            Map<String, String> rows = entries.get(STATE_PREFIX + table.definition.name());
            if (rows != null) {
                table.checkpointedVersion = Long.parseLong(field(rows.get("meta"), "version"));
            }
        }
    }

    private static byte[] ipc(VectorSchemaRoot root) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
            writer.start();
            writer.writeBatch();
            writer.end();
        } catch (IOException e) {
            throw new IllegalStateException("encoding a dynamic table's checkpoint: " + e.getMessage(), e);
        }
        return out.toByteArray();
    }

    /** The base64 text of a chunk row, {@code {"ipc":"…"}} as {@link #checkpoint} writes it (no regex over megabytes). */
    private static String ipcOf(String chunk) {
        String head = "{\"ipc\":\"";
        if (!chunk.startsWith(head) || !chunk.endsWith("\"}")) {
            throw new IllegalStateException("a dynamic table's checkpoint chunk is not {\"ipc\": \"…\"}");
        }
        return chunk.substring(head.length(), chunk.length() - 2);
    }

    private static String chunkKey(int index) {
        return String.format(java.util.Locale.ROOT, "chunk-%06d", index);
    }

    /** A top-level field of one of the small JSON objects this class writes. */
    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\"?([^\",}]*)").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("a dynamic table's checkpoint row lacks '" + name + "': " + json);
        }
        return m.group(1);
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (Table table : tables) {
            if (table.lookup != null) {
                table.measure(); // the run's summary reports the last counts
                try {
                    table.lookup.close();
                } catch (Exception e) {
                    failure = new IllegalStateException(
                            "closing the lookups of table " + table.definition.name() + ": " + e.getMessage(), e);
                }
            }
            table.rows.close();
        }
        if (this != NONE) {
            upcalls.close();
        }
        if (allocator != null) {
            allocator.close();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
