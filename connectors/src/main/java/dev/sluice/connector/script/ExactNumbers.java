package dev.sluice.connector.script;

import dev.sluice.plugin.Batch;
import dev.sluice.plugin.InvalidSettingException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Values a JavaScript number cannot carry exactly: a script gets numbers as doubles and gives them
 * back as their shortest digits, so a bigint past 2^53 (other than those whose shortest digits
 * are its own, such as 2^53 + 2) or a decimal of more digits than a double keeps would reach it
 * changed, and come back changed. Such rows go to on_error instead.
 */
final class ExactNumbers {

    /** The top-level columns to check, by index; empty when no column can hold such a value. */
    private final int[] columns;

    private ExactNumbers(int[] columns) {
        this.columns = columns;
    }

    /**
     * The check for rows of {@code input}.
     *
     * @throws InvalidSettingException if a list or struct column holds bigints or decimals (they
     *     are not checked one by one: CAST them or leave them out before the script)
     */
    static ExactNumbers of(Schema input) {
        List<Integer> checked = new ArrayList<>();
        for (int i = 0; i < input.getFields().size(); i++) {
            Field field = input.getFields().get(i);
            if (wide(field.getType())) {
                checked.add(i);
            } else if (field.getChildren().stream().anyMatch(ExactNumbers::holdsWide)) {
                throw new InvalidSettingException(
                        "from",
                        "column '" + field.getName() + "' holds bigints or decimals inside a list or struct, which "
                                + "a script would get as JavaScript numbers, possibly changed; CAST them (to double "
                                + "or string) or leave the column out before the script");
            }
        }
        return new ExactNumbers(checked.stream().mapToInt(Integer::intValue).toArray());
    }

    private static boolean wide(ArrowType type) {
        return type instanceof ArrowType.Int i && i.getBitWidth() == 64 || type instanceof ArrowType.Decimal;
    }

    private static boolean holdsWide(Field field) {
        return wide(field.getType()) || field.getChildren().stream().anyMatch(ExactNumbers::holdsWide);
    }

    /** Per row of {@code batch}, why it cannot go to a script, or null; null when every row can. */
    List<String> check(Batch batch, BufferAllocator allocator) {
        if (columns.length == 0) {
            return null;
        }
        String[] why = null;
        try (VectorSchemaRoot root = batch.toVectors(allocator)) {
            for (int c : columns) {
                FieldVector vector = root.getVector(c);
                for (int row = 0; row < root.getRowCount(); row++) {
                    if (vector.isNull(row) || exact(vector, row)) {
                        continue;
                    }
                    if (why == null) {
                        why = new String[root.getRowCount()];
                    }
                    why[row] = "column '" + vector.getName() + "' holds " + vector.getObject(row) + ", which a "
                            + "JavaScript number cannot carry exactly: the row is not given to the script";
                }
            }
        }
        return why == null ? null : Arrays.asList(why);
    }

    private static boolean exact(FieldVector vector, int row) {
        return switch (vector) {
            // A double holding the value exactly is not enough: JSON.stringify writes its shortest
            // digits, 2^60 as 1152921504606847000, which reads back as another integer.
            case BigIntVector v -> sameAsItsDouble(BigDecimal.valueOf(v.get(row)));
            case UInt8Vector v -> sameAsItsDouble(new BigDecimal(new BigInteger(Long.toUnsignedString(v.get(row)))));
            case DecimalVector v -> sameAsItsDouble(v.getObject(row));
            default -> sameAsItsDouble(new BigDecimal(vector.getObject(row).toString()));
        };
    }

    /** Whether a double's shortest text (what JSON.stringify writes) is this decimal's value. */
    private static boolean sameAsItsDouble(BigDecimal value) {
        double d = value.doubleValue();
        return Double.isFinite(d) && new BigDecimal(Double.toString(d)).compareTo(value) == 0;
    }
}
