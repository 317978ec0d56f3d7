package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OwnershipTransferResult;
import org.apache.arrow.memory.ReferenceManager;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Reads a C Data Interface {@code ArrowArray} of a known type into an Arrow Java vector directly
 * with FFM, the mirror of {@link DirectExport}: the vector's buffers are the struct's own memory
 * (zero-copy), wrapped without allocation or accounting, and an array without a validity buffer
 * gets a per-thread all-valid bitmap. Arrow Java's
 * {@link Data#importIntoVector} moves the struct into a new one, wraps every buffer through the
 * allocator and releases through JNI, which costs several µs per call whatever the size.
 *
 * <p>Read directly: flat fixed-width types (integers, floats, bool, decimal, date, time,
 * timestamp, duration, interval, fixed-size binary) and utf8/binary in their 32- and 64-bit offset
 * forms, at any offset, without dictionary. Other types go through Arrow Java's importer, which
 * ignores the struct's {@code offset}, so they are refused at a nonzero offset.
 *
 * <p>Borrowed, not moved: the struct stays its producer's, who releases it after the returned
 * {@link Borrow} is closed; this class never calls its {@code release} while it is borrowed. Close
 * the borrow after the vector (and anything that used its buffers) is closed. If its buffers are
 * still referenced then (transferred into a result that was exported), {@link Borrow#close} moves
 * the struct out, as the C Data Interface allows, and the last release of those buffers calls
 * the struct's {@code release}.
 */
public final class DirectImport {

    private static final long ARRAY_SIZE = DirectExport.ARRAY_SIZE;
    private static final long A_LENGTH = dev.sluice.ffm.ArrowArray.length$offset();
    private static final long A_NULL_COUNT = dev.sluice.ffm.ArrowArray.null_count$offset();
    private static final long A_OFFSET = dev.sluice.ffm.ArrowArray.offset$offset();
    private static final long A_N_BUFFERS = dev.sluice.ffm.ArrowArray.n_buffers$offset();
    private static final long A_N_CHILDREN = dev.sluice.ffm.ArrowArray.n_children$offset();
    private static final long A_BUFFERS = dev.sluice.ffm.ArrowArray.buffers$offset();
    private static final long A_DICTIONARY = dev.sluice.ffm.ArrowArray.dictionary$offset();
    private static final long A_RELEASE = dev.sluice.ffm.ArrowArray.release$offset();

    /** Layouts other than a byte width: bit-packed values; 32- or 64-bit offsets and bytes; not read directly. */
    private static final int BITS = 0, OFFSETS_32 = -1, OFFSETS_64 = -2, UNSUPPORTED = -3;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MALLOC = LINKER.downcallHandle(
            LINKER.defaultLookup().find("malloc").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle FREE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("free").orElseThrow(), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));

    private DirectImport() {}

    /** Whether an array of {@code vector}'s type is read directly (otherwise Arrow Java imports it). */
    public static boolean supports(FieldVector vector) {
        return layoutOf(vector) != UNSUPPORTED;
    }

    /**
     * Loads the C {@code ArrowArray} at {@code array} into {@code vector} (new, of the array's
     * type). The struct must stay valid until the returned borrow is closed. Types not read
     * directly are imported by Arrow Java, which moves the struct out (its borrow has nothing to
     * do). {@code allocator} serves that import and the copies a bit-packed buffer at an offset
     * that is not a whole byte needs.
     *
     * @throws IllegalArgumentException if the struct contradicts the type or itself (released,
     *     buffer or child counts, negative or oversized length, nulls without a validity buffer)
     */
    public static Borrow importInto(BufferAllocator allocator, MemorySegment array, FieldVector vector) {
        MemorySegment struct = array.reinterpret(ARRAY_SIZE);
        if (struct.get(JAVA_LONG, A_RELEASE) == 0) {
            throw invalid(vector, "the array is released");
        }
        long length = struct.get(JAVA_LONG, A_LENGTH);
        long nullCount = struct.get(JAVA_LONG, A_NULL_COUNT);
        long offset = struct.get(JAVA_LONG, A_OFFSET);
        int layout = layoutOf(vector);
        if (layout == UNSUPPORTED) {
            if (offset != 0) {
                throw invalid(vector, "offset " + offset + " (Arrow Java's importer ignores offsets)");
            }
            Data.importIntoVector(allocator, org.apache.arrow.c.ArrowArray.wrap(array.address()), vector, null);
            return Borrow.NOTHING;
        }
        if (length < 0 || length > Integer.MAX_VALUE || offset < 0 || offset > Integer.MAX_VALUE - length) {
            throw invalid(vector, "length " + length + " at offset " + offset);
        }
        if (nullCount < -1 || nullCount > length) {
            throw invalid(vector, "null_count " + nullCount + " for length " + length);
        }
        long nBuffers = struct.get(JAVA_LONG, A_N_BUFFERS);
        long expected = layout >= BITS ? 2 : 3;
        if (nBuffers != expected) {
            throw invalid(vector, "n_buffers " + nBuffers + ", expected " + expected);
        }
        if (struct.get(JAVA_LONG, A_N_CHILDREN) != 0 || struct.get(JAVA_LONG, A_DICTIONARY) != 0) {
            throw invalid(vector, "children or a dictionary on a flat type");
        }
        long buffersAt = struct.get(JAVA_LONG, A_BUFFERS);
        if (buffersAt == 0) {
            throw invalid(vector, "no buffers array");
        }
        MemorySegment pointers = MemorySegment.ofAddress(buffersAt).reinterpret(8 * nBuffers);
        long validity = pointers.get(JAVA_LONG, 0);
        if (validity == 0 && nullCount > 0) {
            throw invalid(vector, "null_count " + nullCount + " but no validity buffer");
        }
        int rows = (int) length;
        Borrow borrow = new Borrow(struct, allocator);
        List<ArrowBuf> copies = new ArrayList<>(0);
        try {
            // Arrow Java reads a validity buffer's bits and ignores the count, so an unknown count (-1) is fine.
            ArrowBuf validityBuf = validity != 0
                    ? bitmap(borrow, allocator, validity, offset, rows, copies)
                    : rows == 0 ? null : AllValid.of(allocator, rows);
            long values = pointers.get(JAVA_LONG, 8);
            List<ArrowBuf> buffers;
            if (layout >= BITS) {
                ArrowBuf valuesBuf = layout == BITS
                        ? bitmap(borrow, allocator, required(vector, values, rows), offset, rows, copies)
                        : borrow.wrap(required(vector, values, rows) + offset * layout, (long) rows * layout);
                buffers = Arrays.asList(validityBuf, valuesBuf);
            } else {
                buffers = Arrays.asList(validityBuf, null, null);
                variableWidth(
                        borrow,
                        vector,
                        layout == OFFSETS_32 ? 4 : 8,
                        values,
                        pointers.get(JAVA_LONG, 16),
                        offset,
                        rows,
                        buffers);
            }
            vector.loadFieldBuffers(new ArrowFieldNode(rows, Math.max(nullCount, 0)), buffers);
        } finally {
            copies.forEach(ArrowBuf::close); // the vector holds its own reference to each
        }
        return borrow;
    }

    /** Offsets and bytes of a utf8/binary array, its offsets shifted by {@code offset} entries. */
    private static void variableWidth(
            Borrow borrow,
            FieldVector vector,
            int offsetWidth,
            long offsets,
            long data,
            long offset,
            int rows,
            List<ArrowBuf> out) {
        if (rows == 0) { // producers may give no offsets at all for an empty array
            out.set(1, borrow.wrap(0, 0));
            out.set(2, borrow.wrap(0, 0));
            return;
        }
        long offsetsAt = required(vector, offsets, rows) + offset * offsetWidth;
        MemorySegment entries = MemorySegment.ofAddress(offsetsAt).reinterpret((rows + 1L) * offsetWidth);
        long first = offsetWidth == 4 ? entries.get(JAVA_INT_UNALIGNED, 0) : entries.get(JAVA_LONG_UNALIGNED, 0);
        long last = offsetWidth == 4
                ? entries.get(JAVA_INT_UNALIGNED, (long) rows * 4)
                : entries.get(JAVA_LONG_UNALIGNED, (long) rows * 8);
        if (first < 0 || last < first) {
            throw invalid(vector, "offsets from " + first + " to " + last);
        }
        if (data == 0 && last > 0) {
            throw invalid(vector, "no data buffer for " + last + " bytes");
        }
        out.set(1, borrow.wrap(offsetsAt, (rows + 1L) * offsetWidth));
        // Offsets stay absolute: the data buffer starts where the producer's does.
        out.set(2, borrow.wrap(data, last));
    }

    /**
     * {@code rows} bits from bit {@code offset} at {@code address}, starting at bit 0: borrowed when
     * the offset is whole bytes, otherwise copied (shifted) into a buffer of {@code allocator}.
     */
    private static ArrowBuf bitmap(
            Borrow borrow, BufferAllocator allocator, long address, long offset, int rows, List<ArrowBuf> copies) {
        long bytes = (rows + 7L) / 8;
        if ((offset & 7) == 0) {
            return borrow.wrap(address + offset / 8, bytes);
        }
        int shift = (int) (offset & 7);
        long spanned = (offset % 8 + rows + 7) / 8;
        MemorySegment source = MemorySegment.ofAddress(address + offset / 8).reinterpret(spanned);
        ArrowBuf copy = allocator.buffer(bytes);
        copies.add(copy);
        for (long i = 0; i < bytes; i++) {
            int low = (source.get(JAVA_BYTE, i) & 0xff) >>> shift;
            int high = i + 1 < spanned ? (source.get(JAVA_BYTE, i + 1) & 0xff) << (8 - shift) : 0;
            copy.setByte(i, low | high);
        }
        return copy;
    }

    private static long required(FieldVector vector, long address, int rows) {
        if (address == 0 && rows > 0) {
            throw invalid(vector, "a NULL data buffer for " + rows + " values");
        }
        return address;
    }

    /** Bytes per value, or one of the other layouts, for {@code vector}'s type and class. */
    private static int layoutOf(FieldVector vector) {
        if (vector.getField().getDictionary() != null) {
            return UNSUPPORTED;
        }
        int layout = switch (vector.getField().getType()) {
            case ArrowType.Int t -> t.getBitWidth() / 8;
            case ArrowType.FloatingPoint t ->
                switch (t.getPrecision()) {
                    case HALF -> 2;
                    case SINGLE -> 4;
                    case DOUBLE -> 8;
                };
            case ArrowType.Bool t -> BITS;
            case ArrowType.Decimal t -> t.getBitWidth() / 8;
            case ArrowType.Date t ->
                switch (t.getUnit()) {
                    case DAY -> 4;
                    case MILLISECOND -> 8;
                };
            case ArrowType.Time t -> t.getBitWidth() / 8;
            case ArrowType.Timestamp t -> 8;
            case ArrowType.Duration t -> 8;
            case ArrowType.Interval t ->
                switch (t.getUnit()) {
                    case YEAR_MONTH -> 4;
                    case DAY_TIME -> 8;
                    case MONTH_DAY_NANO -> 16;
                };
            case ArrowType.FixedSizeBinary t -> t.getByteWidth();
            case ArrowType.Utf8 t -> OFFSETS_32;
            case ArrowType.Binary t -> OFFSETS_32;
            case ArrowType.LargeUtf8 t -> OFFSETS_64;
            case ArrowType.LargeBinary t -> OFFSETS_64;
            default -> UNSUPPORTED;
        };
        boolean classFits = switch (layout) {
            case UNSUPPORTED -> false;
            case OFFSETS_32 -> vector instanceof BaseVariableWidthVector;
            case OFFSETS_64 -> vector instanceof BaseLargeVariableWidthVector;
            default -> vector instanceof BaseFixedWidthVector;
        };
        return classFits ? layout : UNSUPPORTED;
    }

    private static IllegalArgumentException invalid(FieldVector vector, String what) {
        return new IllegalArgumentException(
                "invalid ArrowArray for " + vector.getField().getType() + ": " + what);
    }

    /**
     * Memory this class wraps as buffers, with Arrow Java's reference counting ({@link
     * ReferenceManager}), so vectors retain and release them as usual; {@link #lastReleased} runs
     * when the count reaches 0. Not accounted to any allocator.
     */
    private abstract static class Counted implements ReferenceManager {

        private static final VarHandle REFS;

        static {
            try {
                REFS = MethodHandles.lookup().findVarHandle(Counted.class, "refs", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final BufferAllocator allocator;

        @SuppressWarnings("unused") // through REFS
        private volatile int refs;

        Counted(BufferAllocator allocator, int refs) {
            this.allocator = allocator;
            this.refs = refs;
        }

        abstract void lastReleased();

        /** A buffer over this memory; it adds no reference (the vector's retain does). */
        final ArrowBuf wrap(long address, long capacity) {
            return new ArrowBuf(this, null, capacity, address);
        }

        @Override
        public final int getRefCount() {
            return (int) REFS.getVolatile(this);
        }

        @Override
        public final boolean release() {
            return release(1);
        }

        @Override
        public final boolean release(int decrement) {
            int left = (int) REFS.getAndAdd(this, -decrement) - decrement;
            if (left < 0) {
                throw new IllegalStateException("a borrowed Arrow buffer was released more often than retained");
            }
            if (left == 0) {
                lastReleased();
            }
            return left == 0;
        }

        @Override
        public final void retain() {
            retain(1);
        }

        @Override
        public final void retain(int increment) {
            if ((int) REFS.getAndAdd(this, increment) <= 0) {
                throw new IllegalStateException("a borrowed Arrow buffer was retained after its last release");
            }
        }

        @Override
        public final ArrowBuf retain(ArrowBuf srcBuffer, BufferAllocator targetAllocator) {
            retain();
            return wrap(srcBuffer.memoryAddress(), srcBuffer.capacity());
        }

        @Override
        public final ArrowBuf deriveBuffer(ArrowBuf sourceBuffer, long index, long length) {
            return wrap(sourceBuffer.memoryAddress() + index, length);
        }

        @Override
        public final OwnershipTransferResult transferOwnership(ArrowBuf sourceBuffer, BufferAllocator targetAllocator) {
            ArrowBuf transferred = retain(sourceBuffer, targetAllocator);
            return new OwnershipTransferResult() {
                @Override
                public boolean getAllocationFit() {
                    return true;
                }

                @Override
                public ArrowBuf getTransferredBuffer() {
                    return transferred;
                }
            };
        }

        @Override
        public final BufferAllocator getAllocator() {
            return allocator;
        }

        @Override
        public final long getSize() {
            return 0;
        }

        @Override
        public final long getAccountedSize() {
            return 0;
        }
    }

    /** One borrowed struct and the buffers over its memory. The borrow holds one reference until {@link #close}. */
    public static final class Borrow extends Counted implements AutoCloseable {

        /** The borrow of an array Arrow Java imported (moved out): nothing to give back. */
        static final Borrow NOTHING = new Borrow(null, null);

        private final MemorySegment struct;
        /** The struct's copy once moved out (buffers outlived the borrow); released with the last buffer. */
        private volatile MemorySegment moved;

        private boolean closed;

        private Borrow(MemorySegment struct, BufferAllocator allocator) {
            super(allocator, struct == null ? 0 : 1);
            this.struct = struct;
            this.closed = struct == null;
        }

        /**
         * Ends the borrow, on the importing thread, after the vector is closed. Buffers still
         * referenced keep the struct: it is moved out (its producer sees it released) and released
         * with the last of them.
         */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            if (getRefCount() > 1) {
                MemorySegment copy = malloc(ARRAY_SIZE);
                MemorySegment.copy(struct, 0, copy, 0, ARRAY_SIZE);
                moved = copy;
                struct.set(JAVA_LONG, A_RELEASE, 0);
            }
            release();
        }

        @Override
        void lastReleased() {
            MemorySegment copy = moved;
            if (copy == null) {
                return; // never moved: the producer releases its struct
            }
            moved = null;
            try {
                long release = copy.get(JAVA_LONG, A_RELEASE);
                if (release != 0) {
                    dev.sluice.ffm.ArrowArray.release.invoke(MemorySegment.ofAddress(release), copy);
                }
            } finally {
                free(copy);
            }
        }
    }

    /**
     * An all-valid bitmap for arrays without a validity buffer, one per thread, reused while no
     * buffer over it outlives a call: Arrow Java would allocate and fill one per vector (hundreds
     * of ns, more than the rest of the import). The thread's instance holds one reference.
     */
    private static final class AllValid extends Counted {
        private static final ThreadLocal<AllValid> CURRENT = new ThreadLocal<>();

        private final MemorySegment bits;

        private AllValid(BufferAllocator allocator, long bytes) {
            super(allocator, 1);
            bits = Arena.ofAuto().allocate(bytes, 8); // freed by the GC with the last buffer over it
        }

        /** A buffer of {@code rows} valid bits, set afresh: a function may have written into the last one. */
        static ArrowBuf of(BufferAllocator allocator, int rows) {
            long bytes = (rows + 7L) / 8;
            AllValid current = CURRENT.get();
            if (current == null || current.getRefCount() != 1 || current.bits.byteSize() < bytes) {
                if (current != null) {
                    current.release();
                }
                current = new AllValid(allocator, Math.max(bytes, current == null ? 0 : current.bits.byteSize()));
                CURRENT.set(current);
            }
            current.bits.asSlice(0, bytes).fill((byte) -1);
            return current.wrap(current.bits.address(), bytes);
        }

        @Override
        void lastReleased() {}
    }

    private static MemorySegment malloc(long bytes) {
        try {
            MemorySegment memory = ((MemorySegment) MALLOC.invokeExact(bytes)).reinterpret(bytes);
            if (memory.address() == 0) {
                throw new OutOfMemoryError("malloc(" + bytes + ") failed");
            }
            return memory;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static void free(MemorySegment memory) {
        try {
            FREE.invokeExact(memory);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
