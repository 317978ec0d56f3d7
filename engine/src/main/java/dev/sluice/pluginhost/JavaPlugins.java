package dev.sluice.pluginhost;

import dev.sluice.plugin.ScalarFunction;
import dev.sluice.plugin.StageType;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.JarFile;

/**
 * Java plugins loaded from a JAR path: a class loader per JAR (child of the engine's, so the JAR
 * sees {@code plugins-api} and Arrow Java), kept for the life of the process like a native library.
 */
final class JavaPlugins {

    private static final Map<Path, ClassLoader> LOADERS = new ConcurrentHashMap<>();

    private JavaPlugins() {}

    /** The {@link ScalarFunction}s the JAR lists in its {@code META-INF/services}. */
    static List<ScalarFunction> functions(Path jar) {
        ClassLoader loader = loader(jar);
        List<ScalarFunction> functions = new ArrayList<>();
        try {
            for (ServiceLoader.Provider<ScalarFunction> provider :
                    ServiceLoader.load(ScalarFunction.class, loader).stream().toList()) {
                if (provider.type().getClassLoader() != loader) {
                    continue; // the engine's own class path, not this JAR
                }
                ScalarFunction function = provider.get();
                if (function.spiVersion() != ScalarFunction.SPI_VERSION) {
                    throw new PluginLoadException(
                            jar + ": " + function.getClass().getName() + " was built against "
                                    + "ScalarFunction version " + function.spiVersion() + ", this engine has "
                                    + ScalarFunction.SPI_VERSION);
                }
                functions.add(function);
            }
        } catch (ServiceConfigurationError e) {
            throw new PluginLoadException(jar + ": cannot load its functions: " + e.getMessage());
        }
        if (functions.isEmpty()) {
            throw new PluginLoadException(jar + " lists no " + ScalarFunction.class.getName() + " in META-INF/services/"
                    + ScalarFunction.class.getName());
        }
        return functions;
    }

    /** The {@link StageType}s (Java sources, transforms, sinks) the JAR lists in its {@code META-INF/services}. */
    static List<StageType> stageTypes(Path jar) {
        List<StageType> types = new ArrayList<>();
        try {
            ServiceLoader.load(StageType.class, loader(jar)).stream()
                    .filter(provider -> provider.type().getClassLoader() == loader(jar))
                    .forEach(provider -> types.add(provider.get()));
        } catch (ServiceConfigurationError e) {
            throw new PluginLoadException(jar + ": cannot load its stage types: " + e.getMessage());
        }
        if (types.isEmpty()) {
            throw new PluginLoadException(jar + " lists no " + StageType.class.getName()
                    + " of its own in META-INF/services/" + StageType.class.getName());
        }
        return types;
    }

    private static ClassLoader loader(Path jar) {
        Path real;
        try {
            real = jar.toRealPath();
        } catch (IOException e) {
            throw new PluginLoadException("plugin JAR " + jar + " does not exist");
        }
        return LOADERS.computeIfAbsent(real, path -> {
            try (JarFile ignored = new JarFile(path.toFile())) {
                // opened only to refuse what is not a JAR with a clear message
            } catch (IOException e) {
                throw new PluginLoadException(path + " is not a JAR file: " + e.getMessage());
            }
            if (!Files.isRegularFile(path)) {
                throw new PluginLoadException(path + " is not a file");
            }
            try {
                return new URLClassLoader(new URL[] {path.toUri().toURL()}, JavaPlugins.class.getClassLoader());
            } catch (MalformedURLException e) {
                throw new PluginLoadException(path + ": " + e.getMessage());
            }
        });
    }
}
