package dev.sluice.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A problem in a pipeline file that the user has to fix, located as precisely as we can.
 *
 * <p>A single problem's message is one paragraph, {@code <file>:<line>:<col>: node '<node>': <reason>},
 * with the location and node parts left out when unknown. Several problems found in one pass are
 * carried by one exception made with {@link #of(List)}: its {@link #problems()} lists them and its
 * message has one such line per problem, in file order. Callers that want every problem should
 * therefore always iterate {@link #problems()}, which for a single problem is a list of itself.
 */
public final class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    // Problems without a location sort first: they concern the file as a whole.
    private static final Comparator<ConfigException> FILE_ORDER =
            Comparator.comparing(ConfigException::location, Comparator.nullsFirst(Comparator.naturalOrder()));

    private final transient Location location;
    private final String node;
    private final String reason;
    private final transient List<ConfigException> problems;

    /**
     * A single problem.
     *
     * @param location where it is, or null if unknown
     * @param node the name of the node it concerns, or null
     * @param reason what is wrong; line breaks are folded so the message stays one paragraph
     */
    public ConfigException(Location location, String node, String reason) {
        super(format(location, node, oneParagraph(reason)));
        this.location = location;
        this.node = node;
        this.reason = oneParagraph(reason);
        this.problems = List.of(this);
    }

    /** A single problem that concerns no particular node. */
    public ConfigException(Location location, String reason) {
        this(location, null, reason);
    }

    private ConfigException(List<ConfigException> sorted) {
        super(sorted.stream().map(ConfigException::getMessage).collect(Collectors.joining("\n")));
        this.location = null;
        this.node = null;
        this.reason = sorted.size() + " problems";
        this.problems = sorted;
    }

    /**
     * Combines problems into one exception: the problem itself if there is exactly one, otherwise an
     * exception listing them all (nested combinations are flattened, order is by location).
     *
     * @throws IllegalArgumentException if {@code problems} is empty
     */
    public static ConfigException of(List<ConfigException> problems) {
        List<ConfigException> flat = new ArrayList<>();
        for (ConfigException p : problems) {
            flat.addAll(p.problems());
        }
        if (flat.isEmpty()) {
            throw new IllegalArgumentException("no problems to report");
        }
        if (flat.size() == 1) {
            return flat.getFirst();
        }
        flat.sort(FILE_ORDER);
        return new ConfigException(List.copyOf(flat));
    }

    /** Where the problem is; null if unknown or if this exception combines several problems. */
    public Location location() {
        return location;
    }

    /** The node the problem concerns; null if none or if this exception combines several problems. */
    public String node() {
        return node;
    }

    /** What is wrong, without location or node; for a combination, "N problems". */
    public String reason() {
        return reason;
    }

    /** The individual problems: a list of this exception itself unless made by {@link #of(List)}. */
    public List<ConfigException> problems() {
        return problems;
    }

    private static String format(Location location, String node, String reason) {
        StringBuilder out = new StringBuilder();
        if (location != null) {
            out.append(location).append(": ");
        }
        if (node != null) {
            out.append("node '").append(node).append("': ");
        }
        return out.append(reason).toString();
    }

    private static String oneParagraph(String reason) {
        return Objects.requireNonNull(reason, "reason").strip().replaceAll("\\s*\\R\\s*", " ");
    }
}
