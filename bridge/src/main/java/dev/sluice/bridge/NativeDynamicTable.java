package dev.sluice.bridge;

import java.util.List;
import java.util.Map;

/**
 * A dynamic table in the core: keyed rows that SQL transforms join by name and test with
 * {@code dynamic_contains}, while the engine applies changes to it (upserts, and deletes by
 * {@code _op = 'd'}). Transforms see a change from the next batch they take on. Add it to the
 * pipeline's {@link NativeFunctions} before planning the transforms that read it.
 */
public final class NativeDynamicTable extends NativeHandle {

    /** The table's size now. */
    public record Stats(long rows, long bytes, long version) {}

    private NativeDynamicTable(long handle) {
        super("dynamic table", handle);
    }

    /**
     * An empty table.
     *
     * @param columns each {@code {name, type (arrow-rs name), nullable}}
     * @param maxRows the row limit, or 0 for none
     * @param maxBytes the byte limit, or 0 for none
     * @throws NativeConfigException when a type, the key or the name is not valid
     */
    public static NativeDynamicTable create(
            String name, List<Map<String, Object>> columns, List<String> key, long maxRows, long maxBytes) {
        Map<String, Object> options = new java.util.LinkedHashMap<>();
        options.put("name", name);
        options.put("columns", columns);
        options.put("key", key);
        if (maxRows > 0) {
            options.put("max_rows", maxRows);
        }
        if (maxBytes > 0) {
            options.put("max_bytes", maxBytes);
        }
        return new NativeDynamicTable(core().dynamicTableCreate(Json.object(options)));
    }

    /**
     * Applies a batch of changes in row order (the batch stays the caller's).
     *
     * @throws NativeDataException when the batch cannot apply (it then changed nothing) or a limit
     *     was crossed
     */
    public void apply(NativeBatch changes) {
        core().dynamicTableApply(address(), changes.handle());
    }

    /** Every live row as one batch, which the caller closes. */
    public NativeBatch snapshot() {
        return new NativeBatch(core().dynamicTableSnapshot(address()));
    }

    public Stats stats() {
        long[] values = core().dynamicTableStats(address());
        return new Stats(values[0], values[1], values[2]);
    }

    /** The handle, for {@link NativeFunctions#addTable}. */
    long handle() {
        return address();
    }

    @Override
    protected void free(long address) {
        core().dynamicTableFree(address);
    }
}
