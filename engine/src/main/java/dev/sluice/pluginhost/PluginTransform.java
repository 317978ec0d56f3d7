package dev.sluice.pluginhost;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.ffm.plugin.SluiceTransform;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.PrimaryKey;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.Transform;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * {@code type: plugin} among the transforms: a native plugin's {@code SluiceTransform} of one
 * input. Native batches go in and come out without a copy; after each batch and each barrier
 * the host takes every queued output before it moves on, so output keeps its barrier.
 */
public final class PluginTransform extends PluginStage implements Transform {

    /** The stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.errorHandling(keys(new ConfigDef(), "transform"));

        public Type() {
            super(
                    NodeKind.TRANSFORM,
                    "plugin",
                    "A transform of one input (`from:`) from a native plugin loaded by path "
                            + "(`plugins-api/include/sluice_plugin.h`).",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public PluginTransform create(Settings settings) {
            return new PluginTransform(settings);
        }
    }

    private Schema outputSchema;
    private ArrowArray inStruct;
    private ArrowArray outStruct;

    PluginTransform(Settings settings) {
        super(settings, sluice_plugin_h.SLUICE_COMPONENT_TRANSFORM());
    }

    @Override
    public Schema open(StageContext context, List<String> inputNames, List<Schema> inputSchemas) {
        if (inputSchemas.size() != 1) {
            throw new InvalidSettingException(
                    "from", "a plugin transform reads exactly one input, got " + inputSchemas.size());
        }
        vtable = resolve(context, SluiceTransform.sizeof());
        MemorySegment slot = stateSlot();
        try (ArrowSchema input = ArrowSchema.allocateNew(allocator);
                ArrowSchema out = ArrowSchema.allocateNew(allocator)) {
            Data.exportSchema(allocator, inputSchemas.get(0), null, input);
            MemorySegment info = instanceInfo(context);
            MemorySegment options = options();
            try {
                call(
                        "open",
                        error -> SluiceTransform.open.invoke(
                                SluiceTransform.open(vtable),
                                options,
                                info,
                                MemorySegment.ofAddress(input.memoryAddress()),
                                slot,
                                MemorySegment.ofAddress(out.memoryAddress()),
                                error));
            } catch (PluginCallException e) {
                throw openFailure(e);
            } finally {
                input.release(); // borrowed by open
            }
            state = slot.get(ValueLayout.ADDRESS, 0);
            // No key: a plugin cannot say whether its rows keep their input's key (PrimaryKey).
            outputSchema = PrimaryKey.with(Data.importSchema(allocator, out, null), List.of());
        }
        inStruct = ArrowArray.allocateNew(allocator);
        outStruct = ArrowArray.allocateNew(allocator);
        return outputSchema;
    }

    @Override
    public void process(int input, Batch batch, Emitter out) {
        boolean[] rejected = {false};
        NativeBatch.with(batch, allocator, nativeBatch -> {
            nativeBatch.exportArray(allocator, inStruct.memoryAddress());
            MemorySegment array = MemorySegment.ofAddress(inStruct.memoryAddress());
            try {
                call(
                        "process",
                        error -> SluiceTransform.process.invoke(SluiceTransform.process(vtable), state, array, error));
            } catch (PluginCallException e) {
                if (!e.badData()) {
                    throw e;
                }
                context.reject(-1, NativeEncoder.jsonLines(nativeBatch), e.getMessage());
                rejected[0] = true;
            } finally {
                inStruct.release(); // no-op when the plugin moved it in, as it must
            }
        });
        // A batch the plugin refused goes to on_error whole: what it queued before refusing it
        // is dropped, or those rows would be both emitted and set aside.
        drain(rejected[0] ? null : out);
    }

    @Override
    public void onBarrier(Barrier barrier, Emitter out) {
        MemorySegment fn = SluiceTransform.barrier(vtable);
        if (fn.address() != 0) {
            call("barrier", error -> SluiceTransform.barrier.invoke(fn, state, barrier.epoch(), error));
        }
        drain(out);
    }

    /** Emits what the plugin queued, or drops it when {@code out} is null. */
    private void drain(Emitter out) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment has = call.allocate(ValueLayout.JAVA_INT);
            MemorySegment array = MemorySegment.ofAddress(outStruct.memoryAddress());
            while (true) {
                has.set(ValueLayout.JAVA_INT, 0, 0);
                call(
                        "next_output",
                        error -> SluiceTransform.next_output.invoke(
                                SluiceTransform.next_output(vtable), state, has, array, error));
                if (has.get(ValueLayout.JAVA_INT, 0) == 0) {
                    return;
                }
                NativeBatch queued = NativeBatch.adopt(allocator, outStruct.memoryAddress(), outputSchema);
                if (out == null) {
                    queued.close();
                } else {
                    out.emit(queued);
                }
            }
        }
    }

    @Override
    public void close() {
        try {
            if (vtable != null && state.address() != 0) {
                SluiceTransform.close.invoke(SluiceTransform.close(vtable), state);
                state = MemorySegment.NULL;
            }
        } finally {
            if (inStruct != null) {
                inStruct.close();
                outStruct.close();
            }
            super.close();
        }
    }
}
