package dev.sluice.plugin;

import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * One kind of node a pipeline file can name with {@code type:}: its settings (used to check the
 * file and to generate the reference docs), how to create the stage, and what the engine may do
 * with it. Built-in connectors and plugins are registered the same way: a public class with a
 * public no-argument constructor, listed in {@code META-INF/services/dev.sluice.plugin.StageType}
 * of its JAR, found with {@link java.util.ServiceLoader}.
 *
 * <p>When each method is called: the engine reads {@link #spiVersion}, {@link #kind}, {@link #name},
 * {@link #doc} and {@link #config} once, when it registers the type at startup. For every node of
 * a pipeline that names the type it calls {@link #prepare}, then (after checking the node's
 * settings against {@link #config}) {@link #inputs}, {@link #supportsLanes} and
 * {@link #outputFile}, then {@link #create} once per node and lane, and then the stage's own
 * lifecycle ({@code open}, {@code start}, batches, {@code close}; see {@link Source},
 * {@link Transform}, {@link Sink}). Implementations must be stateless and thread-safe: one
 * instance serves every pipeline.
 */
public interface StageType {

    /**
     * The major version of this SPI. It changes when a change to it breaks stage types built
     * against an earlier version; the engine refuses a type whose {@link #spiVersion} differs.
     */
    int SPI_VERSION = 1;

    /**
     * The SPI version this type was built against. Implement it as {@code return SPI_VERSION;}:
     * the compiler copies the constant into the implementing class, so the value is the version of
     * the {@code plugins-api} it was compiled with, not the one it runs with.
     */
    int spiVersion();

    /** Whether the type makes sources, transforms or sinks. */
    NodeKind kind();

    /** The value of {@code type:} that selects this stage type; unique within its kind. */
    String name();

    /** One paragraph for the configuration reference (Markdown). */
    String doc();

    /** The settings a node of this type takes; the same instance every call. */
    ConfigDef config();

    /**
     * Creates the stage of one node (of one lane): a {@link Source}, {@link Transform} or
     * {@link Sink} according to {@link #kind()}. Should only keep the settings; checks that
     * touch files or the network belong in the stage's {@code open} and {@code start}.
     *
     * @param settings the node's settings, checked against {@link #config()}
     */
    AutoCloseable create(Settings settings);

    /**
     * Called as soon as a pipeline names this type, before its nodes are configured, once per
     * node (so it must be idempotent): a type starts slow one-time initialization here, in the
     * background, to shorten the way to the first record. Default: nothing.
     */
    default void prepare() {}

    /**
     * The upstream node names this node reads (transforms and sinks). Default: its {@code from:}.
     * A type whose inputs follow from its settings (as SQL names its tables) derives them here;
     * throw {@link InvalidSettingException} naming the setting at fault if they cannot be derived.
     *
     * @param from the node's {@code from:} names, in order; empty if it has none
     */
    default List<String> inputs(List<String> from, Settings settings) {
        return from;
    }

    /**
     * Whether a node of this type may be copied once per lane, each copy on its own thread
     * ({@code parallelism} &gt; 1 on some source runs a full copy of the pipeline per lane). A
     * source that says yes shares its work between the copies (as Kafka consumers in one group do)
     * and defines {@link StandardKeys#PARALLELISM}, whose value asks for the lanes; a sink that
     * says yes may be written from several copies at once. Default: no.
     */
    default boolean supportsLanes() {
        return false;
    }

    /**
     * Whether a source or sink of this type can take part in {@code delivery: exactly_once}
     * ({@link Delivery#EXACTLY_ONCE}): a source whose positions can be committed atomically with
     * the sinks' writes of an epoch, or a sink whose writes of an epoch become visible atomically
     * when the epoch is finalized ({@link Sink#onCheckpointComplete}) and are discarded if it never
     * is. Validation refuses the mode for a pipeline with a source or sink that says no.
     * Transforms need not declare it: a replayed epoch's output is never made visible twice.
     * Default: no.
     */
    default boolean supportsExactlyOnce() {
        return false;
    }

    /**
     * Whether a source of this type that has positions from an earlier run makes the run resume
     * (sinks and dead letters continue their files, dynamic tables come back). A source that says
     * no (a file source) records positions too, but a run resumes them only beside one that says
     * yes: a pipeline of such sources alone starts over each run and replaces its output, while
     * beside a Kafka source it goes on where the checkpoint left it instead of emitting its input
     * again. Default: yes.
     */
    default boolean positionsResumeARun() {
        return true;
    }

    /**
     * The local file a sink writes, if it writes one: dead letters of the pipeline's nodes go next to
     * the first such file unless set otherwise. Default: none.
     */
    default Optional<Path> outputFile(Settings settings) {
        return Optional.empty();
    }
}
