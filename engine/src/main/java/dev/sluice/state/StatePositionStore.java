package dev.sluice.state;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
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
    /** The row naming the pipeline file whose checkpoints the DB holds ({@link #claimFor}). */
    private static final String OWNER = "owner/file";

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
     * Claims the DB for pipeline file {@code file} (as the user names it: relative to the working
     * directory, like the default state directory). Pipelines are told apart by name, so two
     * files with one {@code name:} run from one directory meet in one DB: one holding sources'
     * positions or a dynamic table's checkpoint that another file saved is refused, since
     * resuming them would skip what that file's pipeline read — unless {@code adopt} (the user
     * named the directory: a pipeline file moved or renamed). Sinks' and dead letters' rows alone
     * are no reason: they follow their sources (a run whose sources resume nothing starts its
     * files over) and their own paths; nor are positions marked {@link PositionStore#FOLLOWS}
     * (a file source's, which resume a run only beside a source that resumes). A DB from before
     * owners were recorded is taken over. On refusal the DB is closed.
     *
     * @return this
     * @throws StateOwnedElsewhereException if another file's checkpoints are here and not {@code adopt}
     */
    public StatePositionStore claimFor(String file, boolean adopt) {
        String owner =
                store.get(pipeline, OWNER).map(row -> ownerIn(row.data())).orElse(null);
        if (file.equals(owner)) {
            return this;
        }
        String held = owner == null || adopt ? null : checkpointsHeld();
        if (held != null) {
            close();
            throw new StateOwnedElsewhereException("pipeline '" + pipeline + "': the state DB " + store.directory()
                    + " holds the checkpoints of " + held + " that " + owner + ", another pipeline file named '"
                    + pipeline + "', saved; resuming them would skip what that pipeline read. Give " + file
                    + " a name of its own (name:) or pass --state-dir DIR; if " + owner + " was moved or renamed to "
                    + file + ", pass --state-dir " + store.directory() + " to continue its checkpoints");
        }
        store.put(
                pipeline,
                OWNER,
                OBJECT_MAPPER.createObjectNode().put("file", file).toString());
        return this;
    }

    /**
     * The first source whose positions the DB holds, unmarked {@link PositionStore#FOLLOWS}
     * ("source 'x'"), else "its dynamic tables" if any, else null.
     */
    private String checkpointsHeld() {
        List<StateRow> rows = store.scan(pipeline, PREFIX);
        java.util.Set<String> following = new java.util.HashSet<>();
        for (StateRow row : rows) {
            if (row.key().endsWith("/" + PositionStore.FOLLOWS)) {
                following.add(sourceOf(row.key()));
            }
        }
        for (StateRow row : rows) {
            if (!following.contains(sourceOf(row.key()))) {
                return "source '" + sourceOf(row.key()) + "'";
            }
        }
        return store.hasRows(pipeline, "table/") ? "its dynamic tables" : null;
    }

    private static String sourceOf(String key) {
        String rest = key.substring(PREFIX.length());
        return rest.substring(0, Math.max(0, rest.indexOf('/')));
    }

    private static String ownerIn(String json) {
        try {
            return OBJECT_MAPPER.readTree(json).path("file").asText(null);
        } catch (JsonProcessingException e) {
            throw new StateException("the state DB's row " + OWNER + " is not JSON: " + json, e);
        }
    }

    private static final ObjectMapper OBJECT_MAPPER = new ObjectMapper();

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
    public java.util.Set<String> sinksWithPositions() {
        String prefix = "sink/"; // as prefixOf lays sinks out
        java.util.Set<String> sinks = new java.util.TreeSet<>();
        for (StateRow row : store.scan(pipeline, prefix)) {
            int end = row.key().indexOf('/', prefix.length());
            if (end > prefix.length()) {
                sinks.add(row.key().substring(prefix.length(), end));
            }
        }
        return sinks;
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
