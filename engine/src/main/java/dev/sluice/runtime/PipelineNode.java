package dev.sluice.runtime;

import dev.sluice.config.NodeSpec;
import dev.sluice.config.ParsedConfig;
import dev.sluice.observe.NodeStats;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.Source;
import dev.sluice.plugin.StageType;
import dev.sluice.plugin.Transform;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/** A node of an assembled pipeline: its stage, its edges and its counters. */
final class PipelineNode {

    /** An edge to a downstream node, arriving at its input number {@code input}. */
    record Edge(PipelineNode to, int input) {}

    final NodeSpec spec;
    final StageType type;
    final ParsedConfig config;
    final List<String> inputs;
    final List<Edge> downstream = new ArrayList<>();
    AutoCloseable stage;
    Schema schema;
    NodeContext context;
    NodeStats stats;
    Emitter emitter;
    /** A sink's name for its positions in the state DB, one per lane ({@link PositionStore#SINK}). */
    String sinkStateKey;
    /** The dynamic tables this node's output fills ({@link DynamicTables}); usually none. */
    List<DynamicTables.Table> tableFeeds = List.of();

    PipelineNode(NodeSpec spec, StageType type, ParsedConfig config, List<String> inputs) {
        this.spec = spec;
        this.type = type;
        this.config = config;
        this.inputs = List.copyOf(inputs);
    }

    String name() {
        return spec.name();
    }

    NodeKind kind() {
        return spec.kind();
    }

    Source source() {
        return (Source) stage;
    }

    Transform transform() {
        return (Transform) stage;
    }

    Sink sink() {
        return (Sink) stage;
    }
}
