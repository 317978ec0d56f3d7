package dev.sluice.state;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * One row of the state DB, as SQL sees it in table {@code state}: a JSON document {@code data}
 * stored under {@code (namespace, key)}, with the time it was written. Immutable.
 *
 * @param namespace who owns the row, e.g. the pipeline name; non-empty, no NUL character
 * @param key the row's key within the namespace, e.g. {@code source/orders/orders/0}
 * @param data a JSON document (text); {@link StateStore} validates it on write
 * @param createdAt when the row was written, at millisecond precision (what the DB keeps)
 */
public record StateRow(String namespace, String key, String data, Instant createdAt) {

    public StateRow {
        StateCodec.checkNamespace(namespace);
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(data, "data");
        // The DB stores milliseconds; truncating here makes a row equal to itself read back.
        createdAt = Objects.requireNonNull(createdAt, "createdAt").truncatedTo(ChronoUnit.MILLIS);
    }

    /** A row written now. */
    public static StateRow of(String namespace, String key, String data) {
        return new StateRow(namespace, key, data, Instant.now());
    }
}
