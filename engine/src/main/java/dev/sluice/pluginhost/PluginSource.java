package dev.sluice.pluginhost;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.ffm.plugin.SluiceSource;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Source;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * {@code type: plugin} among the sources: a native plugin's {@code SluiceSource}, adapted to the
 * source SPI. Its batches become native batches without a copy; its snapshot at each barrier is
 * the node's checkpointed position (base64 in the state DB) and goes back to {@code restore} on
 * the next run; {@code commit} follows finalization.
 */
public final class PluginSource extends PluginStage implements Source {

    /** The key of the snapshot among the node's positions. */
    static final String SNAPSHOT = "snapshot";

    /** The stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG =
                StandardKeys.errorHandling(StandardKeys.batching(keys(new ConfigDef(), "source")));

        public Type() {
            super(
                    NodeKind.SOURCE,
                    "plugin",
                    "A source from a native plugin loaded by path (`plugins-api/include/sluice_plugin.h`). Its "
                            + "position is checkpointed like a built-in source's: the plugin's snapshot at each "
                            + "barrier is kept in the state DB and restored on restart.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public PluginSource create(Settings settings) {
            return new PluginSource(settings);
        }
    }

    private final int batchSize;
    private final long timeoutMillis;
    private Schema schema;
    private ArrowArray batchStruct;
    private final Map<Long, String> snapshots = new HashMap<>();

    PluginSource(Settings settings) {
        super(settings, sluice_plugin_h.SLUICE_COMPONENT_SOURCE());
        this.batchSize = settings.getInt(StandardKeys.BATCH_SIZE);
        this.timeoutMillis =
                settings.getDuration(StandardKeys.BATCH_FLUSH_INTERVAL).toMillis();
    }

    @Override
    public Schema open(StageContext context) {
        vtable = resolve(context, SluiceSource.sizeof());
        MemorySegment slot = stateSlot();
        try (ArrowSchema out = ArrowSchema.allocateNew(allocator)) {
            MemorySegment info = instanceInfo(context);
            MemorySegment options = options();
            try {
                call(
                        "open",
                        error -> SluiceSource.open.invoke(
                                SluiceSource.open(vtable),
                                options,
                                info,
                                slot,
                                MemorySegment.ofAddress(out.memoryAddress()),
                                error));
            } catch (PluginCallException e) {
                throw openFailure(e);
            }
            state = slot.get(ValueLayout.ADDRESS, 0);
            schema = Data.importSchema(allocator, out, null);
        }
        restore(context.restoredPositions().get(SNAPSHOT));
        batchStruct = ArrowArray.allocateNew(allocator);
        return schema;
    }

    private void restore(String snapshotJson) {
        MemorySegment restore = SluiceSource.restore(vtable);
        if (snapshotJson == null || restore.address() == 0) {
            return;
        }
        String base64 = snapshotJson.replace("\"", "").trim();
        byte[] bytes = Base64.getDecoder().decode(base64);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment data = call.allocate(Math.max(1, bytes.length));
            data.copyFrom(MemorySegment.ofArray(bytes));
            call("restore", error -> SluiceSource.restore.invoke(restore, state, data, bytes.length, error));
        }
    }

    @Override
    public Poll poll(Emitter out) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment result = call.allocate(ValueLayout.JAVA_INT);
            MemorySegment array = MemorySegment.ofAddress(batchStruct.memoryAddress());
            try {
                call(
                        "poll",
                        error -> SluiceSource.poll.invoke(
                                SluiceSource.poll(vtable), state, batchSize, timeoutMillis, result, array, error));
            } catch (PluginCallException e) {
                if (!e.badData()) {
                    throw e;
                }
                // A record the plugin could not read: per on_error, the run goes on without it.
                context.reject(-1, new byte[0], e.getMessage());
                return Poll.IDLE;
            }
            int what = result.get(ValueLayout.JAVA_INT, 0);
            if (what == sluice_plugin_h.SLUICE_POLL_BATCH()) {
                out.emit(NativeBatch.adopt(allocator, batchStruct.memoryAddress(), schema));
                return Poll.EMITTED;
            }
            if (what == sluice_plugin_h.SLUICE_POLL_FINISHED()) {
                return Poll.END;
            }
            if (what == sluice_plugin_h.SLUICE_POLL_NONE_YET()) {
                return Poll.IDLE;
            }
            throw new PluginCallException(
                    sluice_plugin_h.SLUICE_PLUGIN_ERROR(), describe("poll") + ": unknown poll result " + what);
        }
    }

    @Override
    public void onBarrier(Barrier barrier) {
        MemorySegment snapshot = SluiceSource.snapshot(vtable);
        if (snapshot.address() == 0) {
            return;
        }
        try (Arena call = Arena.ofConfined()) {
            MemorySegment data = call.allocate(ValueLayout.ADDRESS);
            MemorySegment len = call.allocate(ValueLayout.JAVA_LONG);
            data.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
            len.set(ValueLayout.JAVA_LONG, 0, 0);
            call("snapshot", error -> SluiceSource.snapshot.invoke(snapshot, state, barrier.epoch(), data, len, error));
            MemorySegment bytes = data.get(ValueLayout.ADDRESS, 0);
            long n = len.get(ValueLayout.JAVA_LONG, 0);
            if (bytes.address() == 0) {
                snapshots.put(barrier.epoch(), null);
                return;
            }
            byte[] copy = bytes.reinterpret(n).toArray(ValueLayout.JAVA_BYTE);
            PluginBytes.free(library, bytes, n);
            snapshots.put(barrier.epoch(), "\"" + Base64.getEncoder().encodeToString(copy) + "\"");
        }
    }

    @Override
    public Map<String, String> positions(long epoch) {
        String snapshot = snapshots.get(epoch);
        return snapshot == null ? Map.of() : Map.of(SNAPSHOT, snapshot);
    }

    @Override
    public void onCheckpointComplete(long epoch) {
        snapshots.keySet().removeIf(e -> e <= epoch);
        MemorySegment commit = SluiceSource.commit(vtable);
        if (commit.address() != 0) {
            call("commit", error -> SluiceSource.commit.invoke(commit, state, epoch, error));
        }
    }

    @Override
    public void close() {
        try {
            if (vtable != null && state.address() != 0) {
                SluiceSource.close.invoke(SluiceSource.close(vtable), state);
                state = MemorySegment.NULL;
            }
        } finally {
            if (batchStruct != null) {
                batchStruct.close();
            }
            super.close();
        }
    }
}
