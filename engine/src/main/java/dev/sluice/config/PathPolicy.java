package dev.sluice.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The directories a pipeline's files must stay inside: its top-level {@code paths.allowed_dirs}
 * (relative entries against the pipeline file's directory), by default the pipeline file's
 * directory and the working directory. Every {@link ConfigType#PATH} setting goes through
 * {@link #refusal} when it is converted, so file sources and sinks, dead letters, side tables and
 * schema files of any stage type — built in or a plugin — are checked at validation, in this one
 * place. Paths are compared canonically: {@code ..} and symbolic links (also dangling ones, and
 * those in directories that exist) are resolved first, so a link cannot lead outside.
 */
public final class PathPolicy {

    /** The top-level key. */
    public static final String KEY = "paths";
    /** The key inside {@code paths:}. */
    public static final String ALLOWED_DIRS = "allowed_dirs";

    private final List<Path> allowed;
    private final List<Path> canonical;
    /** The setting that lists the directories, named in refusals. */
    private final String setting;

    private PathPolicy(List<Path> allowed) {
        this(allowed, KEY + "." + ALLOWED_DIRS);
    }

    private PathPolicy(List<Path> allowed, String setting) {
        this.setting = setting;
        this.allowed = List.copyOf(allowed);
        List<Path> resolved = new ArrayList<>();
        for (Path dir : allowed) {
            resolved.add(canonicalOrAbsolute(dir));
        }
        this.canonical = List.copyOf(resolved);
    }

    /** The default: the pipeline file's directory and the working directory. */
    public static PathPolicy defaults(Path pipelineFile) {
        Path here = Path.of("").toAbsolutePath();
        Path parent = pipelineFile.toAbsolutePath().getParent();
        return new PathPolicy(parent == null || parent.equals(here) ? List.of(here) : List.of(parent, here));
    }

    /**
     * Reads the top-level {@code paths:} block ({@code null}: absent), adding its problems to
     * {@code problems}; the defaults stand in when it is absent or wrong.
     */
    static PathPolicy read(ConfigValue block, Path pipelineFile, ConfigProblems problems) {
        if (block == null || block.isNull()) {
            return defaults(pipelineFile);
        }
        if (!block.isMap()) {
            problems.add(
                    block.location(),
                    null,
                    "'" + KEY + "' must be a map such as {" + ALLOWED_DIRS + ": [data, /srv/out]}, got "
                            + block.describe());
            return defaults(pipelineFile);
        }
        List<Path> dirs = null;
        for (Map.Entry<String, ConfigValue> entry : block.asMap().entrySet()) {
            if (!entry.getKey().equals(ALLOWED_DIRS)) {
                problems.add(
                        block.keyLocation(entry.getKey()),
                        null,
                        Suggestions.unknown(
                                "unknown key '" + KEY + "." + entry.getKey() + "'",
                                entry.getKey(),
                                List.of(ALLOWED_DIRS),
                                "keys"));
                continue;
            }
            dirs = readDirs(entry.getValue(), pipelineFile, problems);
        }
        return dirs == null || dirs.isEmpty() ? defaults(pipelineFile) : new PathPolicy(dirs);
    }

    /**
     * A policy of {@code dirs}, or of {@code defaults} when {@code value} is absent, read from
     * {@code value} (a directory or a list of them, relative to the pipeline file) as the
     * setting {@code setting} (e.g. {@code plugins.allowed_dirs}), which refusals name.
     */
    public static PathPolicy readSetting(
            ConfigValue value, Path pipelineFile, String setting, List<Path> defaults, ConfigProblems problems) {
        if (value == null) {
            return new PathPolicy(defaults, setting);
        }
        List<Path> dirs = readDirs(value, pipelineFile, problems, setting);
        return new PathPolicy(dirs.isEmpty() ? defaults : dirs, setting);
    }

    private static List<Path> readDirs(ConfigValue value, Path pipelineFile, ConfigProblems problems) {
        return readDirs(value, pipelineFile, problems, KEY + "." + ALLOWED_DIRS);
    }

    private static List<Path> readDirs(ConfigValue value, Path pipelineFile, ConfigProblems problems, String setting) {
        List<ConfigValue> entries = value.isList() ? value.asList() : List.of(value);
        List<Path> dirs = new ArrayList<>();
        if (entries.isEmpty() || value.isNull()) {
            problems.add(value.location(), null, setting + " must list at least one directory");
            return dirs;
        }
        Path base = pipelineFile.toAbsolutePath().getParent();
        for (ConfigValue entry : entries) {
            if (!entry.isScalar()
                    || entry.isNull()
                    || String.valueOf(entry.value()).isBlank()) {
                problems.add(entry.location(), null, setting + " entries must be directories, got " + entry.describe());
                continue;
            }
            try {
                dirs.add(ValueConverter.resolvePath(String.valueOf(entry.value()), entry, base));
            } catch (ValueConverter.Failure e) {
                problems.add(e.location(), null, setting + ": " + e.getMessage());
            }
        }
        return dirs;
    }

    /** The allowed directories as configured (absolute), in order. */
    public List<Path> allowedDirs() {
        return allowed;
    }

    /**
     * Why {@code path} (absolute) may not be used, or null if it lies inside an allowed
     * directory once {@code ..} and symbolic links are resolved.
     */
    public String refusal(Path path) {
        Path real;
        try {
            real = canonical(path);
        } catch (IOException | InvalidPathException e) {
            return "cannot resolve " + path + " (" + e.getMessage() + ")";
        }
        for (Path dir : canonical) {
            if (real.startsWith(dir)) {
                return null;
            }
        }
        String resolved = real.equals(path) ? "" : " (resolves to " + real + ")";
        return path + resolved + " is outside the directories this pipeline may use ("
                + String.join(", ", allowed.stream().map(Path::toString).toList()) + "); add a directory holding it to "
                + setting + " at the top of the pipeline file to allow it";
    }

    /**
     * The real path: {@code ..} removed and every symbolic link followed, also where the file
     * itself does not exist yet (the part that exists is resolved, the rest appended) and for a
     * dangling link (followed to where a write would create its target).
     */
    static Path canonical(Path path) throws IOException {
        return canonical(path.toAbsolutePath().normalize(), 0);
    }

    private static Path canonical(Path absolute, int depth) throws IOException {
        if (depth > 40) {
            throw new IOException("too many levels of symbolic links");
        }
        Path existing = absolute;
        while (existing.getParent() != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        Path rest = existing.relativize(absolute);
        Path real;
        if (Files.exists(existing)) {
            real = existing.toRealPath();
        } else {
            // A dangling symbolic link: writing to it creates its target.
            Path target = Files.readSymbolicLink(existing);
            real = canonical(existing.getParent().toRealPath().resolve(target).normalize(), depth + 1);
        }
        return rest.toString().isEmpty() ? real : real.resolve(rest);
    }

    private static Path canonicalOrAbsolute(Path dir) {
        try {
            return canonical(dir);
        } catch (IOException e) {
            return dir.toAbsolutePath().normalize();
        }
    }

    @Override
    public String toString() {
        return KEY + "." + ALLOWED_DIRS + allowed;
    }
}
