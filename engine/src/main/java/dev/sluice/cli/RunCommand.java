package dev.sluice.cli;

import ch.qos.logback.classic.Level;
import dev.sluice.config.StageTypes;
import dev.sluice.observe.Inspections;
import dev.sluice.observe.Logs;
import dev.sluice.observe.Metrics;
import dev.sluice.observe.PipelineMetrics;
import dev.sluice.observe.Progress;
import dev.sluice.runtime.Lanes;
import dev.sluice.runtime.Pipeline;
import dev.sluice.runtime.PipelineRunner;
import dev.sluice.service.ServiceApi;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.MDC;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice run PIPELINE.yaml}: runs until bounded sources end or Ctrl-C / SIGTERM, which
 * takes a final barrier (sinks flush) before exiting with 0 ({@link StopSignals}).
 */
@Command(name = "run", description = "Run a pipeline until its bounded sources end or Ctrl-C.")
final class RunCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "PIPELINE.yaml")
    Path file;

    @Mixin
    CommonOptions options;

    @picocli.CommandLine.Option(
            names = "--state-dir",
            paramLabel = "DIR",
            description =
                    "The pipeline's state DB (checkpointed positions). Default: .sluice/state/NAME, refused if another"
                            + " pipeline file of that name saved sources' positions there; a DIR named here is taken over.")
    Path stateDir;

    @picocli.CommandLine.Option(
            names = "--metrics-port",
            paramLabel = "PORT",
            description =
                    "Serve the run's metrics (Prometheus text format) at http://127.0.0.1:PORT/metrics (0: any free port).")
    Integer metricsPort;

    @picocli.CommandLine.Option(
            names = "--inspect-port",
            paramLabel = "PORT",
            description = "Serve live inspection of the run at http://127.0.0.1:PORT/inspect/NAME (web page; also"
                    + " what 'sluice inspect' reads) and its metrics at /metrics (0: any free port). With"
                    + " --metrics-port too, give both the same port.")
    Integer inspectPort;

    /**
     * With {@code SLUICE_SUMMARY_JSON=FILE}, writes the run's totals as JSON for scripts (the
     * benchmarks): records in and out, wall seconds (of which open_seconds planning and opening
     * the pipeline), when the run began after the JVM's start, and this process's CPU seconds.
     */
    private static void writeSummaryJson(Pipeline pipeline) {
        String target = System.getenv("SLUICE_SUMMARY_JSON");
        if (target == null || target.isBlank()) {
            return;
        }
        var os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        var stats = pipeline.stats();
        String json = String.format(
                java.util.Locale.ROOT,
                "{\"records_in\": %d, \"records_out\": %d, \"seconds\": %.3f, \"open_seconds\": %.3f, "
                        + "\"started_ms_after_jvm_start\": %d, \"cpu_seconds\": %.3f, \"checkpoints\": %d, "
                        + "\"checkpoints_timed_out\": %d, \"checkpoints_failed\": %d, \"first_record_ms_after_jvm_start\": %d}%n",
                stats.recordsIn(),
                stats.recordsOut(),
                stats.elapsedSeconds(),
                stats.openSeconds(),
                stats.createdAfterJvmStartMillis(),
                os.getProcessCpuTime() / 1e9,
                stats.checkpoints().completed(),
                stats.checkpoints().timedOut(),
                stats.checkpoints().failed(),
                stats.firstRecordAfterJvmStartMillis());
        try {
            java.nio.file.Files.writeString(Path.of(target), json);
        } catch (java.io.IOException e) {
            System.err.println("cannot write " + target + ": " + e.getMessage());
        }
    }

    /**
     * {@code run FILE [--state-dir DIR] [--bridge ffm|jni] [--verbose]} parsed without picocli,
     * whose model building takes ~0.2 s of a restarted pipeline's ~1 s to first record. Only
     * these plain forms: anything else (help, {@code --opt=value}, a repeated option, a bad
     * value) returns null and goes through picocli, which owns the messages. CliTest checks
     * that both parse every form alike.
     */
    static RunCommand parseDirect(String... args) {
        if (args.length < 2 || !args[0].equals("run")) {
            return null;
        }
        RunCommand run = new RunCommand();
        run.options = new CommonOptions();
        try {
            for (int i = 1; i < args.length; i++) {
                String arg = args[i];
                boolean hasValue = i + 1 < args.length;
                switch (arg) {
                    case "--verbose" -> {
                        if (run.options.verbose) {
                            return null;
                        }
                        run.options.verbose = true;
                    }
                    case "--state-dir" -> {
                        if (run.stateDir != null || !hasValue) {
                            return null;
                        }
                        run.stateDir = Path.of(args[++i]);
                    }
                    case "--bridge" -> {
                        if (run.options.bridge != null
                                || !hasValue
                                || !List.of("ffm", "jni").contains(args[i + 1])) {
                            return null;
                        }
                        run.options.bridge = args[++i];
                    }
                    default -> {
                        if (arg.startsWith("-") || run.file != null) {
                            return null;
                        }
                        run.file = Path.of(arg);
                    }
                }
            }
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
        return run.file == null ? null : run;
    }

    @Override
    public Integer call() {
        ClassDataArchive archive = ClassDataArchive.fromEnvironment();
        options.apply();
        Warmup.start(archive.mapsAotCache());
        Pipeline pipeline = options.assemble(file, options.err(Level.ERROR, null), true, stateDir);
        if (pipeline == null) {
            archive.runEnded(false);
            return Main.EXIT_CONFIG;
        }
        try {
            return run(pipeline);
        } finally {
            archive.runEnded(pipeline.stats().firstRecordAfterJvmStartMillis() >= 0);
        }
    }

    private int run(Pipeline pipeline) {
        // Every log line of this thread (and the lanes', see PipelineRunner) names the pipeline.
        MDC.put(Logs.PIPELINE, pipeline.name());
        Logs.maskFor(pipeline.name(), CommonOptions.maskOf(file));
        PrintStream err = options.err(Level.ERROR, pipeline.name());
        PrintStream info = options.err(Level.INFO, pipeline.name());
        Lanes lanes;
        try {
            lanes = Lanes.of(pipeline, StageTypes.installed());
        } catch (RuntimeException e) {
            pipeline.close();
            options.report(err, "error: " + file + ": ", e);
            return Main.EXIT_CONFIG;
        }
        try {
            // Destinations open only now: validation never gets here.
            lanes.start();
        } catch (RuntimeException e) {
            try {
                lanes.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            if (e instanceof dev.sluice.config.ConfigException config) {
                options.report(err, config);
            } else {
                options.report(err, "error: " + file + ": ", e);
            }
            return Main.EXIT_CONFIG;
        }
        PipelineMetrics metrics = null;
        ServiceApi.MetricsEndpoint endpoint = null;
        Integer port = inspectPort != null ? inspectPort : metricsPort;
        if (metricsPort != null && inspectPort != null && !metricsPort.equals(inspectPort)) {
            lanes.close();
            err.println("error: --metrics-port and --inspect-port are served by one server: give them the same"
                    + " port, or only one of them");
            return Main.EXIT_USAGE;
        }
        Inspections.Registration inspection = Inspections.register(
                new Inspections.View(pipeline.name(), pipeline.graph(), pipeline.stats(), lanes::lag));
        if (port != null || Metrics.otlpEnabled()) {
            try {
                metrics = Metrics.register(pipeline.name(), pipeline.stats(), lanes::lag);
                if (port != null) {
                    endpoint = ServiceApi.startForRun("127.0.0.1", port);
                    info.printf("[%s] metrics at http://127.0.0.1:%d/metrics%n", pipeline.name(), endpoint.port());
                    info.printf(
                            "[%s] inspect at http://127.0.0.1:%d/inspect/%s%n",
                            pipeline.name(), endpoint.port(), pipeline.name());
                }
            } catch (RuntimeException e) {
                Metrics.unregister(metrics);
                inspection.close();
                lanes.close();
                options.report(err, "error: cannot serve metrics and inspection on port " + port + ": ", e);
                return Main.EXIT_CONFIG;
            }
        }
        AtomicBoolean stop = new AtomicBoolean();
        StopSignals signals = StopSignals.install(stop, pipeline.name());
        boolean terminal = !options.jsonLogs()
                && System.console() != null
                && System.console().isTerminal();
        Progress progress = new Progress(pipeline.name(), pipeline.stats(), info, terminal);
        try (lanes) {
            if (lanes.count() > 1) {
                info.printf("[%s] running %d lanes%n", pipeline.name(), lanes.count());
            }
            PipelineRunner.Outcome outcome = lanes.run(stop, progress);
            progress.summary(outcome == PipelineRunner.Outcome.COMPLETED ? "completed" : "stopped");
            writeSummaryJson(pipeline);
            lanes.deadLetterReport().forEach(line -> info.println("  " + line));
            return 0;
        } catch (RuntimeException e) {
            progress.summary("failed");
            options.report(err, "error: ", e);
            return Main.EXIT_FAILED;
        } finally {
            signals.close();
            if (endpoint != null) {
                endpoint.close();
            }
            inspection.close();
            Metrics.unregister(metrics);
        }
    }
}
