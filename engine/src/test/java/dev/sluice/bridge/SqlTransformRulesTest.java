package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What SQL a streaming transform accepts, and that it is planned exactly once. */
class SqlTransformRulesTest {

    private BufferAllocator allocator;
    private long handlesBefore;
    private Schema schema;

    @BeforeEach
    void setUp() {
        allocator = ArrowC.rootAllocator().newChildAllocator("sql-rules", 0, Long.MAX_VALUE);
        handlesBefore = NativeTestSupport.liveHandles();
        try (VectorSchemaRoot root = batch(0)) {
            schema = root.getSchema();
        }
    }

    @AfterEach
    void tearDown() {
        NativeTestSupport.assertNoLeaks(handlesBefore, allocator);
        allocator.close();
    }

    private VectorSchemaRoot batch(int rows) {
        BigIntVector id = new BigIntVector("id", allocator);
        VarCharVector name = new VarCharVector("name", allocator);
        id.allocateNew(Math.max(rows, 1));
        name.allocateNew();
        for (int i = 0; i < rows; i++) {
            id.set(i, i);
            name.setSafe(i, ("n" + i).getBytes());
        }
        id.setValueCount(rows);
        name.setValueCount(rows);
        return VectorSchemaRoot.of(id, name);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "SELECT name, count(*) FROM a GROUP BY name | aggregation",
                "SELECT count(*) FROM a | aggregation",
                "SELECT DISTINCT name FROM a | aggregation",
                "SELECT id, row_number() OVER (PARTITION BY name ORDER BY id) FROM a | window functions",
                "SELECT * FROM a ORDER BY id | ORDER BY",
                "SELECT * FROM a LIMIT 10 | LIMIT",
                "SELECT a.id FROM a JOIN b ON a.id = b.id | join between two streams",
                "SELECT id FROM a WHERE id IN (SELECT id FROM b) | join between two streams",
            })
    void statefulSqlIsRejectedWithTheReason(String sql, String reason) {
        NativePlanException e = assertThrows(
                NativePlanException.class,
                () -> NativeTransform.plan(allocator, sql, List.of("a", "b"), List.of(schema, schema))
                        .close());
        assertTrue(
                e.getMessage().contains("stateful SQL is not supported")
                        && e.getMessage().contains(reason),
                e.getMessage());
    }

    @Test
    void unknownColumnsAndTablesArePlanErrors() {
        NativePlanException column = assertThrows(
                NativePlanException.class,
                () -> NativeTransform.plan(allocator, "SELECT nope FROM a", List.of("a"), List.of(schema))
                        .close());
        assertTrue(column.getMessage().contains("nope"), column.getMessage());
        NativePlanException table = assertThrows(
                NativePlanException.class,
                () -> NativeTransform.plan(allocator, "SELECT id FROM missing", List.of("a"), List.of(schema))
                        .close());
        assertTrue(table.getMessage().contains("missing"), table.getMessage());
        NativePlanException types = assertThrows(
                NativePlanException.class,
                () -> NativeTransform.plan(allocator, "SELECT id + name FROM a", List.of("a"), List.of(schema))
                        .close());
        assertTrue(!types.getMessage().isBlank());
    }

    @Test
    void tableReferencesAreReadFromTheSql() {
        assertEquals(List.of("bid"), NativeTransform.tableReferences("SELECT * FROM bid WHERE price > 1"));
        assertEquals(
                java.util.Set.of("raw.transactions", "b"),
                java.util.Set.copyOf(NativeTransform.tableReferences(
                        "WITH x AS (SELECT * FROM raw.transactions) SELECT * FROM x UNION ALL SELECT * FROM b")));
    }

    @Test
    void dottedNodeNamesWorkAsTables() {
        try (NativeTransform plan = NativeTransform.plan(
                        allocator, "SELECT id FROM raw.events WHERE id > 1", List.of("raw.events"), List.of(schema));
                VectorSchemaRoot root = batch(4)) {
            plan.push(0, root);
            try (NativeBatch out = plan.drain()) {
                assertEquals(2, out.rowCount());
            }
        }
    }

    @Test
    void aTransformIsPlannedOnceAndEveryBatchLeavesBeforeTheNext() {
        long plansBefore = NativeCore.bridge().planCount();
        try (NativeTransform plan = NativeTransform.plan(
                        allocator,
                        "SELECT id, upper(name) AS n FROM a WHERE id % 10 = 3 UNION ALL SELECT id, name FROM a WHERE id = 0",
                        List.of("a"),
                        List.of(schema));
                VectorSchemaRoot root = batch(20)) {
            assertEquals(plansBefore + 1, NativeCore.bridge().planCount());
            for (int i = 0; i < 500; i++) {
                plan.push(0, root);
                long rows = 0;
                for (NativeBatch out = plan.drain(); out != null; out = plan.drain()) {
                    try (NativeBatch owned = out) {
                        rows += out.rowCount();
                    }
                }
                // Rows 3 and 13 from the first branch, row 0 from the second: all of them now,
                // none held back for a later batch (small filter outputs are not coalesced).
                assertEquals(3, rows, "push " + i);
            }
            assertEquals(plansBefore + 1, NativeCore.bridge().planCount(), "no re-planning per batch");
        }
    }

    @Test
    void noLeaksAfterAHundredThousandPushDrainCycles() {
        try (NativeTransform plan = NativeTransform.plan(
                        allocator, "SELECT id * 2 AS id2, name FROM a WHERE id > 0", List.of("a"), List.of(schema));
                VectorSchemaRoot root = batch(4)) {
            long rows = 0;
            for (int i = 0; i < 100_000; i++) {
                plan.push(0, root);
                for (NativeBatch out = plan.drain(); out != null; out = plan.drain()) {
                    try (NativeBatch owned = out) {
                        rows += out.rowCount();
                    }
                }
            }
            assertEquals(300_000, rows);
            assertNull(plan.drain());
            assertEquals(handlesBefore + 1, NativeTestSupport.liveHandles(), "only the transform itself is alive");
        }
        // tearDown asserts live handles back to the start and the allocator at 0 bytes.
    }
}
