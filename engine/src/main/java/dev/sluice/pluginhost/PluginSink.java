package dev.sluice.pluginhost;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.ffm.plugin.SluiceSideOutput;
import dev.sluice.ffm.plugin.SluiceSink;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * {@code type: plugin} among the sinks: a native plugin's {@code SluiceSink}. {@code open} only
 * checks (validation stops there), {@code start} opens the destination, a barrier is the
 * plugin's {@code flush} (it returns once the epoch is durable), finalization its {@code commit}.
 * A {@code SluiceSideOutput} component serves as well: it observes every batch of its
 * {@code from:} node, borrowed, and its {@code barrier} acknowledges the epoch.
 */
public final class PluginSink extends PluginStage implements Sink {

    /** The stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(keys(new ConfigDef(), "sink"));

        public Type() {
            super(
                    NodeKind.SINK,
                    "plugin",
                    "A sink from a native plugin loaded by path (`plugins-api/include/sluice_plugin.h`); it must "
                            + "write idempotently, since batches after the last checkpoint are replayed on restart. The "
                            + "component may also be a side output, which observes every batch of the `from:` node "
                            + "read-only.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public PluginSink create(Settings settings) {
            return new PluginSink(settings);
        }
    }

    private ArrowArray inStruct;
    private boolean sideOutput;

    PluginSink(Settings settings) {
        super(settings, sluice_plugin_h.SLUICE_COMPONENT_SINK());
    }

    @Override
    public void open(StageContext context, Schema schema) {
        vtable = resolve(
                context,
                SluiceSink.sizeof(),
                sluice_plugin_h.SLUICE_COMPONENT_SIDE_OUTPUT(),
                SluiceSideOutput.sizeof());
        sideOutput = component.kind() == sluice_plugin_h.SLUICE_COMPONENT_SIDE_OUTPUT();
        MemorySegment slot = stateSlot();
        try (ArrowSchema input = ArrowSchema.allocateNew(allocator)) {
            Data.exportSchema(allocator, schema, null, input);
            MemorySegment info = instanceInfo(context);
            MemorySegment options = options();
            MemorySegment schemaStruct = MemorySegment.ofAddress(input.memoryAddress());
            try {
                if (sideOutput) {
                    MemorySegment observed = arena.allocateFrom(String.join(",", context.inputNames()));
                    call(
                            "open",
                            error -> SluiceSideOutput.open.invoke(
                                    SluiceSideOutput.open(vtable), options, info, observed, schemaStruct, slot, error));
                } else {
                    call(
                            "open",
                            error -> SluiceSink.open.invoke(
                                    SluiceSink.open(vtable), options, info, schemaStruct, slot, error));
                }
            } catch (PluginCallException e) {
                throw openFailure(e);
            } finally {
                input.release(); // borrowed by open
            }
            state = slot.get(ValueLayout.ADDRESS, 0);
        }
        inStruct = ArrowArray.allocateNew(allocator);
    }

    @Override
    public void start() {
        if (sideOutput) {
            return;
        }
        MemorySegment fn = SluiceSink.start(vtable);
        if (fn.address() != 0) {
            call("start", error -> SluiceSink.start.invoke(fn, state, error));
        }
    }

    @Override
    public void write(Batch batch) {
        NativeBatch.with(batch, allocator, nativeBatch -> {
            nativeBatch.exportArray(allocator, inStruct.memoryAddress());
            MemorySegment array = MemorySegment.ofAddress(inStruct.memoryAddress());
            try {
                if (sideOutput) {
                    // Borrowed: the host releases it below.
                    call(
                            "observe",
                            error -> SluiceSideOutput.observe.invoke(
                                    SluiceSideOutput.observe(vtable), state, array, error));
                } else {
                    call("write", error -> SluiceSink.write.invoke(SluiceSink.write(vtable), state, array, error));
                }
            } catch (PluginCallException e) {
                if (!e.badData()) {
                    throw e;
                }
                context.reject(-1, NativeEncoder.jsonLines(nativeBatch), e.getMessage());
            } finally {
                inStruct.release(); // no-op when the plugin moved it in, as it must
            }
        });
    }

    @Override
    public void onBarrier(Barrier barrier) {
        if (sideOutput) {
            MemorySegment fn = SluiceSideOutput.barrier(vtable);
            if (fn.address() != 0) {
                call("barrier", error -> SluiceSideOutput.barrier.invoke(fn, state, barrier.epoch(), error));
            }
            return;
        }
        call("flush", error -> SluiceSink.flush.invoke(SluiceSink.flush(vtable), state, barrier.epoch(), error));
    }

    @Override
    public void onCheckpointComplete(long epoch) {
        if (sideOutput) {
            return;
        }
        MemorySegment fn = SluiceSink.commit(vtable);
        if (fn.address() != 0) {
            call("commit", error -> SluiceSink.commit.invoke(fn, state, epoch, error));
        }
    }

    @Override
    public void close() {
        try {
            if (vtable != null && state.address() != 0) {
                if (sideOutput) {
                    SluiceSideOutput.close.invoke(SluiceSideOutput.close(vtable), state);
                } else {
                    SluiceSink.close.invoke(SluiceSink.close(vtable), state);
                }
                state = MemorySegment.NULL;
            }
        } finally {
            if (inStruct != null) {
                inStruct.close();
            }
            super.close();
        }
    }
}
