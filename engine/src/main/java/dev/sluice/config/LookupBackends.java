package dev.sluice.config;

import dev.sluice.plugin.LookupBackend;
import java.util.Collection;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The lookup backends a dynamic table may be a cache of ({@code backend: NAME}), found like stage
 * types: every {@link LookupBackend} in {@code META-INF/services} of the class path. The runtime
 * knows them only through the SPI.
 */
public final class LookupBackends {

    private static final LookupBackends INSTALLED = load();

    private final Map<String, LookupBackend> backends = new TreeMap<>();

    private LookupBackends() {}

    /** The backends on the class path. */
    public static LookupBackends installed() {
        return INSTALLED;
    }

    private static LookupBackends load() {
        LookupBackends registry = new LookupBackends();
        for (LookupBackend backend : ServiceLoader.load(LookupBackend.class, LookupBackends.class.getClassLoader())) {
            if (backend.spiVersion() != LookupBackend.SPI_VERSION) {
                throw new IllegalStateException("lookup backend '" + backend.name() + "' ("
                        + backend.getClass().getName() + ") was built against version " + backend.spiVersion()
                        + " of the lookup SPI, but this engine implements version " + LookupBackend.SPI_VERSION);
            }
            SettingsParser.check(backend.config()); // a bad default fails at startup, not in some pipeline
            if (registry.backends.put(backend.name(), backend) != null) {
                throw new IllegalArgumentException("two lookup backends are named '" + backend.name() + "'");
            }
        }
        return registry;
    }

    /** The backend of this name, or null. */
    public LookupBackend get(String name) {
        return backends.get(name);
    }

    public Collection<LookupBackend> all() {
        return backends.values();
    }
}
