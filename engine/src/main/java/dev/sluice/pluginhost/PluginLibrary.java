package dev.sluice.pluginhost;

import dev.sluice.ffm.plugin.SluiceComponent;
import dev.sluice.ffm.plugin.SluicePlugin;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A native plugin: a shared library loaded by path with FFM, its {@code sluice_plugin_entry}
 * called once and its descriptor read ({@code plugins-api/include/sluice_plugin.h}). A library is
 * loaded once per process and never unloaded: batches it produced carry release callbacks into
 * its code and may outlive any pipeline, so unloading could never be proven safe.
 */
public final class PluginLibrary {

    /** The one symbol a plugin exports. */
    public static final String ENTRY_SYMBOL = "sluice_plugin_entry";

    private static final Map<Path, PluginLibrary> LOADED = new ConcurrentHashMap<>();
    private static final MethodHandle ENTRY =
            Linker.nativeLinker().downcallHandle(sluice_plugin_h.sluice_plugin_entry$descriptor());
    /** ELF e_machine of this JVM's platform, for a clear "built for another platform". */
    private static final Map<String, Integer> ELF_MACHINES = Map.of("amd64", 62, "x86_64", 62, "aarch64", 183);

    /** One component the plugin offers. */
    public record Component(int kind, String name, String description, String optionsSchema, MemorySegment vtable) {

        /** The kind's word, as {@code sluice plugin inspect} prints it. */
        public String kindName() {
            return kindName(kind);
        }

        static String kindName(int kind) {
            return switch (kind) {
                case 1 -> "source";
                case 2 -> "transform";
                case 3 -> "sink";
                case 4 -> "scalar UDF";
                case 5 -> "preprocessor";
                case 6 -> "side output";
                default -> "unknown kind " + kind;
            };
        }
    }

    private final Path path;
    private final String name;
    private final String version;
    private final int abiMajor;
    private final int abiMinor;
    private final List<Component> components;
    private final MemorySegment freeString;
    private final MemorySegment freeBytes;

    private PluginLibrary(Path path, MemorySegment descriptor) {
        this.path = path;
        this.abiMajor = SluicePlugin.abi_major(descriptor);
        this.abiMinor = SluicePlugin.abi_minor(descriptor);
        if (abiMajor != sluice_plugin_h.SLUICE_PLUGIN_ABI_MAJOR()) {
            throw new PluginLoadException(path + " was built for plugin ABI " + abiMajor + "." + abiMinor
                    + " but this engine speaks " + sluice_plugin_h.SLUICE_PLUGIN_ABI_MAJOR() + "."
                    + sluice_plugin_h.SLUICE_PLUGIN_ABI_MINOR() + "; rebuild it against this engine's sluice_plugin.h");
        }
        this.name = PluginStrings.read(SluicePlugin.name(descriptor), "?");
        this.version = PluginStrings.read(SluicePlugin.version(descriptor), "?");
        this.freeString = SluicePlugin.free_string(descriptor);
        this.freeBytes = SluicePlugin.free_bytes(descriptor);
        long count = SluicePlugin.n_components(descriptor);
        if (count < 0 || count > 10_000) {
            throw new PluginLoadException(path + ": the descriptor claims " + count + " components");
        }
        MemorySegment array = SluicePlugin.components(descriptor).reinterpret(count * SluiceComponent.sizeof());
        List<Component> list = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            MemorySegment c = SluiceComponent.asSlice(array, i);
            list.add(new Component(
                    SluiceComponent.kind(c),
                    PluginStrings.read(SluiceComponent.name(c), ""),
                    PluginStrings.read(SluiceComponent.description(c), null),
                    PluginStrings.read(SluiceComponent.options_schema(c), null),
                    SluiceComponent.vtable(c)));
        }
        this.components = List.copyOf(list);
    }

    /**
     * Loads the library at {@code path} (absolute), or returns the one already loaded from the
     * same file.
     *
     * @throws PluginLoadException naming the file and why it is no plugin for this engine
     */
    public static PluginLibrary load(Path path) {
        Path real;
        try {
            real = path.toRealPath();
        } catch (NoSuchFileException e) {
            throw new PluginLoadException("plugin library " + path + " does not exist");
        } catch (IOException e) {
            throw new PluginLoadException("cannot read plugin library " + path + ": " + e.getMessage());
        }
        PluginLibrary loaded = LOADED.get(real);
        if (loaded != null) {
            return loaded;
        }
        synchronized (LOADED) {
            return LOADED.computeIfAbsent(real, PluginLibrary::open);
        }
    }

    private static PluginLibrary open(Path path) {
        checkSharedLibrary(path);
        SymbolLookup lookup;
        try {
            // The global arena: never unloaded (see the class comment).
            lookup = SymbolLookup.libraryLookup(path, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new PluginLoadException(path + " cannot be loaded as a shared library: " + e.getMessage());
        }
        MemorySegment entry = lookup.find(ENTRY_SYMBOL)
                .orElseThrow(() -> new PluginLoadException(path + " is a shared library but exports no " + ENTRY_SYMBOL
                        + " symbol: it is not a Sluice plugin (see plugins-api/include/sluice_plugin.h)"));
        MemorySegment descriptor;
        try {
            descriptor = (MemorySegment) ENTRY.invokeExact(entry);
        } catch (Throwable e) {
            throw new PluginLoadException(path + ": " + ENTRY_SYMBOL + " failed: " + e);
        }
        if (descriptor.address() == 0) {
            throw new PluginLoadException(path + ": " + ENTRY_SYMBOL + " returned NULL");
        }
        return new PluginLibrary(path, descriptor.reinterpret(SluicePlugin.sizeof()));
    }

    /** Refuses what is not an ELF shared object for this machine, before dlopen would say less. */
    private static void checkSharedLibrary(Path path) {
        if (Files.isDirectory(path)) {
            throw new PluginLoadException("plugin library " + path + " is a directory");
        }
        byte[] header = new byte[20];
        int read;
        try (InputStream in = Files.newInputStream(path)) {
            read = in.readNBytes(header, 0, header.length);
        } catch (IOException e) {
            throw new PluginLoadException("cannot read plugin library " + path + ": " + e.getMessage());
        }
        boolean elf =
                read == header.length && header[0] == 0x7f && header[1] == 'E' && header[2] == 'L' && header[3] == 'F';
        if (!elf) {
            throw new PluginLoadException(path + " is not a shared library (no ELF header); a plugin is a .so built "
                    + "for " + System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        }
        int type = (header[16] & 0xff) | (header[17] & 0xff) << 8;
        int machine = (header[18] & 0xff) | (header[19] & 0xff) << 8;
        Integer expected = ELF_MACHINES.get(System.getProperty("os.arch"));
        if (header[4] != 2 || (expected != null && machine != expected)) {
            throw new PluginLoadException(path + " is a shared library for another platform (ELF machine " + machine
                    + ", class " + header[4] + "); this engine runs on " + System.getProperty("os.arch"));
        }
        if (type != 3) {
            throw new PluginLoadException(path + " is an ELF file but not a shared library (type " + type
                    + "); build the plugin as a cdylib / with -shared -fPIC");
        }
    }

    public Path path() {
        return path;
    }

    public String name() {
        return name;
    }

    public String version() {
        return version;
    }

    public String abiVersion() {
        return abiMajor + "." + abiMinor;
    }

    public List<Component> components() {
        return components;
    }

    /** The component of {@code kind} named {@code componentName}, if the plugin offers it. */
    public Optional<Component> component(int kind, String componentName) {
        return components.stream()
                .filter(c -> c.kind() == kind && c.name().equals(componentName))
                .findFirst();
    }

    /** The names of the components of {@code kind}, for "unknown component" messages. */
    public List<String> componentNames(int kind) {
        return components.stream()
                .filter(c -> c.kind() == kind)
                .map(Component::name)
                .toList();
    }

    /** The plugin's {@code free_string}, which releases the strings it hands over. */
    public MemorySegment freeString() {
        return freeString;
    }

    /** The plugin's {@code free_bytes}, which releases source snapshots. */
    public MemorySegment freeBytes() {
        return freeBytes;
    }

    @Override
    public String toString() {
        return "plugin '" + name + "' " + version + " (" + path + ")";
    }
}
