package dev.sluice.service;

import dev.sluice.config.ConfigException;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.Secrets;
import dev.sluice.config.StageTypes;
import dev.sluice.pluginhost.Preprocessors;
import dev.sluice.runtime.FileClaims;
import dev.sluice.runtime.Pipeline;
import dev.sluice.state.StateStore;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * The pipelines one service hosts, and the operations on them: apply, pause, resume, delete,
 * status. Definitions and their lifecycle state are in the service's state DB, so a restarted
 * service resumes what was running (from each pipeline's last finalized checkpoint) and keeps
 * paused pipelines paused. Operations on one pipeline are serialized — never interleaved —
 * while different pipelines do not wait for each other.
 */
public final class PipelineService implements AutoCloseable {

    /** Pipeline names: they name state namespaces, consumer groups and URLs. */
    static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

    /** What an apply did. */
    public enum Applied {
        CREATED,
        UPDATED,
        UNCHANGED
    }

    private final StateStore store;
    private final DefinitionStore definitions;
    private final StageTypes types;
    private final Path baseDir;
    private final PrintStream echo;
    private final Map<String, HostedPipeline> pipelines = new ConcurrentSkipListMap<>();
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    /** Held while a definition's files are checked against the other pipelines' and claimed. */
    private final Object fileClaims = new Object();

    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(
            runnable -> Thread.ofPlatform().daemon().name("sluice-rates").unstarted(runnable));
    private volatile boolean ready;

    /**
     * A service over the open state DB {@code store} (it closes it); relative paths in the
     * definitions resolve against {@code baseDir}; pipelines' log lines are echoed to {@code echo}, or logged
     * (observe.Logs) when it is null.
     */
    public PipelineService(StateStore store, StageTypes types, Path baseDir, PrintStream echo) {
        this.store = store;
        this.definitions = new DefinitionStore(store);
        this.types = types;
        this.baseDir = baseDir;
        this.echo = echo;
    }

    /** Starts every pipeline that was running when the service last stopped; then it is ready. */
    public void boot() {
        boot(() -> true);
    }

    /**
     * As {@link #boot()}, then runs {@code initial} (e.g. applying a directory of pipelines); the
     * service is ready only if it returns true.
     */
    public boolean boot(BooleanSupplier initial) {
        for (PipelineDefinition definition : definitions.loadAll()) {
            HostedPipeline pipeline = host(definition);
            if (definition.paused()) {
                continue;
            }
            if (pipeline.completedBefore()) {
                pipeline.showCompleted();
            } else {
                pipeline.start();
            }
        }
        sampler.scheduleAtFixedRate(() -> pipelines.values().forEach(HostedPipeline::sample), 0, 1, TimeUnit.SECONDS);
        ready = initial.getAsBoolean();
        return ready;
    }

    /** Whether {@link #boot} has started (and applied) what it should (the readiness probe). */
    public boolean ready() {
        return ready;
    }

    /**
     * Creates or updates pipeline {@code name} from {@code yaml}, validated first. An identical
     * text changes nothing; a changed one stops the running pipeline at a checkpoint and starts
     * the new version from it. A paused pipeline stays paused with the new version.
     *
     * @throws InvalidPipelineException if the name or the definition is not valid
     */
    public Applied apply(String name, String yaml) {
        checkName(name);
        synchronized (lockOf(name)) {
            HostedPipeline existing = pipelines.get(name);
            if (existing != null && existing.definition().yaml().equals(yaml)) {
                return Applied.UNCHANGED;
            }
            Map<Path, String> writes = validate(name, yaml);
            PipelineDefinition definition = new PipelineDefinition(
                    name,
                    yaml,
                    existing == null ? 1 : existing.definition().version() + 1,
                    existing != null && existing.definition().paused(),
                    Instant.now());
            if (existing == null) {
                HostedPipeline created;
                synchronized (fileClaims) { // checked and claimed at once: two applies cannot both pass
                    refuseFilesOfOthers(name, writes);
                    definitions.save(definition);
                    created = host(definition);
                    created.claimFiles(writes);
                }
                created.start();
                return Applied.CREATED;
            }
            synchronized (fileClaims) {
                refuseFilesOfOthers(name, writes);
                existing.claimFiles(writes);
            }
            boolean wasRunning = !definition.paused();
            existing.stop();
            definitions.save(definition);
            existing.define(definition);
            existing.log().add("applied version " + definition.version());
            if (wasRunning) {
                existing.start();
            }
            return Applied.UPDATED;
        }
    }

    /**
     * Refuses a definition that would write a file another hosted pipeline writes: relative paths
     * of all pipelines resolve against one base directory, so two pipelines' {@code path:
     * out.jsonl} are one file.
     */
    private void refuseFilesOfOthers(String name, Map<Path, String> writes) {
        List<String> problems = new ArrayList<>();
        for (HostedPipeline other : pipelines.values()) {
            if (other.name().equals(name)) {
                continue;
            }
            filesOf(other)
                    .forEach((theirs, theirNode) -> writes.forEach((file, node) -> {
                        if (FileClaims.overlapping(file, theirs)) {
                            problems.add(fileOf(name) + ": node '" + node + "' writes " + file + ", which pipeline '"
                                    + other.name() + "' (node '" + theirNode + "') writes"
                                    + (file.equals(theirs) ? "" : " as " + theirs + " (one inside the other)")
                                    + " too: each would replace the other's rows; give each its own file (a dead letter: "
                                    + "set dead_letter:)");
                        }
                    }));
        }
        if (!problems.isEmpty()) {
            throw new InvalidPipelineException(problems);
        }
    }

    /** Final checkpoint, stop, keep the state; a paused pipeline stays paused across restarts. */
    public PipelineStatus pause(String name) {
        synchronized (lockOf(name)) {
            HostedPipeline pipeline = existing(name);
            if (!pipeline.definition().paused()) {
                PipelineDefinition paused = pipeline.definition().withPaused(true);
                definitions.save(paused);
                pipeline.define(paused);
            }
            pipeline.stop();
            pipeline.log().add("paused");
            return pipeline.status();
        }
    }

    /** Starts a paused (or failed, or completed) pipeline from its last checkpoint. */
    public PipelineStatus resume(String name) {
        synchronized (lockOf(name)) {
            HostedPipeline pipeline = existing(name);
            HostedPipeline.State state = pipeline.state();
            boolean stopped = state == HostedPipeline.State.PAUSED
                    || state == HostedPipeline.State.FAILED
                    || state == HostedPipeline.State.COMPLETED;
            if (pipeline.definition().paused()) {
                PipelineDefinition running = pipeline.definition().withPaused(false);
                definitions.save(running);
                pipeline.define(running);
            }
            if (stopped) {
                pipeline.log().add("resuming");
                pipeline.start();
            }
            return pipeline.status();
        }
    }

    /** Stops the pipeline and drops its definition and state (its checkpointed positions). */
    public void delete(String name) {
        synchronized (lockOf(name)) {
            HostedPipeline pipeline = existing(name);
            pipeline.stop();
            pipeline.forgetMetrics();
            definitions.delete(name);
            pipelines.remove(name);
            pipeline.log().add("deleted");
        }
    }

    public PipelineStatus status(String name) {
        return existing(name).status();
    }

    /** Every pipeline's status, by name. */
    public List<PipelineStatus> list() {
        List<PipelineStatus> all = new ArrayList<>();
        pipelines.values().forEach(pipeline -> all.add(pipeline.status()));
        return all;
    }

    /** The pipeline's kept log lines numbered above {@code since}. */
    public List<PipelineLog.Line> logs(String name, long since) {
        return existing(name).log().since(since);
    }

    /**
     * Stops every pipeline (each takes its final checkpoint) without changing what should run:
     * the next start of the service resumes the same ones. Then closes the state DB.
     */
    @Override
    public void close() {
        ready = false;
        sampler.shutdownNow();
        List<Thread> stopping = new ArrayList<>();
        for (HostedPipeline pipeline : pipelines.values()) {
            stopping.add(Thread.ofPlatform()
                    .name("sluice-stop-" + pipeline.name())
                    .start(() -> {
                        synchronized (lockOf(pipeline.name())) {
                            try {
                                pipeline.stop();
                            } catch (RuntimeException e) {
                                if (echo != null) {
                                    echo.println("[" + pipeline.name() + "] " + e.getMessage());
                                } else {
                                    dev.sluice.observe.Logs.log(
                                            ch.qos.logback.classic.Level.ERROR, pipeline.name(), null, e.getMessage());
                                }
                            }
                        }
                    }));
        }
        for (Thread thread : stopping) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        store.close();
    }

    private HostedPipeline host(PipelineDefinition definition) {
        HostedPipeline pipeline = new HostedPipeline(
                definition,
                fileOf(definition.name()),
                store,
                types,
                new PipelineLog(definition.name(), echo),
                this::claimForRun);
        pipelines.put(definition.name(), pipeline);
        return pipeline;
    }

    /**
     * The files {@code other} writes. A pipeline hosted at boot claims them when it first runs; one
     * that stayed paused claims them here, from its definition. A definition that cannot be
     * planned now (a file it reads is missing) claims nothing yet: its start checks again
     * ({@link #claimForRun}). Called holding {@link #fileClaims}.
     */
    private Map<Path, String> filesOf(HostedPipeline other) {
        Map<Path, String> claimed = other.claimedFiles();
        if (claimed == null) {
            try {
                claimed = validate(other.name(), other.definition().yaml());
                other.claimFiles(claimed);
            } catch (InvalidPipelineException e) {
                other.log()
                        .add("its files could not be told (" + String.join("; ", e.problems())
                                + "); they are checked against the other pipelines' when it starts");
                return Map.of();
            }
        }
        return claimed;
    }

    /**
     * Claims what a pipeline about to run writes, refusing files another pipeline writes: the
     * last word for a pipeline whose files were not known when the other was applied.
     */
    private void claimForRun(HostedPipeline pipeline, Map<Path, String> writes) {
        synchronized (fileClaims) {
            refuseFilesOfOthers(pipeline.name(), writes);
            pipeline.claimFiles(writes);
        }
    }

    /** Where a definition's messages say it is, and what its relative paths are relative to. */
    private Path fileOf(String name) {
        return baseDir.resolve(name + ".yaml");
    }

    /**
     * As {@code sluice validate}: checks the config and plans the SQL, without running.
     *
     * @return the files the pipeline writes, each with its node
     */
    private Map<Path, String> validate(String name, String yaml) {
        Path file = fileOf(name);
        Secrets secrets = Secrets.of(yaml, file);
        try {
            PipelineSpec spec = Preprocessors.parse(yaml, file);
            if (!spec.name().equals(name)) {
                throw new InvalidPipelineException(List.of(file + ": the pipeline is named '"
                        + secrets.apply(spec.name()) + "' in its file but applied as '" + name
                        + "'; use the same name (or leave 'name' out)"));
            }
            try (Pipeline pipeline = Pipeline.assemble(spec, types)) {
                return pipeline.writtenFiles();
            }
        } catch (ConfigException e) {
            throw new InvalidPipelineException(e.problems().stream()
                    .map(problem -> secrets.apply(problem.getMessage()))
                    .toList());
        } catch (InvalidPipelineException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new InvalidPipelineException(List.of(file + ": " + secrets.apply(HostedPipeline.describe(e))));
        }
    }

    private static void checkName(String name) {
        if (!NAME.matcher(name).matches()) {
            throw new InvalidPipelineException(List.of("'" + name + "' is not a valid pipeline name: use 1 to 63"
                    + " lowercase letters, digits, '-' and '_', starting with a letter or digit"));
        }
    }

    private HostedPipeline existing(String name) {
        HostedPipeline pipeline = pipelines.get(name);
        if (pipeline == null) {
            throw new PipelineNotFoundException(name);
        }
        return pipeline;
    }

    private Object lockOf(String name) {
        return locks.computeIfAbsent(name, key -> new Object());
    }
}
