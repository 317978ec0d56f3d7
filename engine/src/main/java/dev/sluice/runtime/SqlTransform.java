package dev.sluice.runtime;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeDataException;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativeExecutionException;
import dev.sluice.bridge.NativePlanException;
import dev.sluice.bridge.NativeTransform;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.pluginhost.PluginContext;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code sql} transform: stateless SQL planned once in the core over its inputs, which the
 * SQL names as tables. Every batch is pushed into the plan and the output drained at once; a
 * batch the plan fails on fails the run, or with {@code on_error} its failing rows are found
 * and set aside ({@link #isolate}).
 */
public final class SqlTransform implements Transform {

    /** The {@code sql} transform's stage type, registered like every other (META-INF/services). */
    public static final class Type extends AbstractStageType {

        /** The query (STRING). */
        public static final String SQL = "sql";
        /** Static side tables (SECTIONS, see {@link SideTables}). */
        public static final String TABLES = "tables";

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(
                new ConfigDef()
                        .define(
                                SQL,
                                ConfigType.STRING,
                                null,
                                true,
                                "The query. Its FROM clauses name upstream sources or transforms, and side tables; a "
                                        + "dotted node name such as raw.transactions is written as is. Stateless SQL "
                                        + "only: WHERE, projections, CAST, CASE, scalar functions (string, regex, "
                                        + "datetime, math, JSON), UNION ALL, UNNEST, joins with side tables.")
                        .defineSections(TABLES, SideTables.SECTION, SideTables.DOC),
                "fail",
                "What to do with a row the query fails on (a cast that fails, a value that does not fit its type, an "
                        + "overflow): fail the run, write the input row with the error to the dead letter, or skip it "
                        + "(counted). The other rows of its batch go on.");

        public Type() {
            super(
                    NodeKind.TRANSFORM,
                    "sql",
                    "Runs a SQL query over every batch of its inputs. The query is planned once, when the pipeline "
                            + "starts; aggregations, joins between streams, windows, ORDER BY and LIMIT are rejected "
                            + "because they would need state across batches. Besides DataFusion's functions, the built-in "
                            + "count_char(string, character) counts the occurrences of a character (Nexmark q14's UDF).",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public SqlTransform create(Settings settings) {
            return new SqlTransform(
                    settings.getString(SQL),
                    SideTables.describe(settings),
                    ErrorPolicy.parse(settings.getString(StandardKeys.ON_ERROR)));
        }

        /** The tables the SQL names, less the side tables: the upstream nodes. */
        @Override
        public List<String> inputs(List<String> from, Settings settings) {
            List<String> references;
            try {
                references = NativeTransform.tableReferences(settings.getString(SQL));
            } catch (NativeException e) {
                throw new InvalidSettingException(SQL, "SQL error: " + e.getMessage(), e);
            }
            return references.stream()
                    .filter(name -> !SideTables.names(settings).contains(name))
                    .toList();
        }

        /** Each lane plans its own copy of the query. */
        @Override
        public boolean supportsLanes() {
            return true;
        }
    }

    private final String sql;
    /** Side tables as the core reads them; see {@link SideTables}. */
    private final List<Map<String, Object>> sideTables;
    /** {@code on_error}: FAIL fails the run on a batch's error; otherwise the failing rows are set aside. */
    private final ErrorPolicy onError;

    private NativeTransform plan;
    private StageContext context;
    private BufferAllocator allocator;

    public SqlTransform(String sql) {
        this(sql, List.of(), ErrorPolicy.FAIL);
    }

    SqlTransform(String sql, List<Map<String, Object>> sideTables, ErrorPolicy onError) {
        this.sql = sql;
        this.sideTables = List.copyOf(sideTables);
        this.onError = onError;
    }

    @Override
    public Schema open(StageContext context, List<String> inputNames, List<Schema> inputSchemas) {
        this.context = context;
        allocator = context.allocator();
        try {
            plan = NativeTransform.plan(
                    allocator,
                    sql,
                    inputNames,
                    inputSchemas,
                    sideTables,
                    PluginContext.of(context).functions());
        } catch (NativeException e) {
            // The core names the side table and its file when reading one failed.
            if (e.getMessage() != null && e.getMessage().startsWith("side table '")) {
                throw new InvalidSettingException(Type.TABLES, e.getMessage(), e);
            }
            if (e instanceof NativePlanException) {
                throw new InvalidSettingException(Type.SQL, "SQL error: " + e.getMessage(), e);
            }
            throw e;
        }
        for (Field field : plan.outputSchema().getFields()) {
            if (holdsUnion(field)) {
                throw new InvalidSettingException(
                        Type.SQL,
                        "SQL error: column '" + field.getName() + "' holds a union of JSON types (what json_get and -> "
                                + "give), which no sink writes; take one type: json_get_str, json_get_int, json_get_float, "
                                + "json_get_bool, or ->> for the text");
            }
        }
        return plan.outputSchema();
    }

    private static boolean holdsUnion(Field field) {
        return field.getType() instanceof ArrowType.Union
                || field.getChildren().stream().anyMatch(SqlTransform::holdsUnion);
    }

    @Override
    public void process(int input, Batch batch, Emitter out) {
        if (batch instanceof NativeBatch nativeBatch) {
            push(input, nativeBatch, out);
        } else if (onError == ErrorPolicy.FAIL) {
            try (VectorSchemaRoot root = batch.toVectors(allocator)) {
                plan.push(input, root);
            }
            drain(out);
        } else {
            NativeBatch.with(batch, allocator, nativeBatch -> push(input, nativeBatch, out));
        }
    }

    /** Pushes a batch and emits its output; a batch that fails on its rows goes to {@link #isolate}. */
    private void push(int input, NativeBatch batch, Emitter out) {
        try {
            plan.push(input, batch);
        } catch (NativeExecutionException | NativeDataException e) {
            if (onError == ErrorPolicy.FAIL || batch.rowCount() == 0) {
                throw e;
            }
            isolate(input, batch, e, out);
            return;
        }
        drain(out);
    }

    /**
     * Narrows a batch the query failed on down to the rows it fails on: pushes each half again
     * (a failed push emits nothing, so no row is emitted twice), and each half of a half that
     * fails, until a failing row stands alone; it is rejected with its own error, per
     * {@code on_error}. The other rows' output is emitted in their order. One bad row among n
     * costs about 2·log2(n) pushes of shrinking parts.
     */
    private void isolate(int input, NativeBatch failed, NativeException error, Emitter out) {
        long rows = failed.rowCount();
        if (rows == 1) {
            context.reject(-1, NativeEncoder.jsonLines(failed), error.getMessage());
            return;
        }
        long half = rows / 2;
        try (NativeBatch first = failed.slice(0, half)) {
            push(input, first, out);
        }
        try (NativeBatch second = failed.slice(half, rows - half)) {
            push(input, second, out);
        }
    }

    private void drain(Emitter out) {
        for (NativeBatch result = plan.drain(); result != null; result = plan.drain()) {
            out.emit(result);
        }
    }

    @Override
    public void close() {
        if (plan != null) {
            plan.close();
        }
    }
}
