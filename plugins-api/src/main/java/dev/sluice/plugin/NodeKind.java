package dev.sluice.plugin;

import java.util.Optional;

/** The three kinds of pipeline node, each declared in its own top-level block of the pipeline file. */
public enum NodeKind {
    /** Brings data into the pipeline; declared under {@code sources}. */
    SOURCE("sources", "source"),
    /** Derives data from other nodes (e.g. SQL); declared under {@code transforms}. */
    TRANSFORM("transforms", "transform"),
    /** Writes data out of the pipeline; declared under {@code sinks}. */
    SINK("sinks", "sink");

    private final String blockName;
    private final String word;

    NodeKind(String blockName, String word) {
        this.blockName = blockName;
        this.word = word;
    }

    /** The top-level YAML key that holds nodes of this kind, e.g. {@code sources}. */
    public String blockName() {
        return blockName;
    }

    /** The singular word used in messages, e.g. {@code source}. */
    public String word() {
        return word;
    }

    /** The kind whose block is named {@code blockName}, if any. */
    public static Optional<NodeKind> fromBlockName(String blockName) {
        for (NodeKind kind : values()) {
            if (kind.blockName.equals(blockName)) {
                return Optional.of(kind);
            }
        }
        return Optional.empty();
    }
}
