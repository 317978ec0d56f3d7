package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Location;
import dev.sluice.config.ParsedConfig;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.config.StandardKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The files a pipeline reads and writes, from its nodes' path settings: a sink's output file
 * ({@code StageType.outputFile}) and every dead letter are written, every other path (a file
 * source's, a side table's, a plugin library) is read. A pipeline that would write a file it
 * reads — a file sink starting over replaces its input while the source reads it: the rows not
 * yet read are gone — or write one file from two places, each replacing the other's rows, is
 * refused before anything opens. A directory (of part files, or read file by file) counts for
 * every file inside it.
 */
public final class FileClaims {

    private FileClaims() {}

    /** One node's use of one file (node null: the pipeline file, read to define the pipeline). */
    private record Claim(Path path, Path real, boolean writes, String node, String what, Location where) {}

    /**
     * The conflicts among the files of {@code order}'s nodes and the pipeline file itself, each
     * reported at the later claim. {@code deadLetterOf} gives a node's dead-letter file, if it
     * has one.
     */
    static List<ConfigException> problems(
            Path pipelineFile, List<PipelineNode> order, Function<PipelineNode, Path> deadLetterOf) {
        List<Claim> claims = new ArrayList<>();
        claims.add(claim(pipelineFile, false, null, "the pipeline file", Location.of(pipelineFile)));
        claims.addAll(claims(order, deadLetterOf));
        List<ConfigException> problems = new ArrayList<>();
        for (int later = 1; later < claims.size(); later++) {
            Claim b = claims.get(later);
            for (int earlier = 0; earlier < later; earlier++) {
                Claim a = claims.get(earlier);
                if ((a.writes || b.writes) && overlap(a, b)) {
                    problems.add(new ConfigException(b.where, b.node, conflict(a, b)));
                    break;
                }
            }
        }
        return problems;
    }

    /**
     * The files {@code order}'s nodes write (symbolic links resolved as far as they exist), each
     * with the node that writes it.
     */
    static Map<Path, String> written(List<PipelineNode> order, Function<PipelineNode, Path> deadLetterOf) {
        Map<Path, String> written = new LinkedHashMap<>();
        for (Claim claim : claims(order, deadLetterOf)) {
            if (claim.writes) {
                written.putIfAbsent(claim.real, claim.node);
            }
        }
        return written;
    }

    /** Whether two files, as {@link #written} gives them, are one, or one is inside the other. */
    public static boolean overlapping(Path a, Path b) {
        return a.startsWith(b) || b.startsWith(a);
    }

    private static List<Claim> claims(List<PipelineNode> order, Function<PipelineNode, Path> deadLetterOf) {
        List<Claim> claims = new ArrayList<>();
        for (PipelineNode node : order) {
            Optional<Path> output = node.kind() == NodeKind.SINK ? node.type.outputFile(node.config) : Optional.empty();
            addPaths(claims, node.name(), node.config, output.orElse(null), "");
            Path deadLetter = deadLetterOf.apply(node);
            if (deadLetter != null) {
                Location where = node.config.has(StandardKeys.DEAD_LETTER)
                        ? node.config.locationOf(StandardKeys.DEAD_LETTER)
                        : node.config.locationOf(StandardKeys.ON_ERROR);
                claims.add(claim(deadLetter, true, node.name(), "its dead letter", where));
            }
        }
        return claims;
    }

    /** The path settings of {@code config} (and of its sections, such as side tables). */
    private static void addPaths(List<Claim> claims, String node, ParsedConfig config, Path output, String prefix) {
        for (Map.Entry<String, Object> entry : config.values().entrySet()) {
            String key = entry.getKey();
            if (entry.getValue() instanceof Path path && !key.equals(StandardKeys.DEAD_LETTER)) {
                boolean writes = path.equals(output);
                claims.add(claim(path, writes, node, "`" + prefix + key + "`", config.locationOf(key)));
            } else if (entry.getValue() instanceof Map<?, ?> sections) {
                for (Map.Entry<?, ?> section : sections.entrySet()) {
                    if (section.getValue() instanceof ParsedConfig nested) {
                        addPaths(claims, node, nested, null, prefix + key + "." + section.getKey() + ".");
                    }
                }
            }
        }
    }

    private static Claim claim(Path path, boolean writes, String node, String what, Location where) {
        Path absolute = path.toAbsolutePath().normalize();
        return new Claim(absolute, real(absolute), writes, node, what, where);
    }

    /** The path with symbolic links resolved as far as it exists, so two names of one file meet. */
    static Path real(Path path) {
        Path existing = path;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return path;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(path)).normalize();
        } catch (IOException e) {
            return path;
        }
    }

    /** The same file, or one inside the other (a directory). */
    private static boolean overlap(Claim a, Claim b) {
        return overlapping(a.real, b.real);
    }

    private static String conflict(Claim a, Claim b) {
        if (a.node == null) {
            return b.what + " " + b.path + " is the pipeline file itself: the run would replace its own definition; "
                    + "write to another file";
        }
        String by = (a.writes ? "written" : "read") + " by node '" + a.node + "'"
                + (a.where == null ? "" : " (line " + a.where.line() + ")");
        String relation = a.real.equals(b.real)
                ? " is also " + by + (a.path.equals(b.path) ? "" : " as " + a.path)
                : " and " + a.path + ", " + by + ", are one inside the other (a directory)";
        String cause = a.writes && b.writes
                ? "each would replace the other's rows; give each its own file"
                : "writing a file the pipeline reads replaces it before it is read, and the rows not yet read are lost; "
                        + "write to another file";
        return b.what + " " + b.path + relation + ": " + cause;
    }
}
