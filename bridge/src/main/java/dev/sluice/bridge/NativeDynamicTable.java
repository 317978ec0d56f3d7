package dev.sluice.bridge;

import dev.sluice.ffm.sluice_h;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * A dynamic table in the core: keyed rows that SQL transforms join by name and test with
 * {@code dynamic_contains}, while the engine applies changes to it (upserts, and deletes by
 * {@code _op = 'd'}). Transforms see a change from the next batch they take on. Add it to the
 * pipeline's {@link NativeFunctions} before planning the transforms that read it.
 */
public final class NativeDynamicTable extends NativeHandle {

    /**
     * The table's size now, and for a lookup table how its keys were found so far: {@code hits}
     * held (present or known absent), {@code misses} loaded, in {@code loads} loader calls.
     */
    public record Stats(long rows, long bytes, long version, long hits, long misses, long loads) {}

    /** What a lookup table calls for the keys it does not hold ({@link #setLoader}). */
    @FunctionalInterface
    public interface Loader {
        /**
         * The table's rows of {@code keys} that exist in the backend: at most one per key, the
         * table's columns by name, as a new batch the core takes over; or null when none does.
         * Runs on the thread of the transform asking; {@code keys} (distinct, the key columns)
         * is closed after the call.
         */
        NativeBatch load(NativeBatch keys) throws Exception;
    }

    private static final MethodHandle LOAD;

    static {
        try {
            LOAD = MethodHandles.lookup()
                    .findStatic(
                            NativeDynamicTable.class,
                            "load",
                            MethodType.methodType(
                                    int.class,
                                    Loader.class,
                                    MemorySegment.class,
                                    MemorySegment.class,
                                    MemorySegment.class,
                                    MemorySegment.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

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
        return new Stats(values[0], values[1], values[2], values[3], values[4], values[5]);
    }

    /**
     * Makes this a lookup table: a cache, bounded by its limits (the oldest keys are evicted), of
     * the backend {@code loader} reads; lookup joins ask it for each batch's keys and it calls
     * {@code loader} once per batch for those it does not hold. Before any transform reading the
     * table is planned. The upcall stub lives in {@code arena}, which the caller closes only after
     * every transform planned with the table is closed.
     */
    public void setLoader(Loader loader, Arena arena) {
        MemorySegment stub = Linker.nativeLinker()
                .upcallStub(
                        LOAD.bindTo(loader),
                        FunctionDescriptor.of(
                                ValueLayout.JAVA_INT,
                                ValueLayout.ADDRESS,
                                ValueLayout.ADDRESS,
                                ValueLayout.ADDRESS,
                                ValueLayout.ADDRESS),
                        arena);
        core().dynamicTableSetLoader(address(), stub.address(), 0, CStrings.FREE.address());
    }

    /** The upcall: never throws into native code; a failure is a status and a malloc'ed message. */
    private static int load(
            Loader loader, MemorySegment state, MemorySegment keys, MemorySegment outRows, MemorySegment outError) {
        try (NativeBatch keyBatch = new NativeBatch(keys.address())) {
            NativeBatch rows = loader.load(keyBatch);
            if (rows != null) {
                outRows.reinterpret(ValueLayout.ADDRESS.byteSize())
                        .set(ValueLayout.ADDRESS, 0, MemorySegment.ofAddress(rows.handOver()));
            }
            return sluice_h.SLUICE_OK();
        } catch (Throwable e) {
            CStrings.writeMessage(outError, e.getMessage() == null ? e.toString() : e.getMessage());
            return sluice_h.SLUICE_ERR_IO();
        }
    }

    /**
     * Lookup table: drops the cached rows of {@code keys} — each its columns' values as text, in
     * the key's order — so they are loaded again when needed.
     */
    public void forget(Collection<List<String>> keys) {
        if (!keys.isEmpty()) {
            core().dynamicTableForget(address(), Json.array(keys));
        }
    }

    /** Lookup table: drops every cached row. */
    public void forgetAll() {
        core().dynamicTableForget(address(), null);
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
