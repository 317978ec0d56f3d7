package dev.sluice.bridge;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes a {@link VectorSchemaRoot} as C Data Interface structs ({@code ArrowArray},
 * {@code ArrowSchema}) directly with FFM. The buffer pointers are the vectors' own
 * {@link ArrowBuf} addresses (zero-copy); the structs, pointer arrays and C strings go into
 * pooled native memory. Arrow Java's {@link Data#exportVectorSchemaRoot} unloads the root into
 * a record batch, loads that into a {@code StructVector} and registers private data per column
 * through JNI, which costs several µs per batch whatever its size; this writes the same structs
 * without any of it.
 *
 * <p>Written directly: flat columns (signed/unsigned integers, floats, bool, utf8 and binary in
 * their 32- and 64-bit offset forms, fixed-size binary, decimal, date, time, timestamp, duration,
 * interval), nullable or not, without dictionary encoding. Any other schema (nested, dictionary,
 * view or extension types) is exported by Arrow Java instead, so callers need not check.
 *
 * <p>Ownership: each export retains every buffer it points to and takes one owner from a
 * registry; the top-level struct's {@code private_data} is the owner's token (slot index and
 * generation). {@code release} is one static FFM upcall stub per struct kind: it gives the
 * buffers back exactly once, on whatever thread the consumer calls it, and ignores (and reports)
 * a repeated or unknown token. Child structs live in the parent's memory and are released with
 * it, so a consumer must not move a child out on its own (arrow-rs never does).
 */
public final class DirectExport {

    /** Size of {@code struct ArrowArray} (80 bytes; the schema's is {@link CSchemaLayout#SIZE}). */
    public static final long ARRAY_SIZE = dev.sluice.ffm.ArrowArray.sizeof();

    private static final long A_LENGTH = dev.sluice.ffm.ArrowArray.length$offset();
    private static final long A_NULL_COUNT = dev.sluice.ffm.ArrowArray.null_count$offset();
    private static final long A_OFFSET = dev.sluice.ffm.ArrowArray.offset$offset();
    private static final long A_N_BUFFERS = dev.sluice.ffm.ArrowArray.n_buffers$offset();
    private static final long A_N_CHILDREN = dev.sluice.ffm.ArrowArray.n_children$offset();
    private static final long A_BUFFERS = dev.sluice.ffm.ArrowArray.buffers$offset();
    private static final long A_CHILDREN = dev.sluice.ffm.ArrowArray.children$offset();
    private static final long A_DICTIONARY = dev.sluice.ffm.ArrowArray.dictionary$offset();
    private static final long A_RELEASE = dev.sluice.ffm.ArrowArray.release$offset();
    private static final long A_PRIVATE = dev.sluice.ffm.ArrowArray.private_data$offset();

    /** Column layouts: validity + values; validity + 32-bit offsets + bytes; the same with 64-bit offsets. */
    private static final byte FIXED = 0, VARIABLE = 1, LARGE_VARIABLE = 2;

    /** One zero offset (either width), for a variable-width vector that never allocated its offsets. */
    private static final MemorySegment ZERO_OFFSETS = Arena.global().allocate(16, 16);

    private static final MemorySegment ARRAY_RELEASE =
            dev.sluice.ffm.ArrowArray.release.allocate(DirectExport::onArrayRelease, Arena.global());
    private static final MemorySegment SCHEMA_RELEASE =
            dev.sluice.ffm.ArrowSchema.release.allocate(DirectExport::onSchemaRelease, Arena.global());

    private static final Registry REGISTRY = new Registry();

    private DirectExport() {}

    /** Whether {@code schema} is written directly (otherwise Arrow Java exports it). */
    public static boolean supports(Schema schema) {
        return plan(schema) != UNSUPPORTED;
    }

    /**
     * Exports {@code root} into the C {@code ArrowArray} at {@code array} and, unless
     * {@code schema} is {@link MemorySegment#NULL}, its schema into the C {@code ArrowSchema} at
     * {@code schema}. The consumer calls each struct's {@code release} once; until then the
     * buffers stay alive even if {@code root} is cleared or closed. {@code allocator} serves
     * Arrow Java's export, used for schemas this class does not write.
     */
    public static void export(
            BufferAllocator allocator, VectorSchemaRoot root, MemorySegment array, MemorySegment schema) {
        Plan plan = plan(root.getSchema());
        if (plan == UNSUPPORTED || !plan.matches(root)) {
            Data.exportVectorSchemaRoot(
                    allocator,
                    root,
                    null,
                    org.apache.arrow.c.ArrowArray.wrap(array.address()),
                    schema.equals(MemorySegment.NULL) ? null : org.apache.arrow.c.ArrowSchema.wrap(schema.address()));
            return;
        }
        writeArray(plan, root, array.reinterpret(ARRAY_SIZE));
        if (!schema.equals(MemorySegment.NULL)) {
            try {
                writeSchema(plan, schema.reinterpret(CSchemaLayout.SIZE));
            } catch (RuntimeException | Error e) {
                releaseIfSet(array);
                throw e;
            }
        }
    }

    /**
     * Exports one flat vector (no struct around it, no schema) into the C {@code ArrowArray} at
     * {@code array}, the way {@link #export} writes a root's columns, for a consumer that knows
     * the type (a UDF's result). Nested, dictionary and other types go through Arrow Java's
     * {@code Data.exportVector}. The consumer calls {@code release} once.
     */
    public static void exportVector(BufferAllocator allocator, FieldVector vector, MemorySegment array) {
        byte layout = layoutOf(vector);
        if (layout < 0) {
            Data.exportVector(allocator, vector, null, org.apache.arrow.c.ArrowArray.wrap(array.address()));
            return;
        }
        MemorySegment top = array.reinterpret(ARRAY_SIZE);
        Owner owner = REGISTRY.acquire();
        try {
            MemorySegment block = owner.block(8L * 3);
            int nulls = nullCount(vector);
            int buffers = writeBuffers(owner, layout, vector, nulls, block, 0);
            writeArrayStruct(top, 0, vector.getValueCount(), nulls, buffers, 0, block.address(), 0, owner.token);
            owner.published = true;
        } catch (RuntimeException | Error e) {
            REGISTRY.abandon(owner);
            throw e;
        }
    }

    /** FIXED, VARIABLE or LARGE_VARIABLE for a vector written directly, else -1. */
    private static byte layoutOf(FieldVector vector) {
        Field field = vector.getField();
        if (CFormat.of(field.getType()) == null
                || field.getDictionary() != null
                || !field.getChildren().isEmpty()) {
            return -1;
        }
        return switch (field.getType().getTypeID()) {
            case Utf8, Binary -> vector instanceof BaseVariableWidthVector ? VARIABLE : -1;
            case LargeUtf8, LargeBinary -> vector instanceof BaseLargeVariableWidthVector ? LARGE_VARIABLE : -1;
            default -> vector instanceof BaseFixedWidthVector ? FIXED : -1;
        };
    }

    /** A call that takes exported structs (addresses of an ArrowArray and an ArrowSchema), e.g. into the core. */
    @FunctionalInterface
    public interface StructConsumer<T> {
        T accept(long array, long schema);
    }

    /**
     * Exports {@code root} with its schema into per-thread C structs, passes their addresses to
     * {@code consumer} (a core call that moves them) and then releases whatever it did not take,
     * so nothing leaks when the call fails before it reaches the core.
     */
    public static <T> T exportTo(BufferAllocator allocator, VectorSchemaRoot root, StructConsumer<T> consumer) {
        Scratch scratch = SCRATCH.get();
        boolean nested = scratch.busy;
        Arena arena = nested ? Arena.ofConfined() : null;
        MemorySegment array = nested ? arena.allocate(ARRAY_SIZE, 8) : scratch.array;
        MemorySegment schema = nested ? arena.allocate(CSchemaLayout.SIZE, 8) : scratch.schema;
        scratch.busy = true;
        try {
            try {
                export(allocator, root, array, schema);
                return consumer.accept(array.address(), schema.address());
            } finally {
                releaseIfSet(array);
                releaseSchemaIfSet(schema);
            }
        } finally {
            scratch.busy = nested;
            if (arena != null) {
                arena.close();
            }
        }
    }

    /** Calls the {@code release} of the C ArrowArray at {@code array} unless it is NULL (released or moved). */
    public static void releaseIfSet(MemorySegment array) {
        MemorySegment struct = array.reinterpret(ARRAY_SIZE);
        long release = struct.get(JAVA_LONG, A_RELEASE);
        if (release != 0) {
            dev.sluice.ffm.ArrowArray.release.invoke(MemorySegment.ofAddress(release), struct);
        }
    }

    /** Calls the {@code release} of the C ArrowSchema at {@code schema} unless it is NULL (released or moved). */
    public static void releaseSchemaIfSet(MemorySegment schema) {
        MemorySegment struct = schema.reinterpret(CSchemaLayout.SIZE);
        long release = struct.get(JAVA_LONG, CSchemaLayout.RELEASE);
        if (release != 0) {
            dev.sluice.ffm.ArrowSchema.release.invoke(MemorySegment.ofAddress(release), struct);
        }
    }

    /** Exports written by this class whose consumer has not released them yet (tests check it returns to 0). */
    public static long liveExports() {
        return REGISTRY.live();
    }

    /** Release calls ignored because their export was already released or unknown. */
    static long ignoredReleases() {
        return REGISTRY.ignored();
    }

    // Writing the structs

    private static void writeArray(Plan plan, VectorSchemaRoot root, MemorySegment top) {
        int n = plan.columns.length;
        long pointersAt = n * ARRAY_SIZE;
        long topBuffersAt = pointersAt + 8L * n;
        long buffersAt = topBuffersAt + 8;
        Owner owner = REGISTRY.acquire();
        try {
            MemorySegment block = owner.block(buffersAt + 8L * plan.bufferCount);
            long base = block.address();
            block.set(JAVA_LONG, topBuffersAt, 0); // the struct's validity: none
            long slot = buffersAt;
            for (int i = 0; i < n; i++) {
                FieldVector vector = root.getVector(i);
                long child = i * ARRAY_SIZE;
                block.set(JAVA_LONG, pointersAt + 8L * i, base + child);
                // Counted here, so a column without nulls crosses with no validity buffer and the
                // core (built for baseline x86-64, without POPCNT) need not count.
                int nulls = nullCount(vector);
                int buffers = writeBuffers(owner, plan.columns[i], vector, nulls, block, slot);
                writeArrayStruct(block, child, vector.getValueCount(), nulls, buffers, 0, base + slot, 0, 0);
                slot += 8L * buffers;
            }
            writeArrayStruct(top, 0, root.getRowCount(), 0, 1, n, base + topBuffersAt, base + pointersAt, owner.token);
            owner.published = true;
        } catch (RuntimeException | Error e) {
            REGISTRY.abandon(owner);
            throw e;
        }
    }

    /**
     * The vector's null count, from its validity bitmap read as a segment: Arrow Java's own
     * {@code getNullCount} checks bounds and the buffer's reference count on every word. Most
     * bitmaps are all ones: the leading 0xff bytes are skipped by a vectorized comparison with
     * {@link #ONES} (the JDK's mismatch intrinsic), and only the rest is counted bit by bit.
     */
    static int nullCount(FieldVector vector) {
        int count = vector.getValueCount();
        ArrowBuf validity = vector.getValidityBuffer();
        long bytes = (count + 7L) / 8;
        if (count == 0 || validity.capacity() < bytes) {
            return vector.getNullCount();
        }
        MemorySegment bits = MemorySegment.ofAddress(validity.memoryAddress()).reinterpret(bytes);
        long whole = count >>> 3; // bytes whose 8 bits are all values
        long at = 0;
        while (at < whole) {
            long span = Math.min(whole - at, ONES.byteSize());
            long differs = MemorySegment.mismatch(bits, at, at + span, ONES, 0, span);
            if (differs >= 0) {
                at += differs;
                break;
            }
            at += span;
        }
        long set = 8 * at; // every bit before `at` is set
        for (; at + 8 <= whole; at += 8) {
            set += Long.bitCount(bits.get(JAVA_LONG_UNALIGNED, at));
        }
        for (; at < whole; at++) {
            set += Integer.bitCount(bits.get(JAVA_BYTE, at) & 0xff);
        }
        int tail = count & 7;
        if (tail != 0) {
            set += Integer.bitCount(bits.get(JAVA_BYTE, whole) & ((1 << tail) - 1));
        }
        return count - (int) set;
    }

    /** 0xff bytes to compare validity bitmaps with (64 Ki rows' worth; longer bitmaps in spans). */
    private static final MemorySegment ONES = Arena.global().allocate(8192, 8).fill((byte) -1);

    private static int writeBuffers(
            Owner owner, byte layout, FieldVector vector, int nulls, MemorySegment block, long at) {
        long validity = nulls == 0 ? 0 : owner.export(vector.getValidityBuffer());
        if (layout == FIXED) {
            BaseFixedWidthVector fixed = (BaseFixedWidthVector) vector;
            block.set(JAVA_LONG, at, validity);
            block.set(JAVA_LONG, at + 8, owner.export(fixed.getDataBuffer()));
            return 2;
        }
        if (layout == VARIABLE) {
            BaseVariableWidthVector variable = (BaseVariableWidthVector) vector;
            int count = variable.getValueCount();
            if (variable.getLastSet() < count - 1) {
                variable.setValueCount(
                        count); // fills the offsets of trailing unset values, as Arrow Java's export does
            }
        } else {
            BaseLargeVariableWidthVector variable = (BaseLargeVariableWidthVector) vector;
            int count = variable.getValueCount();
            if (variable.getLastSet() < count - 1) {
                variable.setValueCount(count);
            }
        }
        block.set(JAVA_LONG, at, validity);
        ArrowBuf offsets = vector.getOffsetBuffer();
        block.set(JAVA_LONG, at + 8, offsets.capacity() == 0 ? ZERO_OFFSETS.address() : owner.export(offsets));
        block.set(JAVA_LONG, at + 16, owner.export(vector.getDataBuffer()));
        return 3;
    }

    private static void writeArrayStruct(
            MemorySegment s,
            long at,
            long length,
            long nullCount,
            long nBuffers,
            long nChildren,
            long buffers,
            long children,
            long privateData) {
        s.set(JAVA_LONG, at + A_LENGTH, length);
        s.set(JAVA_LONG, at + A_NULL_COUNT, nullCount);
        s.set(JAVA_LONG, at + A_OFFSET, 0);
        s.set(JAVA_LONG, at + A_N_BUFFERS, nBuffers);
        s.set(JAVA_LONG, at + A_N_CHILDREN, nChildren);
        s.set(JAVA_LONG, at + A_BUFFERS, buffers);
        s.set(JAVA_LONG, at + A_CHILDREN, nChildren == 0 ? 0 : children);
        s.set(JAVA_LONG, at + A_DICTIONARY, 0);
        s.set(JAVA_LONG, at + A_RELEASE, ARRAY_RELEASE.address());
        s.set(JAVA_LONG, at + A_PRIVATE, privateData);
    }

    private static void writeSchema(Plan plan, MemorySegment top) {
        int n = plan.columns.length;
        long pointersAt = n * CSchemaLayout.SIZE;
        long stringsAt = pointersAt + 8L * n;
        Owner owner = REGISTRY.acquire();
        try {
            MemorySegment block = owner.block(stringsAt + plan.strings.length);
            long base = block.address();
            long strings = base + stringsAt;
            MemorySegment.copy(plan.strings, 0, block, JAVA_BYTE, stringsAt, plan.strings.length);
            for (int i = 0; i < n; i++) {
                long child = i * CSchemaLayout.SIZE;
                block.set(JAVA_LONG, pointersAt + 8L * i, base + child);
                writeSchemaStruct(block, child, plan, i + 1, strings, 0, 0, 0);
            }
            writeSchemaStruct(top, 0, plan, 0, strings, n, base + pointersAt, owner.token);
            owner.published = true;
        } catch (RuntimeException | Error e) {
            REGISTRY.abandon(owner);
            throw e;
        }
    }

    private static void writeSchemaStruct(
            MemorySegment s,
            long at,
            Plan plan,
            int entry,
            long strings,
            long nChildren,
            long children,
            long privateData) {
        int metadata = plan.metadataAt[entry];
        s.set(JAVA_LONG, at + CSchemaLayout.FORMAT, strings + plan.formatAt[entry]);
        s.set(JAVA_LONG, at + CSchemaLayout.NAME, strings + plan.nameAt[entry]);
        s.set(JAVA_LONG, at + CSchemaLayout.METADATA, metadata < 0 ? 0 : strings + metadata);
        s.set(JAVA_LONG, at + CSchemaLayout.FLAGS, plan.flags[entry]);
        s.set(JAVA_LONG, at + CSchemaLayout.N_CHILDREN, nChildren);
        s.set(JAVA_LONG, at + CSchemaLayout.CHILDREN, children);
        s.set(JAVA_LONG, at + CSchemaLayout.DICTIONARY, 0);
        s.set(JAVA_LONG, at + CSchemaLayout.RELEASE, SCHEMA_RELEASE.address());
        s.set(JAVA_LONG, at + CSchemaLayout.PRIVATE_DATA, privateData);
    }

    // The release callbacks (FFM upcalls): an exception must not escape into native code.

    private static void onArrayRelease(MemorySegment address) {
        try {
            MemorySegment struct = address.reinterpret(ARRAY_SIZE);
            long token = struct.get(JAVA_LONG, A_PRIVATE);
            if (token != 0) { // children carry 0: they live in their parent's memory
                REGISTRY.release(token);
            }
            struct.set(JAVA_LONG, A_RELEASE, 0);
        } catch (Throwable t) {
            reportReleaseFailure(t);
        }
    }

    private static void onSchemaRelease(MemorySegment address) {
        try {
            MemorySegment struct = address.reinterpret(CSchemaLayout.SIZE);
            long token = struct.get(JAVA_LONG, CSchemaLayout.PRIVATE_DATA);
            if (token != 0) {
                REGISTRY.release(token);
            }
            struct.set(JAVA_LONG, CSchemaLayout.RELEASE, 0);
        } catch (Throwable t) {
            reportReleaseFailure(t);
        }
    }

    private static void reportReleaseFailure(Throwable t) {
        System.err.println("sluice: releasing an exported Arrow batch failed: " + t);
    }

    // Per-schema plans

    /** The C strings and column layouts of one schema, computed once. Entry 0 is the struct, i + 1 column i. */
    private record Plan(
            Schema schema,
            byte[] columns,
            int bufferCount,
            byte[] strings,
            int[] formatAt,
            int[] nameAt,
            int[] metadataAt,
            long[] flags) {

        /** The same plan for an equal schema object (the per-thread cache compares by identity). */
        Plan of(Schema equal) {
            return new Plan(equal, columns, bufferCount, strings, formatAt, nameAt, metadataAt, flags);
        }

        /** Whether every vector of {@code root} has the class its column layout needs. */
        boolean matches(VectorSchemaRoot root) {
            if (root.getFieldVectors().size() != columns.length) {
                return false;
            }
            for (int i = 0; i < columns.length; i++) {
                FieldVector v = root.getVector(i);
                boolean ok = switch (columns[i]) {
                    case FIXED -> v instanceof BaseFixedWidthVector;
                    case VARIABLE -> v instanceof BaseVariableWidthVector;
                    default -> v instanceof BaseLargeVariableWidthVector;
                };
                if (!ok) {
                    return false;
                }
            }
            return true;
        }
    }

    private static final Plan UNSUPPORTED = new Plan(null, null, 0, null, null, null, null, null);
    private static final int MAX_CACHED_PLANS = 256;
    private static final Map<Schema, Plan> PLANS = new ConcurrentHashMap<>();
    /** The last plan used on this thread: a lane exports the same schema batch after batch. */
    private static final ThreadLocal<Plan> LAST_PLAN = new ThreadLocal<>();

    private static Plan plan(Schema schema) {
        Plan last = LAST_PLAN.get();
        if (last != null && last.schema() == schema) {
            return last;
        }
        Plan plan = PLANS.get(schema);
        if (plan == null) {
            plan = computePlan(schema);
            if (PLANS.size() < MAX_CACHED_PLANS) {
                PLANS.putIfAbsent(schema, plan);
            }
        }
        if (plan != UNSUPPORTED) {
            LAST_PLAN.set(plan.schema() == schema ? plan : plan.of(schema));
        }
        return plan;
    }

    private static Plan computePlan(Schema schema) {
        int n = schema.getFields().size();
        byte[] columns = new byte[n];
        int[] formatAt = new int[n + 1], nameAt = new int[n + 1], metadataAt = new int[n + 1];
        long[] flags = new long[n + 1];
        ByteArrayOutputStream strings = new ByteArrayOutputStream();
        formatAt[0] = cString(strings, "+s");
        nameAt[0] = cString(strings, "");
        metadataAt[0] = metadata(strings, schema.getCustomMetadata());
        int buffers = 0;
        for (int i = 0; i < n; i++) {
            Field field = schema.getFields().get(i);
            ArrowType type = field.getType();
            String format = CFormat.of(type);
            if (format == null
                    || field.getDictionary() != null
                    || !field.getChildren().isEmpty()) {
                return UNSUPPORTED;
            }
            columns[i] = switch (type.getTypeID()) {
                case Utf8, Binary -> VARIABLE;
                case LargeUtf8, LargeBinary -> LARGE_VARIABLE;
                default -> FIXED;
            };
            buffers += columns[i] == FIXED ? 2 : 3;
            formatAt[i + 1] = cString(strings, format);
            nameAt[i + 1] = cString(strings, field.getName());
            metadataAt[i + 1] = metadata(strings, field.getMetadata());
            flags[i + 1] = field.isNullable() ? CSchemaLayout.FLAG_NULLABLE : 0;
        }
        return new Plan(schema, columns, buffers, strings.toByteArray(), formatAt, nameAt, metadataAt, flags);
    }

    /** Appends {@code s} NUL-terminated; returns where it starts. */
    private static int cString(ByteArrayOutputStream out, String s) {
        int at = out.size();
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        out.write(0);
        return at;
    }

    /** Appends metadata in the C Data Interface encoding (native-endian int32 lengths); -1 when there is none. */
    private static int metadata(ByteArrayOutputStream out, Map<String, String> metadata) {
        if (metadata == null || metadata.isEmpty()) {
            return -1;
        }
        while (out.size() % 4 != 0) {
            out.write(0);
        }
        int at = out.size();
        ByteBuffer int32 = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        out.writeBytes(int32.putInt(0, metadata.size()).array());
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            for (String s : new String[] {e.getKey(), e.getValue()}) {
                byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
                out.writeBytes(int32.putInt(0, bytes.length).array());
                out.writeBytes(bytes);
            }
        }
        return at;
    }

    // Owners and their registry

    /** The C structs of one thread's {@link #exportTo} calls, reused. */
    private static final class Scratch {
        final MemorySegment array;
        final MemorySegment schema;
        boolean busy;

        Scratch() {
            MemorySegment both = Arena.ofAuto().allocate(ARRAY_SIZE + CSchemaLayout.SIZE, 8);
            array = both.asSlice(0, ARRAY_SIZE);
            schema = both.asSlice(ARRAY_SIZE, CSchemaLayout.SIZE);
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /** What one export keeps alive until its release: the retained buffers and the native memory of its structs. */
    private static final class Owner {
        final int index;
        int generation;
        /** The live export's token, 0 while the owner is free; guarded by the registry. */
        long token;

        MemorySegment block = MemorySegment.NULL;
        ArrowBuf[] buffers = new ArrowBuf[16];
        int bufferCount;
        /** Written last by the exporting thread, read first by the releasing one: publishes the fields above. */
        volatile boolean published;

        Owner(int index) {
            this.index = index;
        }

        /** Native memory for the structs, at least {@code bytes}, reused from the owner's previous export. */
        MemorySegment block(long bytes) {
            if (block.byteSize() < bytes) {
                block = Arena.ofAuto().allocate(Math.max(256, Long.highestOneBit(bytes - 1) << 1), 16);
            }
            return block;
        }

        /** Retains {@code buf} for the consumer and returns its address, or 0 (NULL) for an empty buffer. */
        long export(ArrowBuf buf) {
            if (buf.capacity() == 0) {
                return 0;
            }
            buf.getReferenceManager().retain();
            if (bufferCount == buffers.length) {
                buffers = java.util.Arrays.copyOf(buffers, bufferCount * 2);
            }
            buffers[bufferCount++] = buf;
            return buf.memoryAddress();
        }

        void releaseBuffers() {
            RuntimeException failure = null;
            for (int i = 0; i < bufferCount; i++) {
                try {
                    buffers[i].getReferenceManager().release();
                } catch (RuntimeException e) {
                    failure = e; // give the rest back regardless
                }
                buffers[i] = null;
            }
            bufferCount = 0;
            if (failure != null) {
                throw failure;
            }
        }
    }

    /**
     * Owners by slot index, reused through a free list. A token is {@code generation << 32 | index}
     * and never 0, so a stale token (already released, slot reused) does not match the owner's.
     */
    private static final class Registry {
        /** Free owners that keep their native block; beyond this, blocks are dropped for the GC. */
        private static final int IDLE_BLOCKS_KEPT = 64;

        private Owner[] owners = new Owner[16];
        private int size;
        private int[] free = new int[16];
        private int freeCount;
        private long live;
        private long ignored;

        synchronized Owner acquire() {
            Owner owner;
            if (freeCount > 0) {
                owner = owners[free[--freeCount]];
            } else {
                if (size == owners.length) {
                    owners = java.util.Arrays.copyOf(owners, size * 2);
                    free = java.util.Arrays.copyOf(free, size * 2);
                }
                owner = owners[size] = new Owner(size);
                size++;
            }
            owner.generation = owner.generation == Integer.MAX_VALUE ? 1 : owner.generation + 1;
            owner.token = ((long) owner.generation << 32) | owner.index;
            live++;
            return owner;
        }

        /** Gives back the export with {@code token}, once: a second or unknown token is counted and ignored. */
        void release(long token) {
            Owner owner = claim(token);
            if (owner == null) {
                System.err.println("sluice: ignored a second or unknown release of an exported Arrow batch (token "
                        + Long.toHexString(token) + ")");
                return;
            }
            // The volatile read pairs with the exporting thread's last write: the owner's fields are visible here.
            if (!owner.published) {
                recycle(owner);
                throw new IllegalStateException("an export was released before it was written");
            }
            owner.published = false;
            try {
                owner.releaseBuffers();
            } finally {
                recycle(owner);
            }
        }

        /** Gives back an export whose writing failed (on the exporting thread, never published). */
        void abandon(Owner owner) {
            if (claim(owner.token) == owner) {
                try {
                    owner.releaseBuffers();
                } finally {
                    recycle(owner);
                }
            }
        }

        private synchronized Owner claim(long token) {
            int index = (int) token;
            Owner owner = index >= 0 && index < size ? owners[index] : null;
            if (owner == null || owner.token != token) {
                ignored++;
                return null;
            }
            owner.token = 0;
            return owner;
        }

        private synchronized void recycle(Owner owner) {
            if (freeCount >= IDLE_BLOCKS_KEPT) {
                owner.block = MemorySegment.NULL;
            }
            free[freeCount++] = owner.index;
            live--;
        }

        synchronized long live() {
            return live;
        }

        synchronized long ignored() {
            return ignored;
        }
    }
}
