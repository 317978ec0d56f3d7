package dev.sluice.config;

import java.nio.file.Path;
import java.util.Comparator;
import java.util.Objects;

/**
 * A position in a pipeline file, so that every configuration error can point at the text to fix.
 *
 * <p>Lines and columns are 1-based, as editors show them. A line or column of 0 means "unknown"
 * (for example a file that could not be read at all); {@link #toString()} then leaves it out.
 *
 * @param file the pipeline file, as given by the caller (not made absolute, so messages stay short)
 * @param line 1-based line, or 0 if unknown
 * @param column 1-based column, or 0 if unknown
 */
public record Location(Path file, int line, int column) implements Comparable<Location> {

    private static final Comparator<Location> ORDER = Comparator.comparing(
                    (Location l) -> l.file().toString())
            .thenComparingInt(Location::line)
            .thenComparingInt(Location::column);

    /** Checks that the file is given and that line and column are not negative. */
    public Location {
        Objects.requireNonNull(file, "file");
        if (line < 0 || column < 0) {
            throw new IllegalArgumentException("negative line or column: " + line + ":" + column);
        }
    }

    /** A location that names only the file, for problems with the file as a whole. */
    public static Location of(Path file) {
        return new Location(file, 0, 0);
    }

    /** Renders {@code file:line:column}, the form compilers use and editors can jump to. */
    @Override
    public String toString() {
        if (line == 0) {
            return file.toString();
        }
        return column == 0 ? file + ":" + line : file + ":" + line + ":" + column;
    }

    /** Orders by file name, then line, then column, so reported problems read top to bottom. */
    @Override
    public int compareTo(Location other) {
        return ORDER.compare(this, other);
    }
}
