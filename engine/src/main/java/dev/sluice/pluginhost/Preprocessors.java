package dev.sluice.pluginhost;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblems;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.PathPolicy;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.PipelineSpec;
import dev.sluice.ffm.plugin.SluicePreprocessor;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code plugins.preprocessors}: native plugin components that rewrite the pipeline file's text
 * (templates, includes) before it is checked, in the order listed. Problems found afterwards
 * point into the rewritten text.
 *
 * <pre>
 * plugins:
 *   preprocessors:
 *     - {path: plugins/libsluice_examples.so, component: template, options: {vars: {N: 1000}}}
 * </pre>
 */
public final class Preprocessors {

    public static final String KEY = "preprocessors";
    private static final ObjectMapper JSON = new ObjectMapper();

    private Preprocessors() {}

    /**
     * Reads the pipeline file, runs its preprocessors and checks the result.
     *
     * @throws ConfigException naming the preprocessor entry that failed, or the problems of the result
     */
    public static PipelineSpec load(Path file) {
        return parse(PipelineLoader.read(file), file);
    }

    /**
     * Runs the preprocessors of pipeline YAML given as text (the service's) and checks the
     * result; {@code file} locates messages and relative paths, and need not exist.
     */
    public static PipelineSpec parse(String text, Path file) {
        ConfigValue plugins = PipelineLoader.rawTopLevel(text, file, PipelineLoader.PLUGINS);
        if (plugins == null || !plugins.isMap() || !plugins.asMap().containsKey(KEY)) {
            return PipelineLoader.parse(text, file);
        }
        Map<String, ConfigValue> block = plugins.asMap();
        Path dir = file.toAbsolutePath().getParent();
        ConfigProblems problems = new ConfigProblems();
        PathPolicy policy = PipelinePlugins.allowedDirs(block, file, problems);
        problems.throwIfAny();
        ConfigValue list = block.get(KEY);
        for (ConfigValue entry : list.isList() ? list.asList() : List.of(list)) {
            text = rewrite(entry, text, file, dir, policy);
        }
        return PipelineLoader.parse(text, file);
    }

    private static String rewrite(ConfigValue entry, String text, Path file, Path dir, PathPolicy policy) {
        String where = "plugins.preprocessors entry";
        if (!entry.isMap()
                || !entry.asMap().containsKey("path")
                || !entry.asMap().containsKey("component")) {
            throw new ConfigException(
                    entry.location(), where + " must be a map such as {path: plugins/libx.so, component: template}");
        }
        Map<String, ConfigValue> map = entry.asMap();
        for (String key : map.keySet()) {
            if (!List.of("path", "component", "options").contains(key)) {
                throw new ConfigException(
                        entry.keyLocation(key),
                        "unknown key '" + key + "' in a " + where + "; keys: path, component, options");
            }
        }
        ConfigValue pathValue = map.get("path");
        Path path = dir.resolve(String.valueOf(pathValue.value())).normalize();
        String refusal = policy.refusal(path);
        if (refusal != null) {
            throw new ConfigException(pathValue.location(), refusal);
        }
        PluginLibrary library;
        try {
            library = PluginLibrary.load(path);
        } catch (PluginLoadException e) {
            throw new ConfigException(pathValue.location(), e.getMessage());
        }
        String name = String.valueOf(map.get("component").value());
        int kind = sluice_plugin_h.SLUICE_COMPONENT_PREPROCESSOR();
        PluginLibrary.Component component = library.component(kind, name)
                .orElseThrow(() -> new ConfigException(
                        map.get("component").location(),
                        library
                                + " offers no preprocessor named '" + name + "'; its preprocessors: "
                                + (library.componentNames(kind).isEmpty()
                                        ? "none"
                                        : String.join(", ", library.componentNames(kind)))));
        String options;
        try {
            ConfigValue optionsValue = map.get("options");
            options = JSON.writeValueAsString(optionsValue == null ? Map.of() : optionsValue.toPlain());
        } catch (JsonProcessingException e) {
            throw new ConfigException(entry.location(), where + ": options cannot be written as JSON");
        }
        MemorySegment vtable = component.vtable().reinterpret(SluicePreprocessor.sizeof());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            out.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
            MemorySegment opts = arena.allocateFrom(options);
            MemorySegment pipelinePath =
                    arena.allocateFrom(file.toAbsolutePath().toString());
            MemorySegment yaml = arena.allocateFrom(text);
            try {
                PluginStrings.check(
                        library,
                        "preprocessor '" + name + "' of " + library.name(),
                        error -> SluicePreprocessor.rewrite.invoke(
                                SluicePreprocessor.rewrite(vtable), opts, pipelinePath, yaml, out, error));
            } catch (PluginCallException e) {
                throw new ConfigException(entry.location(), e.getMessage());
            }
            String rewritten = PluginStrings.take(library, out.get(ValueLayout.ADDRESS, 0));
            if (rewritten == null) {
                throw new ConfigException(entry.location(), "preprocessor '" + name + "' returned no text");
            }
            return rewritten;
        }
    }
}
