package dev.sluice.runtime;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigValue;
import dev.sluice.config.Location;
import dev.sluice.config.PipelineSpec;
import dev.sluice.plugin.Delivery;
import dev.sluice.plugin.NodeKind;
import java.util.ArrayList;
import java.util.List;

/**
 * The pipeline's top-level {@code delivery:} setting ({@code at_least_once}, the default, or
 * {@code exactly_once}) and where the file sets it, so a refusal can point at that line.
 */
record DeliverySetting(Delivery delivery, Location location) {

    /** The top-level key (documented in ConfigDocs' pipeline settings). */
    static final String KEY = "delivery";

    static DeliverySetting of(PipelineSpec spec) {
        ConfigValue value = spec.topLevel().get(KEY);
        if (value == null || value.isNull()) {
            return new DeliverySetting(Delivery.AT_LEAST_ONCE, null);
        }
        if (value.value() instanceof String name && Delivery.CONFIG_NAMES.contains(name)) {
            return new DeliverySetting(Delivery.parse(name), value.location());
        }
        throw new ConfigException(
                value.location(),
                "delivery must be one of " + String.join(", ", Delivery.CONFIG_NAMES) + ", got " + value.describe());
    }

    /**
     * Exactly-once needs every source and sink to take part ({@code StageType.supportsExactlyOnce}):
     * one problem at each node that cannot, naming the line that asks for the mode.
     */
    List<ConfigException> problems(List<PipelineNode> order) {
        List<ConfigException> problems = new ArrayList<>();
        if (delivery != Delivery.EXACTLY_ONCE) {
            return problems;
        }
        for (PipelineNode node : order) {
            if (node.kind() != NodeKind.TRANSFORM && !node.type.supportsExactlyOnce()) {
                problems.add(new ConfigException(
                        node.spec.location(),
                        node.name(),
                        "delivery: exactly_once (line " + location.line()
                                + ") needs every source and sink to commit its epoch "
                                + "atomically with the others, and a `" + node.type.name() + "` "
                                + node.kind().word() + " cannot: only kafka sources and sinks can; "
                                + "use delivery: at_least_once with idempotent sinks"));
            }
        }
        if (problems.isEmpty() && order.stream().noneMatch(n -> n.kind() == NodeKind.SINK)) {
            problems.add(new ConfigException(location, "delivery: exactly_once needs at least one sink"));
        }
        return problems;
    }
}
