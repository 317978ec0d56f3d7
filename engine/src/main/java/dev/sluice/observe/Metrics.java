package dev.sluice.observe;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's metrics registry (Micrometer, Prometheus format) with the JVM's own metrics, and
 * the pipelines' meters that need a refresh before each scrape. Made on first use: a plain
 * {@code run} without {@code --metrics-port} never loads it.
 */
public final class Metrics {

    /** The Prometheus text format's content type. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static volatile PrometheusMeterRegistry registry;
    private static final Set<PipelineMetrics> PIPELINES = ConcurrentHashMap.newKeySet();

    private Metrics() {}

    public static PrometheusMeterRegistry registry() {
        PrometheusMeterRegistry current = registry;
        if (current == null) {
            synchronized (Metrics.class) {
                current = registry;
                if (current == null) {
                    current = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
                    new JvmMemoryMetrics().bindTo(current);
                    new JvmGcMetrics().bindTo(current);
                    new JvmThreadMetrics().bindTo(current);
                    new ClassLoaderMetrics().bindTo(current);
                    new ProcessorMetrics().bindTo(current);
                    new UptimeMetrics().bindTo(current);
                    // Native memory the process holds beyond the JVM's own accounting.
                    io.micrometer.core.instrument.Gauge.builder(
                                    "sluice.native.handles",
                                    () -> dev.sluice.bridge.NativeCore.bridge().liveHandles())
                            .description("Native core handles (batches, plans, encoders...) not freed yet")
                            .register(current);
                    io.micrometer.core.instrument.Gauge.builder(
                                    "sluice.arrow.java.allocated",
                                    () -> dev.sluice.bridge.ArrowC.rootAllocator()
                                            .getAllocatedMemory())
                            .description("Bytes Arrow Java's allocator holds (Java-side batches and imports)")
                            .baseUnit("bytes")
                            .register(current);
                    registry = current;
                }
            }
        }
        return current;
    }

    /** Registers a run's meters in the process's registry (see {@link PipelineMetrics}). */
    public static PipelineMetrics register(
            String pipeline,
            RunStats stats,
            java.util.function.Supplier<java.util.Map<String, java.util.Map<String, Long>>> lag) {
        PipelineMetrics metrics = PipelineMetrics.register(registry(), pipeline, stats, lag);
        PIPELINES.add(metrics);
        return metrics;
    }

    /** Forgets a run's meters (removing them from the registry). */
    public static void unregister(PipelineMetrics metrics) {
        if (metrics != null) {
            PIPELINES.remove(metrics);
            metrics.close();
        }
    }

    /** Every metric now, in the Prometheus text format. */
    public static String scrape() {
        PIPELINES.forEach(PipelineMetrics::refresh);
        return registry().scrape();
    }
}
