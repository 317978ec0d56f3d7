package dev.sluice.pluginhost;

import dev.sluice.bridge.ArrowC;
import dev.sluice.bridge.NativeConfigException;
import dev.sluice.bridge.NativeFunctions;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblems;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Location;
import dev.sluice.config.PathPolicy;
import dev.sluice.config.PipelineLoader;
import dev.sluice.config.PipelineSpec;
import dev.sluice.config.Suggestions;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.ScalarFunction;
import dev.sluice.plugin.StageType;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A pipeline's top-level {@code plugins:} block, and what it sets up: which directories plugin
 * libraries may be loaded from ({@code allowed_dirs}, default the pipeline file's directory and
 * below) and the scalar functions of the libraries under {@code udfs}, which every SQL transform
 * of the pipeline may call by name. The functions live in one {@link NativeFunctions} set per
 * lane, closed with the pipeline.
 *
 * <pre>
 * plugins:
 *   allowed_dirs: [plugins]
 *   udfs:
 *     - path: plugins/libsluice_examples.so   # every scalar UDF it offers,
 *       functions: [keccak256, geohash]       # or only these
 *     - jar: plugins/my-udfs.jar              # Java ScalarFunctions (ServiceLoader)
 *   jars: [plugins/my-connector.jar]          # Java stage types (StageType, ServiceLoader)
 * </pre>
 */
public final class PipelinePlugins implements AutoCloseable {

    public static final String ALLOWED_DIRS = "allowed_dirs";
    public static final String UDFS = "udfs";
    public static final String JARS = "jars";
    static final String UDF_PATH = "path";
    static final String UDF_JAR = "jar";
    static final String UDF_FUNCTIONS = "functions";

    private static final List<String> KEYS = List.of(ALLOWED_DIRS, UDFS, JARS, Preprocessors.KEY);

    /**
     * One entry of {@code udfs}: a native library or ({@code java}) a JAR of {@link
     * dev.sluice.plugin.ScalarFunction}s, and the functions wanted from it (all when empty).
     */
    record UdfLibrary(Path path, boolean java, List<String> functions, Location location) {}

    private final PathPolicy policy;
    private final List<UdfLibrary> udfLibraries;
    private final List<StageType> stageTypes;
    private NativeFunctions functions;
    /** The upcall stubs and descriptors of Java functions, and the memory of their results. */
    private Arena javaArena;

    private BufferAllocator javaAllocator;

    private PipelinePlugins(PathPolicy policy, List<UdfLibrary> udfLibraries, List<StageType> stageTypes) {
        this.policy = policy;
        this.udfLibraries = List.copyOf(udfLibraries);
        this.stageTypes = List.copyOf(stageTypes);
    }

    /** No {@code plugins:} block: libraries from {@code pipelineDirectory} and below, no functions. */
    public static PipelinePlugins defaults(Path pipelineDirectory) {
        ConfigProblems unused = new ConfigProblems();
        return new PipelinePlugins(
                PathPolicy.readSetting(
                        null,
                        pipelineDirectory.resolve("pipeline.yaml"),
                        setting(),
                        List.of(pipelineDirectory),
                        unused),
                List.of(),
                List.of());
    }

    private static String setting() {
        return PipelineLoader.PLUGINS + "." + ALLOWED_DIRS;
    }

    /** {@code plugins.allowed_dirs} of the block's {@code keys}; default the pipeline file's directory. */
    static PathPolicy allowedDirs(Map<String, ConfigValue> keys, Path file, ConfigProblems problems) {
        return PathPolicy.readSetting(
                keys.get(ALLOWED_DIRS),
                file,
                setting(),
                List.of(file.toAbsolutePath().getParent()),
                problems);
    }

    /**
     * Reads the block and loads the UDF libraries it names, so that a bad library is reported
     * by {@code validate} at its line.
     *
     * @throws ConfigException with every problem of the block
     */
    public static PipelinePlugins read(PipelineSpec spec) {
        Path file = spec.file();
        Path dir = file.toAbsolutePath().getParent();
        ConfigValue block = spec.topLevel().get(PipelineLoader.PLUGINS);
        ConfigProblems problems = new ConfigProblems();
        if (block == null || block.isNull()) {
            return defaults(dir);
        }
        if (!block.isMap()) {
            throw new ConfigException(
                    block.location(),
                    "'plugins' must be a map such as {allowed_dirs: [plugins], udfs: [{path: plugins/libx.so}]}, got "
                            + block.describe());
        }
        Map<String, ConfigValue> keys = block.asMap();
        for (String key : keys.keySet()) {
            if (!KEYS.contains(key)) {
                problems.add(
                        block.keyLocation(key),
                        null,
                        Suggestions.unknown("unknown key 'plugins." + key + "'", key, KEYS, "keys"));
            }
        }
        PathPolicy policy = allowedDirs(keys, file, problems);
        List<UdfLibrary> udfs = new ArrayList<>();
        ConfigValue list = keys.get(UDFS);
        if (list != null && !list.isNull()) {
            List<ConfigValue> entries = list.isList() ? list.asList() : List.of(list);
            for (ConfigValue entry : entries) {
                UdfLibrary udf = readUdf(entry, dir, policy, problems);
                if (udf != null) {
                    udfs.add(udf);
                }
            }
        }
        List<StageType> types = new ArrayList<>();
        ConfigValue jars = keys.get(JARS);
        if (jars != null && !jars.isNull()) {
            for (ConfigValue jar : jars.isList() ? jars.asList() : List.of(jars)) {
                Path path = dir.resolve(String.valueOf(jar.value())).normalize();
                String refusal = policy.refusal(path);
                if (refusal != null) {
                    problems.add(jar.location(), null, refusal);
                    continue;
                }
                try {
                    types.addAll(JavaPlugins.stageTypes(path));
                } catch (PluginLoadException e) {
                    problems.add(jar.location(), null, e.getMessage());
                }
            }
        }
        problems.throwIfAny();
        PipelinePlugins plugins = new PipelinePlugins(policy, udfs, types);
        try {
            plugins.functions();
        } catch (RuntimeException e) {
            plugins.close();
            throw e;
        }
        return plugins;
    }

    private static UdfLibrary readUdf(ConfigValue entry, Path dir, PathPolicy policy, ConfigProblems problems) {
        String where = "plugins.udfs entry";
        if (!entry.isMap()
                || entry.asMap().containsKey(UDF_PATH) == entry.asMap().containsKey(UDF_JAR)) {
            problems.add(
                    entry.location(),
                    null,
                    where + " must be a map with either path (a native library) or jar (Java functions), such as "
                            + "{path: plugins/libx.so, functions: [f]}");
            return null;
        }
        Map<String, ConfigValue> map = entry.asMap();
        List<String> keys = List.of(UDF_PATH, UDF_JAR, UDF_FUNCTIONS);
        for (String key : map.keySet()) {
            if (!keys.contains(key)) {
                problems.add(
                        entry.keyLocation(key),
                        null,
                        Suggestions.unknown("unknown key '" + key + "' in a " + where, key, keys, "keys"));
            }
        }
        boolean java = map.containsKey(UDF_JAR);
        ConfigValue pathValue = map.get(java ? UDF_JAR : UDF_PATH);
        Path path = dir.resolve(String.valueOf(pathValue.value())).normalize();
        String refusal = policy.refusal(path);
        if (refusal != null) {
            problems.add(pathValue.location(), null, refusal);
            return null;
        }
        List<String> names = new ArrayList<>();
        ConfigValue wanted = map.get(UDF_FUNCTIONS);
        if (wanted != null && !wanted.isNull()) {
            for (ConfigValue name : wanted.isList() ? wanted.asList() : List.of(wanted)) {
                names.add(String.valueOf(name.value()));
            }
        }
        return new UdfLibrary(path, java, names, pathValue.location());
    }

    /** The stage types of the JARs under {@code jars}, to add to the engine's for this pipeline. */
    public List<StageType> stageTypes() {
        return stageTypes;
    }

    /** Why a plugin library at {@code path} may not be loaded, or null when it may. */
    public String refusal(Path path) {
        return policy.refusal(path);
    }

    /**
     * The pipeline's function set even when it has no UDFs: dynamic tables ride on it into every
     * transform ({@code runtime.DynamicTables}).
     */
    public synchronized NativeFunctions functionsForTables() {
        if (functions == null && udfLibraries.isEmpty()) {
            functions = NativeFunctions.create();
        }
        return functions();
    }

    /**
     * The scalar functions of the {@code udfs} libraries, loaded on first use.
     *
     * @throws ConfigException at the library's entry when it cannot be loaded or lacks a function
     */
    public synchronized NativeFunctions functions() {
        if (functions != null || udfLibraries.isEmpty()) {
            return functions;
        }
        NativeFunctions set = NativeFunctions.create();
        ConfigProblems problems = new ConfigProblems();
        Set<String> added = new LinkedHashSet<>();
        for (UdfLibrary udf : udfLibraries) {
            if (udf.java()) {
                addJavaFunctions(udf, set, added, problems);
                continue;
            }
            PluginLibrary library;
            try {
                library = PluginLibrary.load(udf.path());
            } catch (PluginLoadException e) {
                problems.add(udf.location(), null, e.getMessage());
                continue;
            }
            int kind = sluice_plugin_h.SLUICE_COMPONENT_SCALAR_UDF();
            List<String> offered = library.componentNames(kind);
            for (String name : udf.functions()) {
                if (!offered.contains(name)) {
                    problems.add(
                            udf.location(),
                            null,
                            library + " offers no scalar UDF named '" + name + "'; its UDFs: "
                                    + (offered.isEmpty() ? "none" : String.join(", ", offered)));
                }
            }
            for (PluginLibrary.Component component : library.components()) {
                if (component.kind() != kind
                        || (!udf.functions().isEmpty() && !udf.functions().contains(component.name()))) {
                    continue;
                }
                if (!added.add(component.name())) {
                    problems.add(udf.location(), null, "two plugin UDFs are named '" + component.name() + "'");
                    continue;
                }
                try {
                    set.addScalar(component.name(), component.vtable(), library.freeString());
                } catch (NativeConfigException e) {
                    problems.add(udf.location(), null, library + ": " + e.getMessage());
                }
            }
        }
        if (!problems.isEmpty()) {
            set.close();
            problems.throwIfAny();
        }
        functions = set;
        return functions;
    }

    private void addJavaFunctions(UdfLibrary udf, NativeFunctions set, Set<String> added, ConfigProblems problems) {
        List<ScalarFunction> found;
        try {
            found = JavaPlugins.functions(udf.path());
        } catch (PluginLoadException e) {
            problems.add(udf.location(), null, e.getMessage());
            return;
        }
        List<String> offered = found.stream().map(ScalarFunction::name).toList();
        for (String name : udf.functions()) {
            if (!offered.contains(name)) {
                problems.add(
                        udf.location(),
                        null,
                        udf.path() + " offers no Java function named '" + name + "'; its functions: "
                                + (offered.isEmpty() ? "none" : String.join(", ", offered)));
            }
        }
        if (javaArena == null) {
            javaArena = Arena.ofShared();
            javaAllocator = ArrowC.rootAllocator().newChildAllocator("java udfs", 0, Long.MAX_VALUE);
        }
        for (ScalarFunction function : found) {
            if (!udf.functions().isEmpty() && !udf.functions().contains(function.name())) {
                continue;
            }
            if (!added.add(function.name())) {
                problems.add(udf.location(), null, "two plugin UDFs are named '" + function.name() + "'");
                continue;
            }
            try {
                JavaFunction java = new JavaFunction(function, javaAllocator, javaArena);
                set.addScalar(java.name(), java.descriptor(), JavaFunction.FREE);
            } catch (RuntimeException e) {
                problems.add(
                        udf.location(), null, udf.path() + ": function '" + function.name() + "': " + e.getMessage());
            }
        }
    }

    /**
     * Frees the function set; the Java functions' stubs and memory go with it. Transforms planned
     * with the set must be closed first (the pipeline closes its stages before this).
     */
    @Override
    public synchronized void close() {
        if (functions != null) {
            functions.close();
            functions = null;
        }
        if (javaArena != null) {
            javaArena.close();
            javaAllocator.close();
            javaArena = null;
        }
    }
}
