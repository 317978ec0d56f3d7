package dev.sluice.config;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects configuration problems so a whole file can be checked in one pass and every problem
 * reported together, instead of making the user fix them one run at a time.
 */
public final class ConfigProblems {

    private final List<ConfigException> problems = new ArrayList<>();

    /** An empty collection of problems. */
    public ConfigProblems() {}

    /** Adds a problem (or each problem of a combined exception). */
    public void add(ConfigException problem) {
        problems.addAll(problem.problems());
    }

    /** Adds a problem built from its parts; see {@link ConfigException#ConfigException(Location, String, String)}. */
    public void add(Location location, String node, String reason) {
        problems.add(new ConfigException(location, node, reason));
    }

    /** Whether no problem has been added. */
    public boolean isEmpty() {
        return problems.isEmpty();
    }

    /** The problems added so far, in the order they were added. */
    public List<ConfigException> list() {
        return List.copyOf(problems);
    }

    /** Throws all problems added so far as one {@link ConfigException}, if there are any. */
    public void throwIfAny() {
        if (!problems.isEmpty()) {
            throw ConfigException.of(problems);
        }
    }
}
