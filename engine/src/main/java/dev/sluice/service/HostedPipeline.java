package dev.sluice.service;

import dev.sluice.config.ConfigException;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.Secrets;
import dev.sluice.config.StageTypes;
import dev.sluice.observe.Inspections;
import dev.sluice.observe.Metrics;
import dev.sluice.observe.PipelineMetrics;
import dev.sluice.observe.Progress;
import dev.sluice.observe.RunStats;
import dev.sluice.pluginhost.Preprocessors;
import dev.sluice.runtime.Lanes;
import dev.sluice.runtime.Pipeline;
import dev.sluice.runtime.PipelineRunner;
import dev.sluice.runtime.RestartPolicy;
import dev.sluice.state.StatePositionStore;
import dev.sluice.state.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * One pipeline the service hosts: a supervisor thread that assembles it from its definition,
 * runs its lanes with the same runtime as {@code sluice run}, and restarts it from its last
 * checkpoint after a failure as its {@code restart:} policy says. Its positions live in the
 * service's state DB under the pipeline's own namespace. The service serializes the calls to
 * {@link #start} and {@link #stop}; the status getters may be read from any thread.
 */
final class HostedPipeline {

    /** What the pipeline is doing now. */
    enum State {
        STARTING,
        RUNNING,
        /** Failed; waiting out the backoff before the next attempt. */
        RESTARTING,
        STOPPING,
        PAUSED,
        /** Every source was bounded and has ended. */
        COMPLETED,
        /** Failed more often in a row than its restart policy allows; {@code resume} tries again. */
        FAILED
    }

    /** Claims what a run writes against the service's other pipelines, or throws InvalidPipelineException. */
    interface FileClaimer {
        void claim(HostedPipeline pipeline, Map<Path, String> writes);
    }

    /**
     * Key, in the pipeline's own namespace of the state DB, of the version whose run completed: a
     * restarted service leaves that version completed instead of running it again (a bounded
     * file source starts over, so a webhook got every row twice and a file was rewritten).
     */
    static final String COMPLETED_VERSION = "service/completed_version";

    /** How long past the checkpoint timeout a stop may take before it is reported as stuck. */
    private static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final String name;
    private final Path file;
    private final StateStore store;
    private final StageTypes types;
    private final PipelineLog log;
    private final FileClaimer fileClaimer;
    /** Set by {@link #stop}: the user's request. */
    private final AtomicBoolean stop = new AtomicBoolean();
    /** The flag the current run's lanes watch; the runtime also sets it when a lane fails. */
    private volatile AtomicBoolean runStop = new AtomicBoolean();

    private final Object backoff = new Object();

    private volatile PipelineDefinition definition;
    private volatile State state = State.PAUSED;
    private volatile RunStats stats;
    /** The last run's meters: kept after it ends (a bounded run's totals), replaced by the next run's. */
    private PipelineMetrics metrics;
    /** The lanes while they run, for their sources' lag; null otherwise. */
    private volatile Lanes runningLanes;

    private volatile RestartPolicy policy = RestartPolicy.DEFAULT;
    private volatile Duration checkpointTimeout = Duration.ofSeconds(60);
    private volatile int lanes;
    private volatile int restarts;
    /** Null until known: from an apply, a run, or the service asking (PipelineService.filesOf). */
    private volatile Map<Path, String> claimedFiles;

    private volatile String lastError;
    private volatile Instant lastErrorAt;
    private volatile Instant startedAt;
    private volatile double rowsPerSecond;
    /** The finished run's length as {@code sluice run} reports it (from assembly to the end); -1 while running. */
    private volatile double finishedSeconds = -1;

    private long sampledAtNanos;
    private long sampledRows;
    private Thread supervisor;

    HostedPipeline(
            PipelineDefinition definition,
            Path file,
            StateStore store,
            StageTypes types,
            PipelineLog log,
            FileClaimer fileClaimer) {
        this.name = definition.name();
        this.fileClaimer = fileClaimer;
        this.file = file;
        this.store = store;
        this.types = types;
        this.log = log;
        define(definition);
    }

    /** The files this pipeline writes, each with its node: from its last apply or run; null before either. */
    Map<Path, String> claimedFiles() {
        return claimedFiles;
    }

    void claimFiles(Map<Path, String> files) {
        claimedFiles = Map.copyOf(files);
    }

    /** Takes a new definition; applies at the next {@link #start}. */
    void define(PipelineDefinition definition) {
        this.definition = definition;
        log.maskWith(Secrets.of(definition.yaml(), file));
    }

    /** Whether the run of this version completed before (the service restarted since). */
    boolean completedBefore() {
        return store.get(name, COMPLETED_VERSION)
                .map(row -> row.data().equals(Long.toString(definition.version())))
                .orElse(false);
    }

    /** Shows the pipeline as completed without running it (see {@link #completedBefore}). */
    void showCompleted() {
        state = State.COMPLETED;
        log.add("version " + definition.version() + " completed before the service restarted: not run again (resume "
                + "runs it again)");
    }

    /** Starts the supervisor (the pipeline must be stopped). */
    void start() {
        if (supervisor != null && supervisor.isAlive()) {
            throw new IllegalStateException("pipeline '" + name + "' is already running");
        }
        store.delete(name, COMPLETED_VERSION);
        stop.set(false);
        state = State.STARTING;
        stats = null;
        finishedSeconds = -1;
        PipelineDefinition running = definition;
        supervisor = Thread.ofPlatform().name("sluice-pipeline-" + name).start(() -> {
            try {
                supervise(running);
            } catch (Throwable e) {
                // Only a fault of the supervisor itself gets here (a pipeline's failures are handled
                // in supervise): the pipeline is left failed, with the reason, rather than silently gone.
                lastError = log.mask(describe(e));
                lastErrorAt = Instant.now();
                state = State.FAILED;
                log.add("supervisor failed: " + lastError);
                if (e instanceof VirtualMachineError fatal) {
                    throw fatal;
                }
            }
        });
    }

    /**
     * Stops the pipeline — its lanes take a final checkpoint, so a later start resumes from
     * there — and waits for it; then it is {@code PAUSED}, unless it had completed or failed.
     *
     * @throws IllegalStateException if it is still stopping after the checkpoint timeout and a grace
     */
    void stop() {
        Thread running = supervisor;
        if (running == null || !running.isAlive()) {
            if (state != State.COMPLETED && state != State.FAILED) {
                state = State.PAUSED;
            }
            return;
        }
        state = State.STOPPING;
        stop.set(true);
        runStop.set(true);
        synchronized (backoff) {
            backoff.notifyAll();
        }
        try {
            running.join(checkpointTimeout.plus(STOP_GRACE));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (running.isAlive()) {
            throw new IllegalStateException("pipeline '" + name + "' did not stop within "
                    + checkpointTimeout.plus(STOP_GRACE).toSeconds() + " s (a stage does not return)");
        }
        // The supervisor may have set RUNNING after STOPPING was set; it is gone now.
        if (state != State.COMPLETED && state != State.FAILED) {
            state = State.PAUSED;
        }
    }

    private void supervise(PipelineDefinition running) {
        int failuresInARow = 0;
        boolean fileTaken = false;
        while (!stop.get()) {
            Pipeline pipeline = null;
            Lanes all = null;
            Inspections.Registration inspection = null;
            try {
                PipelineSpec spec = Preprocessors.parse(running.yaml(), file);
                pipeline = Pipeline.assemble(spec, types, StatePositionStore.in(store, name));
                fileClaimer.claim(this, pipeline.writtenFiles());
                policy = pipeline.restartPolicy();
                checkpointTimeout = pipeline.checkpointSettings().timeout();
                stats = pipeline.stats();
                all = Lanes.of(pipeline, types);
                all.start();
                lanes = all.count();
                runningLanes = all;
                Metrics.unregister(metrics);
                metrics = Metrics.register(name, pipeline.stats(), this::lag);
                inspection =
                        Inspections.register(new Inspections.View(name, pipeline.graph(), pipeline.stats(), this::lag));
                startedAt = Instant.now();
                state = State.RUNNING;
                log.add("running version " + running.version() + (lanes > 1 ? " on " + lanes + " lanes" : ""));
                Progress progress = new Progress(name, pipeline.stats(), log.stream(), false);
                AtomicBoolean lanesStop = new AtomicBoolean();
                runStop = lanesStop;
                if (stop.get()) {
                    lanesStop.set(true); // stop() came before the flag was published
                }
                PipelineRunner.Outcome outcome = all.run(lanesStop, progress);
                finishedSeconds = pipeline.stats().elapsedSeconds();
                progress.summary(outcome == PipelineRunner.Outcome.COMPLETED ? "completed" : "stopped");
                if (outcome == PipelineRunner.Outcome.COMPLETED) {
                    store.put(name, COMPLETED_VERSION, Long.toString(running.version()));
                    state = State.COMPLETED;
                }
                return;
            } catch (Exception | LinkageError | AssertionError e) {
                lastError = log.mask(describe(e));
                lastErrorAt = Instant.now();
                log.add("failed: " + lastError);
                // Another pipeline writes its file: a restart would meet the same.
                fileTaken = e instanceof InvalidPipelineException;
                // A run that got a checkpoint done made progress: the count starts again.
                if (stats != null && stats.checkpoints().completed() > 0) {
                    failuresInARow = 0;
                }
                failuresInARow++;
            } finally {
                runningLanes = null;
                if (inspection != null) {
                    inspection.close();
                }
                closeQuietly(all, pipeline);
            }
            if (stop.get()) {
                return;
            }
            if (fileTaken) {
                state = State.FAILED;
                log.add("not restarting: another pipeline writes its file (resume once it is free)");
                return;
            }
            if (failuresInARow > policy.maxAttempts()) {
                state = State.FAILED;
                log.add("failed " + failuresInARow + " times in a row; restart.max_attempts is " + policy.maxAttempts()
                        + ": not restarting (resume to try again)");
                return;
            }
            Duration delay = policy.delayBefore(failuresInARow);
            state = State.RESTARTING;
            restarts++;
            log.add("restarting from the last checkpoint in " + delay.toMillis() + " ms (attempt " + failuresInARow
                    + " of " + policy.maxAttempts() + ")");
            awaitBackoff(delay);
        }
    }

    private void awaitBackoff(Duration delay) {
        long deadline = System.nanoTime() + delay.toNanos();
        synchronized (backoff) {
            long left;
            while (!stop.get() && (left = deadline - System.nanoTime()) > 0) {
                try {
                    backoff.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void closeQuietly(Lanes all, Pipeline pipeline) {
        try {
            if (all != null) {
                all.close();
            } else if (pipeline != null) {
                pipeline.close();
            }
        } catch (Exception | LinkageError | AssertionError e) {
            log.add("error while closing: " + log.mask(describe(e)));
        }
    }

    /** One line per problem: configuration problems as {@code file:line:col: node: reason}. */
    static String describe(Throwable e) {
        if (e instanceof ConfigException config) {
            return config.problems().stream().map(Throwable::getMessage).collect(Collectors.joining("; "));
        }
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    /** The sources' lag while the pipeline runs; none otherwise. */
    private Map<String, Map<String, Long>> lag() {
        Lanes lanesNow = runningLanes;
        return lanesNow == null ? Map.of() : lanesNow.lag();
    }

    /** Removes the pipeline's meters (it is deleted); the supervisor must be stopped. */
    void forgetMetrics() {
        Metrics.unregister(metrics);
        metrics = null;
    }

    /** Updates rows/s from the input counter; the service calls it about once a second. */
    synchronized void sample() {
        RunStats current = stats;
        long now = System.nanoTime();
        long rows = current == null ? 0 : current.recordsIn();
        if (sampledAtNanos != 0 && now > sampledAtNanos) {
            long delta = rows - sampledRows;
            rowsPerSecond = delta < 0 ? 0 : delta * 1e9 / (now - sampledAtNanos);
        }
        sampledAtNanos = now;
        sampledRows = rows;
    }

    String name() {
        return name;
    }

    PipelineDefinition definition() {
        return definition;
    }

    State state() {
        return state;
    }

    PipelineLog log() {
        return log;
    }

    /** The status as the API shows it (every text masked). */
    PipelineStatus status() {
        RunStats current = stats;
        PipelineDefinition defined = definition;
        boolean live = state == State.RUNNING || state == State.STOPPING;
        return new PipelineStatus(
                name,
                state.name().toLowerCase(java.util.Locale.ROOT),
                defined.version(),
                defined.digest(),
                defined.appliedAt(),
                startedAt,
                lanes,
                current == null ? 0 : current.recordsIn(),
                current == null ? 0 : current.recordsOut(),
                current == null ? 0 : current.rejected(),
                live ? rowsPerSecond : 0,
                finishedSeconds >= 0 ? finishedSeconds : current == null ? 0 : current.elapsedSeconds(),
                current == null ? 0 : current.checkpoints().lastEpoch(),
                current == null || current.checkpoints().lastAtMillis() == 0
                        ? null
                        : Instant.ofEpochMilli(current.checkpoints().lastAtMillis()),
                lastError,
                lastErrorAt,
                restarts,
                policy,
                lag());
    }
}
