package dev.sluice.runtime;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.observe.NodeStats;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Delivery;
import dev.sluice.plugin.ErrorPolicy;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.StageCounter;
import dev.sluice.pluginhost.PipelinePlugins;
import dev.sluice.pluginhost.PluginContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/** The {@link StageContext} of one node: its names, its allocator and its error policy. */
final class NodeContext implements StageContext, PluginContext {

    private final String node;
    private final String pipeline;
    private final Path directory;
    private final BufferAllocator allocator;
    private final NodeStats stats;
    private final ErrorPolicy policy;
    private final DeadLetterFile deadLetter;
    private final Map<String, String> restored;
    private final PipelinePlugins plugins;
    private final List<String> inputs;
    private final Delivery delivery;
    private final Duration checkpointInterval;
    private final LaneShared laneShared;
    private Runnable checkpointRequester = () -> {};
    private final List<CompletableFuture<Void>> checks = new ArrayList<>();

    NodeContext(
            String node,
            String pipeline,
            Path directory,
            BufferAllocator allocator,
            NodeStats stats,
            ErrorPolicy policy,
            DeadLetterFile deadLetter,
            Map<String, String> restored,
            PipelinePlugins plugins,
            List<String> inputs,
            Delivery delivery,
            Duration checkpointInterval,
            LaneShared laneShared) {
        this.node = node;
        this.pipeline = pipeline;
        this.directory = directory;
        this.allocator = allocator;
        this.stats = stats;
        this.policy = policy;
        this.deadLetter = deadLetter;
        this.restored = Map.copyOf(restored);
        this.plugins = plugins;
        this.inputs = List.copyOf(inputs);
        this.delivery = delivery;
        this.checkpointInterval = checkpointInterval;
        this.laneShared = laneShared;
    }

    /** Names of the form StageContext.counter asks for; the first part not one of Sluice's own. */
    private static final java.util.regex.Pattern COUNTER_NAME = java.util.regex.Pattern.compile(
            "(?!(node|checkpoints?|source|sink|table)\\.)[a-z][a-z0-9]*(\\.[a-z][a-z0-9]*)+");

    @Override
    public StageCounter counter(String name, String description, Map<String, String> tags) {
        if (!COUNTER_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("node '" + node + "': '" + name + "' cannot name a counter: use two or "
                    + "more dot-separated parts of lowercase letters and digits, not starting with node, checkpoints, "
                    + "source, sink or table");
        }
        for (String tag : tags.keySet()) {
            if (tag.equals("pipeline") || tag.equals("node") || !tag.matches("[a-z][a-z0-9_]*")) {
                throw new IllegalArgumentException(
                        "node '" + node + "': counter " + name + " cannot have tag '" + tag + "'");
            }
        }
        return stats.stageCount(name, description, tags)::add;
    }

    /** The lane's shared objects (kept by its {@link Pipeline}). */
    interface LaneShared {
        <T extends AutoCloseable> T get(String key, Class<T> type, Supplier<T> create);
    }

    @Override
    public Delivery delivery() {
        return delivery;
    }

    @Override
    public Duration checkpointInterval() {
        return checkpointInterval;
    }

    @Override
    public <T extends AutoCloseable> T laneShared(String key, Class<T> type, Supplier<T> create) {
        return laneShared.get(key, type, create);
    }

    @Override
    public List<String> inputNames() {
        return inputs;
    }

    @Override
    public PipelinePlugins plugins() {
        return plugins;
    }

    @Override
    public Map<String, String> restoredPositions() {
        return restored;
    }

    @Override
    public void requestCheckpoint() {
        checkpointRequester.run();
    }

    @Override
    public void checkWhileOpening(Runnable check) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        // A platform daemon thread: a check that hangs past its own timeout must not keep the JVM up.
        Thread thread = new Thread(
                () -> {
                    try {
                        check.run();
                        done.complete(null);
                    } catch (Throwable e) {
                        done.completeExceptionally(e);
                    }
                },
                "sluice-check-" + node);
        thread.setDaemon(true);
        thread.start();
        checks.add(done);
    }

    /** Waits for the checks started by {@link #checkWhileOpening}; rethrows the first failure as it was thrown. */
    void awaitChecks() throws Exception {
        for (CompletableFuture<Void> check : checks) {
            try {
                check.get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Exception cause) {
                    throw cause;
                }
                throw e;
            }
        }
        checks.clear();
    }

    void onCheckpointRequest(Runnable requester) {
        this.checkpointRequester = requester;
    }

    @Override
    public String nodeName() {
        return node;
    }

    @Override
    public String pipelineName() {
        return pipeline;
    }

    @Override
    public Path pipelineDirectory() {
        return directory;
    }

    @Override
    public BufferAllocator allocator() {
        return allocator;
    }

    DeadLetterFile deadLetter() {
        return deadLetter;
    }

    @Override
    public Batch batchOf(VectorSchemaRoot root) {
        return NativeBatch.fromVectors(allocator, root);
    }

    @Override
    public void skipped(long position) {
        stats.addSkipped();
    }

    @Override
    public void reject(long position, byte[] record, String error) {
        switch (policy) {
            case FAIL -> throw new RecordRejectedException(node, position, error);
            case SKIP -> stats.addRejected();
            case DEAD_LETTER -> {
                try {
                    deadLetter.write(node, position, record, error);
                } catch (IOException e) {
                    throw new UncheckedIOException(
                            "cannot write the dead letter " + deadLetter.path() + ": " + e.getMessage(), e);
                }
                stats.addRejected();
            }
        }
    }
}
