package dev.sluice.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeCore;
import dev.sluice.bridge.NativePlanException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** SQL over the state table in the native core, with leak checks on both sides. */
class StateTableTest {

    private static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");

    private static final List<StateRow> ROWS = List.of(
            new StateRow("orders", "source/in/orders/0", "{\"offset\": 42, \"epoch\": 7}", T0),
            new StateRow("orders", "source/in/orders/1", "{\"offset\": 1000, \"epoch\": 7}", T0.plusSeconds(1)),
            new StateRow("orders", "source/in/orders/2", "{\"offset\": 5, \"epoch\": 6}", T0.plusSeconds(2)),
            new StateRow("plugin.dedup", "window", "{\"seen\": [1, 2, 3]}", T0.plusMillis(7)));

    private BufferAllocator allocator;
    private long handlesBefore;

    @BeforeEach
    void open() {
        handlesBefore = NativeCore.bridge().liveHandles();
        allocator = ArrowC.rootAllocator().newChildAllocator("state-table-test", 0, Long.MAX_VALUE);
    }

    @AfterEach
    void noLeaks() {
        assertEquals(handlesBefore, NativeCore.bridge().liveHandles(), "native handles leaked");
        assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory leaked");
        allocator.close();
    }

    @Test
    void theTableHasFourNotNullColumns() {
        try (VectorSchemaRoot root = StateTable.toVectors(ROWS, allocator)) {
            assertEquals(
                    List.of("namespace", "key", "data", "created_at"),
                    root.getSchema().getFields().stream().map(f -> f.getName()).toList());
            assertTrue(root.getSchema().getFields().stream().noneMatch(f -> f.isNullable()));
            assertEquals(
                    new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC"),
                    root.getVector("created_at").getField().getType());
            assertEquals(4, root.getRowCount());
            assertEquals("window", root.getVector("key").getObject(3).toString());
            assertEquals(
                    T0.plusMillis(7).toEpochMilli(),
                    root.getVector("created_at").getObject(3));
        }
    }

    @Test
    void countPerNamespace() {
        var rows = query("SELECT namespace, count(*) AS n FROM state GROUP BY namespace ORDER BY namespace");
        assertEquals(List.of(List.of("orders", 3L), List.of("plugin.dedup", 1L)), rows);
    }

    @Test
    void jsonFunctionsReadTheData() {
        var rows = query("SELECT key, json_get_int(data, 'offset') AS off FROM state "
                + "WHERE namespace = 'orders' AND json_get_int(data, 'epoch') = 7 ORDER BY off DESC");
        assertEquals(List.of(List.of("source/in/orders/1", 1000L), List.of("source/in/orders/0", 42L)), rows);
    }

    @Test
    void createdAtIsATimestamp() {
        var rows =
                query("SELECT max(created_at) AS latest, min(created_at) > TIMESTAMP '2024-01-01T00:00:00Z' AS recent "
                        + "FROM state");
        assertEquals(List.of(List.of("2024-05-01T10:00:02.000Z", true)), rows);
    }

    @Test
    void anEmptyStateIsAnEmptyTable() {
        var count = query(List.of(), "SELECT count(*) AS n FROM state");
        assertEquals(List.of(List.of(0L)), count);
        assertEquals(List.of(), query(List.of(), "SELECT * FROM state"));
    }

    @Test
    void badSqlFailsWithoutLeaking() {
        var unknown = assertThrows(
                NativePlanException.class,
                () -> StateTable.query(ROWS, "SELECT nope FROM state", allocator)
                        .close());
        assertTrue(unknown.getMessage().contains("nope"), unknown.getMessage());
        assertThrows(
                NativePlanException.class,
                () -> StateTable.query(ROWS, "SELEC 1", allocator).close());
    }

    private List<List<Object>> query(String sql) {
        return query(ROWS, sql);
    }

    /** The result as rows of plain values (what the CLI prints). */
    private List<List<Object>> query(List<StateRow> rows, String sql) {
        try (VectorSchemaRoot result = StateTable.query(rows, sql, allocator)) {
            List<List<Object>> out = new ArrayList<>();
            for (int r = 0; r < result.getRowCount(); r++) {
                List<Object> row = new ArrayList<>();
                for (FieldVector column : result.getFieldVectors()) {
                    row.add(ResultPrinter.value(column, r));
                }
                out.add(row);
            }
            return out;
        }
    }
}
