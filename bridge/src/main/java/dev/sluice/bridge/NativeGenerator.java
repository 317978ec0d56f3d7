package dev.sluice.bridge;

import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/** The Nexmark event generator in the core: rows are produced as Arrow columns natively. */
public final class NativeGenerator extends NativeHandle {

    private final Schema schema;

    private NativeGenerator(long handle, BufferAllocator allocator) {
        super("generator", handle);
        this.schema = ArrowC.importSchema(allocator, struct -> core().generatorSchema(handle, struct));
    }

    /** {@code options}: entity (bid|auction|person), seed, count, first_event, base_time_ms, events_per_second. */
    public static NativeGenerator create(BufferAllocator allocator, Map<String, ?> options) {
        return new NativeGenerator(core().generatorCreate(Json.object(options)), allocator);
    }

    public Schema schema() {
        return schema;
    }

    /** Up to {@code maxRows} rows, or null when the event sequence has ended. */
    public NativeBatch next(long maxRows) {
        return NativeBatch.ofNullable(core().generatorNext(address(), maxRows));
    }

    /** The next event number to be examined: the resume position. */
    public long position() {
        return core().generatorPosition(address());
    }

    @Override
    protected void free(long address) {
        core().generatorFree(address);
    }
}
