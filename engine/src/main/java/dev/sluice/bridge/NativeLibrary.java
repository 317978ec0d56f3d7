package dev.sluice.bridge;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Finds and loads {@code libsluice_core}: from {@code -Dsluice.native.path} (the file, or a
 * directory holding it) when set, else from inside the JAR, extracted once into a private
 * cache directory named by the library's hash (so an unchanged library is reused and a new
 * build never overwrites one that another process has loaded).
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
        byte[] bytes;
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("this build has no native core for " + platform() + " (" + resource
                        + " is not on the class path); build it with `mvn package` on this platform or set -D"
                        + PATH_PROPERTY);
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource + ": " + e.getMessage(), e);
        }
        Path dir = cacheRoot().resolve(sha256(bytes).substring(0, 16));
        Path target = dir.resolve(FILE_NAME);
        try {
            if (!Files.isRegularFile(target) || Files.size(target) != bytes.length) {
                Files.createDirectories(dir);
                Path temp = Files.createTempFile(dir, FILE_NAME, ".tmp");
                Files.write(temp, bytes);
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot extract the native core to " + target + ": " + e.getMessage()
                    + " (set -D" + CACHE_PROPERTY + " to a writable directory)", e);
        }
        return target;
    }

    private static Path cacheRoot() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("sluice").resolve("native");
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
