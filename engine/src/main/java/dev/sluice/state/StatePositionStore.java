package dev.sluice.state;

import dev.sluice.runtime.PositionStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Positions in the state DB: namespace = the pipeline's name, key =
 * {@code source/<node>/<position key>}, data = the position as JSON (e.g. {@code
 * {"offset": 42, "epoch": 7}}); sinks', dead letters' and dynamic tables' under their own
 * prefixes ({@link #prefixOf}). All positions of an epoch are written in one synced batch, so
 * a crash leaves either the previous epoch or this one.
 */
public final class StatePositionStore implements PositionStore {

    private static final String PREFIX = "source/";
    /** The position-store name of a dynamic table's checkpoint (runtime.DynamicTables). */
    private static final String TABLE_NODE = "table:";

    private final StateStore store;
    private final String pipeline;
    private final boolean owner;

    private StatePositionStore(StateStore store, String pipeline, boolean owner) {
        this.store = store;
        this.pipeline = pipeline;
        this.owner = owner;
    }

    /** A view for another lane of the same run, over the same DB; closing it leaves the DB open. */
    @Override
    public StatePositionStore forAnotherLane() {
        return new StatePositionStore(store, pipeline, false);
    }

    /** Opens (creating) the state DB in {@code dir} for pipeline {@code pipeline}; fails if another run holds it. */
    public static StatePositionStore open(Path dir, String pipeline) {
        return new StatePositionStore(StateStore.open(dir), pipeline, true);
    }

    /**
     * The positions of pipeline {@code pipeline} in a state DB shared with other pipelines (the
     * service's): its rows are in the pipeline's own namespace; closing this leaves the DB open.
     */
    public static StatePositionStore in(StateStore store, String pipeline) {
        return new StatePositionStore(store, pipeline, false);
    }

    /**
     * Where a "node"'s rows live: a source's under {@code source/<node>/}, a dynamic table's
     * checkpoint ("node" {@code table:<name>}) under {@code table/<name>/}, a sink's
     * ({@code sink:<node>}) under {@code sink/<node>/}, a dead letter's ({@code dead-letter:<node>})
     * under {@code dead-letter/<node>/}.
     */
    private static String prefixOf(String node) {
        for (String kind : List.of(TABLE_NODE, PositionStore.SINK, PositionStore.DEAD_LETTER)) {
            if (node.startsWith(kind)) {
                return kind.substring(0, kind.length() - 1) + "/" + node.substring(kind.length()) + "/";
            }
        }
        return PREFIX + node + "/";
    }

    @Override
    public Map<String, String> load(String node) {
        String prefix = prefixOf(node);
        Map<String, String> positions = new HashMap<>();
        for (StateRow row : store.scan(pipeline, prefix)) {
            positions.put(row.key().substring(prefix.length()), row.data());
        }
        return positions;
    }

    @Override
    public void save(long epoch, Map<String, Map<String, String>> positionsByNode) {
        List<StateRow> rows = new ArrayList<>();
        positionsByNode.forEach((node, positions) ->
                positions.forEach((key, json) -> rows.add(StateRow.of(pipeline, prefixOf(node) + key, json))));
        if (!rows.isEmpty()) {
            store.putAll(rows);
        }
    }

    @Override
    public void close() {
        if (owner) {
            store.close();
        }
    }
}
