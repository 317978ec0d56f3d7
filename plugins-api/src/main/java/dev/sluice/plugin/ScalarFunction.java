package dev.sluice.plugin;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * A scalar SQL function written in Java, callable by name from every {@code sql} transform of a
 * pipeline that lists its JAR under {@code plugins.udfs} ({@code - jar: lib/my-udfs.jar}). The
 * JAR names its functions in {@code META-INF/services/dev.sluice.plugin.ScalarFunction}; each needs
 * a public no-argument constructor.
 *
 * <p>The core calls it inside the plan once per batch, through an FFM upcall: the arguments
 * arrive as Arrow Java vectors over the core's buffers (zero-copy) and the result goes back the
 * same way. It runs on the lane's thread, possibly several lanes at once, so it must be
 * thread-safe. An exception fails the batch with its message; it never crosses into native code.
 */
public interface ScalarFunction {

    /** The major version of this interface; the engine refuses a function built against another. */
    int SPI_VERSION = 1;

    /** Implement as {@code return SPI_VERSION;} (compiled into the implementing class). */
    int spiVersion();

    /** The SQL name: lowercase letters, digits and '_'. */
    String name();

    /** The argument types; SQL casts the arguments to them. */
    List<ArrowType> argumentTypes();

    /** The result type. */
    ArrowType returnType();

    /**
     * Whether the result depends only on the arguments: the planner may then compute it once for
     * constant arguments. Default: true.
     */
    default boolean deterministic() {
        return true;
    }

    /**
     * Computes {@code rowCount} results. The arguments (borrowed: do not close them) have the
     * declared types and {@code rowCount} rows each; a constant argument arrives repeated.
     *
     * @return a new vector of {@link #returnType()} with {@code rowCount} values, allocated from
     *     {@code allocator}; the engine closes it
     */
    FieldVector invoke(List<FieldVector> arguments, int rowCount, BufferAllocator allocator) throws Exception;
}
