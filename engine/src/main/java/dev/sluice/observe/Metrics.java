package dev.sluice.observe;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeCore;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micrometer.registry.otlp.OtlpConfig;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's metrics registry (Micrometer, Prometheus format) with the JVM's own metrics, and
 * the pipelines' meters that need a refresh before each scrape. Made on first use: a plain
 * {@code run} without {@code --metrics-port} never loads it. When {@code OTEL_EXPORTER_OTLP_ENDPOINT}
 * is set, the same meters are also pushed over OTLP/HTTP (protobuf) to {@code ENDPOINT/v1/metrics}
 * every {@code OTEL_METRIC_EXPORT_INTERVAL} ms (default 60 000), and once more when the run ends.
 */
public final class Metrics {

    /** The Prometheus text format's content type. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static volatile PrometheusMeterRegistry registry;
    private static final Set<PipelineMetrics> PIPELINES = ConcurrentHashMap.newKeySet();
    /** The OTLP registry, when the environment asks for one; made with {@link #registry}. */
    private static volatile Otlp otlp;
    /** Each run's meters in the OTLP registry, by its meters in the Prometheus one. */
    private static final Map<PipelineMetrics, PipelineMetrics> OTLP_TWINS = new ConcurrentHashMap<>();

    /** The OTLP endpoint variable (the OpenTelemetry SDKs' name); unset: no OTLP export. */
    public static final String OTLP_ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT";
    /** Milliseconds between two OTLP exports (the OpenTelemetry SDKs' name). */
    public static final String OTLP_INTERVAL = "OTEL_METRIC_EXPORT_INTERVAL";

    /** Whether meters are pushed over OTLP: then a run registers its meters even without a metrics port. */
    public static boolean otlpEnabled() {
        String endpoint = System.getenv(OTLP_ENDPOINT);
        return endpoint != null && !endpoint.isBlank();
    }

    private Metrics() {}

    public static PrometheusMeterRegistry registry() {
        PrometheusMeterRegistry current = registry;
        if (current == null) {
            synchronized (Metrics.class) {
                current = registry;
                if (current == null) {
                    current = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
                    if (otlpEnabled()) {
                        otlp = startOtlp();
                    }
                    bindProcessMeters(current);
                    if (otlp != null) {
                        bindProcessMeters(otlp);
                    }
                    registry = current;
                }
            }
        }
        return current;
    }

    /** The JVM's meters and the native memory the process holds beyond the JVM's own accounting. */
    private static void bindProcessMeters(MeterRegistry to) {
        new JvmMemoryMetrics().bindTo(to);
        new JvmGcMetrics().bindTo(to);
        new JvmThreadMetrics().bindTo(to);
        new ClassLoaderMetrics().bindTo(to);
        new ProcessorMetrics().bindTo(to);
        new UptimeMetrics().bindTo(to);
        Gauge.builder("sluice.native.handles", () -> NativeCore.bridge().liveHandles())
                .description("Native core handles (batches, plans, encoders...) not freed yet")
                .register(to);
        Gauge.builder(
                        "sluice.arrow.java.allocated",
                        () -> ArrowC.rootAllocator().getAllocatedMemory())
                .description("Bytes Arrow Java's allocator holds (Java-side batches and imports)")
                .baseUnit("bytes")
                .register(to);
    }

    /**
     * The OTLP registry, pushing to the endpoint of the environment. Its lag rows are refreshed
     * before each push by a daemon thread (a scrape refreshes the Prometheus ones).
     */
    private static Otlp startOtlp() {
        String endpoint = System.getenv(OTLP_ENDPOINT).strip().replaceAll("/+$", "");
        String interval = System.getenv(OTLP_INTERVAL);
        Duration step =
                Duration.ofMillis(interval == null || interval.isBlank() ? 60_000 : Long.parseLong(interval.strip()));
        Map<String, String> settings = Map.of(
                "otlp.url",
                endpoint + "/v1/metrics",
                "otlp.step",
                step.toString(),
                "otlp.resourceAttributes",
                "service.name=sluice");
        Otlp created = new Otlp(settings::get);
        Thread refresher = new Thread(
                () -> {
                    while (true) {
                        try {
                            Thread.sleep(Math.max(100, step.toMillis() / 2));
                        } catch (InterruptedException e) {
                            return;
                        }
                        OTLP_TWINS.values().forEach(PipelineMetrics::refresh);
                    }
                },
                "sluice-otlp-refresh");
        refresher.setDaemon(true);
        refresher.start();
        return created;
    }

    /** Registers a run's meters in the process's registry (see {@link PipelineMetrics}), and in the OTLP one. */
    public static PipelineMetrics register(
            String pipeline,
            RunStats stats,
            java.util.function.Supplier<java.util.Map<String, java.util.Map<String, Long>>> lag) {
        PipelineMetrics metrics = PipelineMetrics.register(registry(), pipeline, stats, lag);
        PIPELINES.add(metrics);
        if (otlp != null) {
            OTLP_TWINS.put(metrics, PipelineMetrics.register(otlp, pipeline, stats, lag));
        }
        return metrics;
    }

    /**
     * Forgets a run's meters (removing them from the registries). Over OTLP the run's last values
     * are pushed first, so a bounded run's totals arrive however short it was.
     */
    public static void unregister(PipelineMetrics metrics) {
        if (metrics != null) {
            PIPELINES.remove(metrics);
            metrics.close();
            PipelineMetrics twin = OTLP_TWINS.remove(metrics);
            if (twin != null) {
                pushNow();
                twin.close();
            }
        }
    }

    /** Pushes the OTLP registry's meters now (between its steps). */
    private static void pushNow() {
        Otlp current = otlp;
        if (current != null) {
            current.publishNow();
        }
    }

    /** The OTLP registry, with a push on demand (a run's last values before its meters go). */
    private static final class Otlp extends OtlpMeterRegistry {
        Otlp(OtlpConfig config) {
            super(config, Clock.SYSTEM);
        }

        void publishNow() {
            publish();
        }
    }

    /** Every metric now, in the Prometheus text format. */
    public static String scrape() {
        PIPELINES.forEach(PipelineMetrics::refresh);
        return registry().scrape();
    }
}
