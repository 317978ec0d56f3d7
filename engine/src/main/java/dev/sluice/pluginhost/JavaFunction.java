package dev.sluice.pluginhost;

import dev.sluice.bridge.CStrings;
import dev.sluice.bridge.DirectExport;
import dev.sluice.bridge.DirectImport;
import dev.sluice.ffm.plugin.SluiceScalarUdf;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import dev.sluice.plugin.ScalarFunction;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * A Java {@link ScalarFunction} dressed as a native plugin UDF: a {@code struct SluiceScalarUdf}
 * whose {@code invoke} is an FFM upcall stub, so the core calls it exactly as it calls a native
 * plugin's function. The struct, its strings and the stub live in {@code arena}, which the owner
 * closes only after every transform that may call it is closed.
 */
public final class JavaFunction {

    /** Upcalls made into Java functions, all pipelines together: tests prove native UDFs make none. */
    private static final AtomicLong UPCALLS = new AtomicLong();

    /** libc's free releases the messages this class mallocs: the descriptor's free_string. */
    public static final MemorySegment FREE = CStrings.FREE;

    private final ScalarFunction function;
    private final BufferAllocator allocator;
    private final List<Field> argumentFields;
    private final MemorySegment descriptor;

    /**
     * Builds the struct and its upcall stub in {@code arena} (shared: the core may call from any
     * lane thread); results are allocated from {@code allocator}.
     */
    public JavaFunction(ScalarFunction function, BufferAllocator allocator, Arena arena) {
        this.function = function;
        this.allocator = allocator;
        List<ArrowType> types = function.argumentTypes();
        this.argumentFields = new ArrayList<>();
        MemorySegment formats = arena.allocate(ValueLayout.ADDRESS, Math.max(1, types.size()));
        for (int i = 0; i < types.size(); i++) {
            Field field = Field.nullable("arg" + i, types.get(i));
            argumentFields.add(field);
            formats.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(format(field)));
        }
        descriptor = SluiceScalarUdf.allocate(arena);
        SluiceScalarUdf.n_args(descriptor, types.size());
        SluiceScalarUdf.arg_types(descriptor, formats);
        SluiceScalarUdf.return_type(
                descriptor, arena.allocateFrom(format(Field.nullable("result", function.returnType()))));
        SluiceScalarUdf.volatility(
                descriptor,
                function.deterministic()
                        ? sluice_plugin_h.SLUICE_VOLATILITY_IMMUTABLE()
                        : sluice_plugin_h.SLUICE_VOLATILITY_VOLATILE());
        SluiceScalarUdf.state(descriptor, MemorySegment.NULL);
        SluiceScalarUdf.invoke(descriptor, SluiceScalarUdf.invoke.allocate(this::invoke, arena));
    }

    /** The {@code struct SluiceScalarUdf} for {@code sluice_functions_add_scalar}. */
    public MemorySegment descriptor() {
        return descriptor;
    }

    public String name() {
        return function.name();
    }

    /** Upcalls made into Java functions so far. */
    static long upcalls() {
        return UPCALLS.get();
    }

    /** The C Data Interface format string of a field's type ("l", "u", "tsu:UTC", ...). */
    private String format(Field field) {
        try (ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            Data.exportField(allocator, field, null, schema);
            String format = PluginStrings.read(MemorySegment.ofAddress(schema.snapshot().format), "");
            schema.release();
            return format;
        }
    }

    /**
     * The function's {@code invoke} for a native caller other than the upcall stub (the
     * benchmarks' JNI callback), with the ABI's arguments as addresses: {@code args} points to the
     * argument {@code ArrowArray} pointers, {@code out} to the result struct, {@code error} to the
     * message pointer. Returns the plugin status, as the upcall does; never throws.
     */
    public int invoke(long args, long rows, long out, long error) {
        return invoke(
                MemorySegment.NULL,
                MemorySegment.ofAddress(args),
                rows,
                MemorySegment.ofAddress(out),
                MemorySegment.ofAddress(error));
    }

    /** The upcall: never throws into native code; a failure is a status and a malloc'ed message. */
    private int invoke(MemorySegment state, MemorySegment args, long rows, MemorySegment out, MemorySegment error) {
        UPCALLS.incrementAndGet();
        try {
            call(args, Math.toIntExact(rows), out);
            return sluice_plugin_h.SLUICE_PLUGIN_OK();
        } catch (Throwable e) {
            String message =
                    function.getClass().getName() + ": " + (e.getMessage() == null ? e.toString() : e.getMessage());
            CStrings.writeMessage(error, message);
            return sluice_plugin_h.SLUICE_PLUGIN_ERROR();
        }
    }

    private void call(MemorySegment args, int rows, MemorySegment out) throws Exception {
        int n = argumentFields.size();
        List<FieldVector> vectors = new ArrayList<>(n);
        DirectImport.Borrow[] borrows = new DirectImport.Borrow[n];
        try {
            MemorySegment pointers = args.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
            for (int i = 0; i < n; i++) {
                // The argument's type is known: read its struct into a vector of it, with no schema
                // to cross. The struct is borrowed for the call; the core releases it afterwards
                // unless the borrow moved it out (the result kept its buffers).
                FieldVector vector = argumentFields.get(i).createVector(allocator);
                vectors.add(vector);
                borrows[i] = DirectImport.importInto(allocator, pointers.getAtIndex(ValueLayout.ADDRESS, i), vector);
                if (vector.getValueCount() != rows) {
                    throw new IllegalStateException(
                            "argument " + (i + 1) + " has " + vector.getValueCount() + " values for " + rows + " rows");
                }
            }
            try (FieldVector result = function.invoke(vectors, rows, allocator)) {
                if (result.getValueCount() != rows) {
                    throw new IllegalStateException(
                            "returned " + result.getValueCount() + " values for " + rows + " rows");
                }
                // The core knows the return type: the array alone goes back, its C struct written
                // directly (Arrow Java's exporter costs several µs a call).
                DirectExport.exportVector(allocator, result, out);
            }
        } finally {
            // Borrows end after every vector over their buffers is closed (the result included).
            vectors.forEach(FieldVector::close);
            for (DirectImport.Borrow borrow : borrows) {
                if (borrow != null) {
                    borrow.close();
                }
            }
        }
    }
}
