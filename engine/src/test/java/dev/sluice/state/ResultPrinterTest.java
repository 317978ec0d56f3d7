package dev.sluice.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.bridge.ArrowC;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** The two output formats of {@code sluice state query}. */
class ResultPrinterTest {

    private static final List<StateRow> ROWS = List.of(
            new StateRow("orders", "p/0", "{\"offset\":42}", Instant.parse("2024-05-01T10:00:00Z")),
            new StateRow("billing-long-name", "multi\nline", "7", Instant.parse("2024-05-01T10:00:00.5Z")));

    @Test
    void tablesAlignColumnsAndKeepEachRowOnOneLine() {
        try (BufferAllocator allocator = ArrowC.rootAllocator().newChildAllocator("printer", 0, Long.MAX_VALUE);
                VectorSchemaRoot state = StateTable.toVectors(ROWS, allocator);
                BigIntVector numbers = new BigIntVector("n", allocator)) {
            numbers.allocateNew(2);
            numbers.set(0, 5);
            numbers.setNull(1);
            List<FieldVector> columns = new ArrayList<>(state.getFieldVectors());
            columns.add(numbers);
            // Not closed: its vectors belong to state and numbers.
            VectorSchemaRoot table = new VectorSchemaRoot(columns);
            table.setRowCount(2);
            assertEquals("""
                    namespace         | key         | data          | created_at               |    n
                    ------------------+-------------+---------------+--------------------------+-----
                    orders            | p/0         | {"offset":42} | 2024-05-01T10:00:00.000Z |    5
                    billing-long-name | multi\\nline | 7             | 2024-05-01T10:00:00.500Z | NULL
                    """, print(table, ResultPrinter.Format.TABLE));
        }
    }

    @Test
    void jsonLinesHoldOneObjectPerRow() {
        try (BufferAllocator allocator = ArrowC.rootAllocator().newChildAllocator("printer", 0, Long.MAX_VALUE);
                VectorSchemaRoot root = StateTable.toVectors(ROWS, allocator)) {
            assertEquals("""
                    {"namespace":"orders","key":"p/0","data":"{\\"offset\\":42}","created_at":"2024-05-01T10:00:00.000Z"}
                    {"namespace":"billing-long-name","key":"multi\\nline","data":"7","created_at":"2024-05-01T10:00:00.500Z"}
                    """, print(root, ResultPrinter.Format.JSON));
        }
    }

    private static String print(VectorSchemaRoot root, ResultPrinter.Format format) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ResultPrinter.print(root, format, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }
}
