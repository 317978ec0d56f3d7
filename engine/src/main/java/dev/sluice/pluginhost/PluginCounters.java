package dev.sluice.pluginhost;

/** Process-wide counters of the plugin host, for tests and benchmarks. */
public final class PluginCounters {

    private PluginCounters() {}

    /**
     * FFM upcalls into Java UDFs so far, all pipelines together. A native plugin's UDF is called
     * by the core without one, so a pipeline using only native UDFs leaves this unchanged.
     */
    public static long javaUdfUpcalls() {
        return JavaFunction.upcalls();
    }
}
