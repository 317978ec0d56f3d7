package dev.sluice.runtime;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativePlanException;
import dev.sluice.bridge.NativeTransform;
import dev.sluice.config.ConfigDef;
import dev.sluice.config.ConfigType;
import dev.sluice.config.NodeKind;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.Transform;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code sql} transform: stateless SQL planned once in the core over its inputs, which the
 * SQL names as tables. Every batch is pushed into the plan and the output drained at once.
 */
public final class SqlTransform implements Transform {

    public static final StageType TYPE = StageType.of(NodeKind.TRANSFORM, "sql",
            "Runs a SQL query over every batch of its inputs. The query is planned once, when the pipeline "
                    + "starts; aggregations, joins between streams, windows, ORDER BY and LIMIT are rejected "
                    + "because they would need state across batches.",
            new ConfigDef().define("sql", ConfigType.STRING, null, true,
                    "The query. Its FROM clauses name upstream sources or transforms; a dotted node name "
                            + "such as raw.transactions is written as is. Stateless SQL only: WHERE, projections, "
                            + "CAST, CASE, scalar functions (string, regex, datetime, math, JSON), UNION ALL, UNNEST."),
            config -> new SqlTransform(config.getString("sql")),
            (node, config) -> {
                try {
                    return NativeTransform.tableReferences(config.getString("sql"));
                } catch (NativeException e) {
                    throw new InvalidSettingException("sql", "SQL error: " + e.getMessage(), e);
                }
            });

    private final String sql;
    private NativeTransform plan;
    private BufferAllocator allocator;

    public SqlTransform(String sql) {
        this.sql = sql;
    }

    @Override
    public Schema open(StageContext context, List<String> inputNames, List<Schema> inputSchemas) {
        allocator = context.allocator();
        try {
            plan = NativeTransform.plan(allocator, sql, inputNames, inputSchemas);
        } catch (NativePlanException e) {
            throw new InvalidSettingException("sql", "SQL error: " + e.getMessage(), e);
        }
        return plan.outputSchema();
    }

    @Override
    public void process(int input, Batch batch, Emitter out) {
        if (batch instanceof NativeBatch nativeBatch) {
            plan.push(input, nativeBatch);
        } else {
            try (VectorSchemaRoot root = batch.toVectors(allocator)) {
                plan.push(input, root);
            }
        }
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
