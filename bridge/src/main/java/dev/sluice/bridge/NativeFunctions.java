package dev.sluice.bridge;

import java.lang.foreign.MemorySegment;

/**
 * The extra SQL functions of a pipeline (plugin UDFs) and its dynamic tables, handed to every
 * transform it plans. Each
 * function is a {@code struct SluiceScalarUdf} of the plugin ABI ({@code sluice_plugin.h}) that
 * DataFusion calls inside the plan: a native plugin's function directly, a Java function through
 * an FFM upcall stub. Whoever adds a function keeps its memory (the plugin library, the stub's
 * arena) alive for as long as transforms planned with the set may run.
 */
public final class NativeFunctions extends NativeHandle {

    private NativeFunctions(long handle) {
        super("functions", handle);
    }

    /** An empty set. */
    public static NativeFunctions create() {
        return new NativeFunctions(core().functionsCreate());
    }

    /**
     * Adds {@code udf} (a {@code SluiceScalarUdf}) under {@code name}; {@code freeString} frees the
     * error messages its {@code invoke} allocates.
     *
     * @throws NativeConfigException when its types are not Arrow types or the name is taken
     */
    public void addScalar(String name, MemorySegment udf, MemorySegment freeString) {
        core().functionsAddScalar(address(), name, udf.address(), freeString.address());
    }

    /**
     * Adds a dynamic table: transforms planned with this set may join it by name and call
     * {@code dynamic_contains(name, value)}. The set keeps the table alive.
     *
     * @throws NativeConfigException when another table has its name
     */
    public void addTable(NativeDynamicTable table) {
        core().functionsAddTable(address(), table.handle());
    }

    /** The handle, for {@link NativeTransform#plan}. */
    long handle() {
        return address();
    }

    @Override
    protected void free(long address) {
        core().functionsFree(address);
    }
}
