package dev.sluice.pluginhost;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ffm.plugin.SluiceInstanceInfo;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What the three plugin stage adapters share: the {@code path}, {@code component} and
 * {@code options} keys, finding the component in its library, the instance info and the
 * {@code void *state} of the component, and the rule that after a panic only {@code close} is
 * called.
 */
abstract class PluginStage implements AutoCloseable {

    /** The shared library, relative to the pipeline file. */
    static final String PATH = "path";
    /** Which component of the library, by name. */
    static final String COMPONENT = "component";
    /** The component's own settings, handed over as one JSON object. */
    static final String OPTIONS = "options";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The keys every plugin stage has. */
    static ConfigDef keys(ConfigDef def, String kind) {
        return def.define(
                        PATH,
                        ConfigType.STRING,
                        null,
                        true,
                        "The plugin's shared library (.so), relative to the pipeline file; it must lie inside "
                                + "`plugins.allowed_dirs` (default: the pipeline file's directory and below).")
                .define(
                        COMPONENT,
                        ConfigType.STRING,
                        null,
                        true,
                        "The name of the " + kind + " the library offers "
                                + "(`./sluice plugin inspect PATH` lists them).")
                .define(
                        OPTIONS,
                        ConfigType.JSON,
                        null,
                        false,
                        "The component's settings, passed to it as one JSON "
                                + "object; the plugin checks them when the pipeline is validated.");
    }

    private final String pathSetting;
    final String componentName;
    private final String optionsJson;
    final int kind;
    PluginLibrary library;
    PluginLibrary.Component component;
    /** Lives as long as the state: instance info strings. */
    final Arena arena = Arena.ofShared();

    MemorySegment state = MemorySegment.NULL;
    private boolean panicked;
    /** Set by {@link #resolve}: the component's vtable, the stage's context and allocator. */
    MemorySegment vtable;

    StageContext context;
    BufferAllocator allocator;

    PluginStage(Settings settings, int kind) {
        this.pathSetting = settings.getString(PATH);
        this.componentName = settings.getString(COMPONENT);
        Object options = settings.getJson(OPTIONS);
        try {
            this.optionsJson = JSON.writeValueAsString(options == null ? Map.of() : options);
        } catch (JsonProcessingException e) {
            throw settings.problem(OPTIONS, "cannot be written as JSON: " + e.getOriginalMessage());
        }
        this.kind = kind;
    }

    /** Loads the library (inside the allowed directories) and finds the component; returns its vtable. */
    MemorySegment resolve(StageContext context, long vtableSize) {
        return resolve(context, vtableSize, -1, 0);
    }

    /**
     * As {@link #resolve(StageContext, long)}, also accepting a component of {@code otherKind}
     * (whose vtable is {@code otherSize} bytes) of the name; {@link #component} says which it is.
     */
    MemorySegment resolve(StageContext context, long vtableSize, int otherKind, long otherSize) {
        this.context = context;
        this.allocator = context.allocator();
        PipelinePlugins plugins = PluginContext.of(context);
        Path path = context.pipelineDirectory().resolve(pathSetting).normalize();
        String refusal = plugins.refusal(path);
        if (refusal != null) {
            throw new InvalidSettingException(PATH, refusal);
        }
        try {
            library = PluginLibrary.load(path);
        } catch (PluginLoadException e) {
            throw new InvalidSettingException(PATH, e.getMessage());
        }
        component = library.component(kind, componentName)
                .or(() -> library.component(otherKind, componentName))
                .orElseThrow(() -> new InvalidSettingException(
                        COMPONENT,
                        library + " offers no " + PluginLibrary.Component.kindName(kind) + " named '" + componentName
                                + "'; its "
                                + PluginLibrary.Component.kindName(kind) + "s: "
                                + (library.componentNames(kind).isEmpty()
                                        ? "none"
                                        : String.join(", ", library.componentNames(kind)))));
        return component.vtable().reinterpret(component.kind() == kind ? vtableSize : otherSize);
    }

    /** The instance info of this node (one lane: plugin stages do not run in lanes yet). */
    MemorySegment instanceInfo(StageContext context) {
        MemorySegment info = SluiceInstanceInfo.allocate(arena);
        SluiceInstanceInfo.pipeline(info, arena.allocateFrom(context.pipelineName()));
        SluiceInstanceInfo.node(info, arena.allocateFrom(context.nodeName()));
        SluiceInstanceInfo.pipeline_dir(
                info, arena.allocateFrom(context.pipelineDirectory().toString()));
        SluiceInstanceInfo.lane(info, 0);
        SluiceInstanceInfo.lanes(info, 1);
        return info;
    }

    MemorySegment options() {
        return arena.allocateFrom(optionsJson);
    }

    /** A slot for the {@code void **out_state} of open. */
    MemorySegment stateSlot() {
        MemorySegment slot = arena.allocate(ValueLayout.ADDRESS);
        slot.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
        return slot;
    }

    /** Runs a call on the state; refuses after a panic, as the header demands, and remembers one. */
    void call(String what, java.util.function.ToIntFunction<MemorySegment> body) {
        if (panicked) {
            throw new PluginCallException(
                    sluice_plugin_h.SLUICE_PLUGIN_PANIC(),
                    describe(what) + ": the plugin panicked earlier; only close is called now");
        }
        try {
            PluginStrings.check(library, describe(what), body);
        } catch (PluginCallException e) {
            panicked |= e.panicked();
            throw e;
        }
    }

    /** Open's failure as a setting problem: rejected options at {@code options}, the rest at the node. */
    RuntimeException openFailure(PluginCallException e) {
        return e.invalidOptions() ? new InvalidSettingException(OPTIONS, e.getMessage()) : e;
    }

    String describe(String what) {
        return "plugin " + PluginLibrary.Component.kindName(kind) + " '" + componentName + "' of " + library.name()
                + " " + what;
    }

    @Override
    public void close() {
        arena.close();
    }
}
