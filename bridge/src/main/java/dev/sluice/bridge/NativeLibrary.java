package dev.sluice.bridge;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.jar.JarEntry;

/**
 * Finds and loads {@code libsluice_core}: from {@code -Dsluice.native.path} (the file, or a
 * directory holding it) when set, else from inside the JAR, extracted once into a private
 * cache directory named by the library's size and CRC (so an unchanged library is reused
 * without reading it, and a new build never overwrites one another process has loaded).
 */
public final class NativeLibrary {

    public static final String PATH_PROPERTY = "sluice.native.path";
    public static final String CACHE_PROPERTY = "sluice.native.cache";
    static final String FILE_NAME = System.mapLibraryName("sluice_core");

    private static Path loadedFrom;

    private NativeLibrary() {}

    /** Loads the library once; later calls return where it was loaded from. */
    public static synchronized Path load() {
        if (loadedFrom == null) {
            Path path = locate();
            try {
                System.load(path.toAbsolutePath().toString());
            } catch (UnsatisfiedLinkError e) {
                throw new IllegalStateException("cannot load the native core " + path + ": " + e.getMessage(), e);
            }
            loadedFrom = path;
        }
        return loadedFrom;
    }

    private static Path locate() {
        String configured = System.getProperty(PATH_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            Path path = Path.of(configured);
            if (Files.isDirectory(path)) {
                path = path.resolve(FILE_NAME);
            }
            if (!Files.isRegularFile(path)) {
                throw new IllegalStateException("-D" + PATH_PROPERTY + " names " + path + ", which does not exist");
            }
            return path;
        }
        return extractFromJar();
    }

    static String platform() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        String osName = os.contains("linux") ? "linux" : os.contains("mac") ? "macos" : os.replace(' ', '_');
        String archName = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return osName + "-" + archName;
    }

    private static Path extractFromJar() {
        String resource = "/native/" + platform() + "/" + FILE_NAME;
        URL url = NativeLibrary.class.getResource(resource);
        if (url == null) {
            throw new IllegalStateException("this build has no native core for " + platform() + " (" + resource
                    + " is not on the class path); build it with `mvn package` on this platform or set -D"
                    + PATH_PROPERTY);
        }
        return extractOnce(url, FILE_NAME);
    }

    /**
     * Extracts a library from the class path into the cache once and returns its path; later
     * calls (and later processes) reuse the file. Also used for RocksDB's JNI library, which
     * would otherwise be copied to a temporary file at every start.
     */
    public static Path extractOnce(URL url, String fileName) {
        // Name the cache entry by the library's identity without reading it: a 150 MB library
        // would otherwise be inflated and hashed at every start (seconds of CPU).
        Path dir = cacheRoot().resolve(identity(url));
        Path target = dir.resolve(fileName);
        if (Files.isRegularFile(target)) {
            return target;
        }
        try (InputStream in = url.openStream()) {
            Files.createDirectories(dir);
            Path temp = Files.createTempFile(dir, fileName, ".tmp");
            Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot extract " + fileName + " to " + target + ": " + e.getMessage() + " (set -D" + CACHE_PROPERTY
                            + " to a writable directory)",
                    e);
        }
        return target;
    }

    /**
     * Size and CRC-32 of the library's JAR entry (both in the JAR's directory, so free to read);
     * for a library in a class directory (tests), its size and modification time.
     */
    private static String identity(URL url) {
        try {
            URLConnection connection = url.openConnection();
            if (connection instanceof JarURLConnection jar) {
                jar.setUseCaches(false);
                JarEntry entry = jar.getJarEntry();
                return Long.toHexString(entry.getSize()) + "-" + Long.toHexString(entry.getCrc());
            }
            Path file = Path.of(url.toURI());
            return Long.toHexString(Files.size(file)) + "-"
                    + Long.toHexString(Files.getLastModifiedTime(file).toMillis());
        } catch (IOException | java.net.URISyntaxException e) {
            throw new IllegalStateException("cannot read " + url + ": " + e.getMessage(), e);
        }
    }

    private static Path cacheRoot() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return sluiceCache().resolve("native");
    }

    /** Sluice's per-user cache, {@code $XDG_CACHE_HOME/sluice} (default {@code ~/.cache/sluice}). */
    public static Path sluiceCache() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("sluice");
    }
}
