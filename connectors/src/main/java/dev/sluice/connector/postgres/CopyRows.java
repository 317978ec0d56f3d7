package dev.sluice.connector.postgres;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Rows in one of COPY's formats, with each row's op ({@code u} upsert, {@code d} delete) and
 * position in the input: a flush of the postgres sink, kept as bytes until its epoch commits (a
 * reconnect writes it again). {@link CopyEncoder} appends the rows; they are ready to send as
 * they are. Text: a line per row, values tab-separated, {@code \N} for null. Binary: a tuple per
 * row (a 16-bit field count, then each value as a 32-bit length, -1 for null, and its bytes);
 * the stream's header and trailer ({@link #BINARY_HEADER}, {@link #BINARY_TRAILER}) are the
 * sender's.
 *
 * <p>While rows are appended, a hash of each row's key is kept: {@link #mayRepeatKeys} says
 * whether two rows might share a key (a hash collision only costs the slower, deduplicating
 * upsert).
 */
final class CopyRows {

    /** What a binary COPY stream starts with: signature, flags, header extension length. */
    static final byte[] BINARY_HEADER = {
        'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xFF, '\r', '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0
    };
    /** What a binary COPY stream ends with: a field count of -1. */
    static final byte[] BINARY_TRAILER = {(byte) 0xFF, (byte) 0xFF};

    private final boolean binary;
    private byte[] data;
    private int size;
    /** The end of each row (after a text line's newline). */
    private int[] ends;

    private byte[] ops;
    private long[] positions;
    private int rows;
    private boolean deletes;
    private boolean repeatedKeys;
    /** No rows: every row of the table is deleted here (an {@code _op} t). */
    private boolean truncates;
    /** Open addressing over key hashes (0 = empty); dropped when the rows are sealed. */
    private long[] keyHashes;

    CopyRows(boolean binary) {
        this(binary, 256, 1 << 14);
    }

    /** Room for {@code capacity} rows of {@code bytes} bytes in all before anything grows. */
    CopyRows(boolean binary, int capacity, int bytes) {
        this.binary = binary;
        data = new byte[Math.max(bytes, 64)];
        capacity = Math.max(capacity, 4);
        ends = new int[capacity];
        ops = new byte[capacity];
        positions = new long[capacity];
        keyHashes = new long[Integer.highestOneBit(capacity * 2 - 1) << 1];
    }

    /** A place in the epoch where the table is emptied: the rows before it apply first. */
    static CopyRows truncation(boolean binary) {
        CopyRows marker = new CopyRows(binary, 4, 64);
        marker.truncates = true;
        return marker.seal();
    }

    /** Empty rows of the same format, with room for as many as these and a little more. */
    CopyRows likeThis() {
        return new CopyRows(binary, rows + rows / 8, size + size / 8);
    }

    boolean binary() {
        return binary;
    }

    int rows() {
        return rows;
    }

    boolean hasDeletes() {
        return deletes;
    }

    boolean truncates() {
        return truncates;
    }

    boolean mayRepeatKeys() {
        return repeatedKeys;
    }

    long position(int row) {
        return positions[row];
    }

    /** The rows, ready for {@code COPY table (columns) FROM STDIN}: {@code bytes()[0, size())}. */
    byte[] bytes() {
        return data;
    }

    int size() {
        return size;
    }

    // ---- building a row -------------------------------------------------------------------------

    /** Where the next byte goes. */
    int mark() {
        return size;
    }

    /** Drops what was written since {@code mark}: a row the encoder could not finish. */
    void resetTo(int mark) {
        size = mark;
    }

    void put(byte b) {
        if (size == data.length) {
            data = Arrays.copyOf(data, data.length * 2);
        }
        data[size++] = b;
    }

    void putAscii(String s) {
        int n = s.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            data[size++] = (byte) s.charAt(i);
        }
    }

    void putLong(long value) {
        if (value == Long.MIN_VALUE) {
            putAscii("-9223372036854775808");
            return;
        }
        ensure(20);
        if (value < 0) {
            data[size++] = '-';
            value = -value;
        }
        int digits = 1;
        for (long v = value; v >= 10; v /= 10) {
            digits++;
        }
        for (int i = size + digits - 1; i >= size; i--) {
            data[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        size += digits;
    }

    void putInt16(int value) {
        ensure(2);
        data[size++] = (byte) (value >>> 8);
        data[size++] = (byte) value;
    }

    void putInt32(int value) {
        ensure(4);
        setInt32(size, value);
        size += 4;
    }

    void putInt64(long value) {
        putInt32((int) (value >>> 32));
        putInt32((int) value);
    }

    /** Overwrites the four bytes at {@code at} (a length written before its value was known). */
    void setInt32(int at, int value) {
        data[at] = (byte) (value >>> 24);
        data[at + 1] = (byte) (value >>> 16);
        data[at + 2] = (byte) (value >>> 8);
        data[at + 3] = (byte) value;
    }

    void putRaw(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, data, size, bytes.length);
        size += bytes.length;
    }

    /** Copies {@code length} raw bytes of {@code buffer} from {@code index}, as they are. */
    void putRaw(ArrowBuf buffer, long index, int length) {
        ensure(length);
        buffer.getBytes(index, data, size, length);
        size += length;
    }

    /** {@code value} as exactly {@code width} digits (zero-padded; value ≥ 0 and fits). */
    void putDigits(long value, int width) {
        ensure(width);
        for (int i = size + width - 1; i >= size; i--) {
            data[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        size += width;
    }

    /** Text escaped for COPY (backslash, tab, newline, carriage return). */
    void putEscaped(String value) {
        putEscaped(value.getBytes(StandardCharsets.UTF_8), 0, -1);
    }

    /**
     * UTF-8 bytes escaped for COPY. With {@code length} ≥ 0, {@code bytes[from, from + length)};
     * with -1, all of {@code bytes}.
     */
    void putEscaped(byte[] bytes, int from, int length) {
        int end = length < 0 ? bytes.length : from + length;
        ensure(end - from);
        for (int i = from; i < end; i++) {
            byte b = bytes[i];
            switch (b) {
                case '\\', '\t', '\n', '\r' -> {
                    ensure(end - i + 1);
                    data[size++] = '\\';
                    data[size++] = switch (b) {
                        case '\t' -> 't';
                        case '\n' -> 'n';
                        case '\r' -> 'r';
                        default -> '\\';
                    };
                }
                default -> data[size++] = b;
            }
        }
    }

    /** Copies {@code length} raw bytes of {@code buffer} from {@code index}, escaped for COPY. */
    void putEscaped(ArrowBuf buffer, long index, int length) {
        int start = size;
        ensure(length);
        buffer.getBytes(index, data, size, length);
        size += length;
        escapeWritten(start);
    }

    /** Escapes, in place, the raw bytes written since {@code start}. */
    private void escapeWritten(int start) {
        for (int i = start; i < size; i++) {
            byte b = data[i];
            if (b == '\\' || b == '\t' || b == '\n' || b == '\r') {
                byte[] raw = Arrays.copyOfRange(data, i, size);
                size = i;
                putEscaped(raw, 0, -1);
                return;
            }
        }
    }

    /** Room for {@code n} more bytes. */
    void ensure(int n) {
        if (size + n > data.length) {
            data = Arrays.copyOf(data, Math.max(data.length * 2, size + n));
        }
    }

    /** Ends the row being written (a text line's newline included); {@code keyHash} hashes its key. */
    void endRow(byte op, long position, long keyHash) {
        recordRow(op, position);
        if (keyHashes != null && !repeatedKeys) {
            rememberKey(keyHash);
        }
    }

    /** Notes the row whose bytes end here. */
    private void recordRow(byte op, long position) {
        if (rows == ends.length) {
            int grown = rows * 2;
            ends = Arrays.copyOf(ends, grown);
            ops = Arrays.copyOf(ops, grown);
            positions = Arrays.copyOf(positions, grown);
        }
        ends[rows] = size;
        ops[rows] = op;
        positions[rows] = position;
        rows++;
        deletes |= op == 'd';
    }

    private void rememberKey(long hash) {
        if (rows * 2 > keyHashes.length) {
            long[] old = keyHashes;
            keyHashes = new long[old.length * 2];
            for (long h : old) {
                if (h != 0) {
                    insert(h);
                }
            }
        }
        if (!insert(hash == 0 ? 1 : hash)) {
            repeatedKeys = true;
        }
    }

    /** Adds a hash; false when it was there. */
    private boolean insert(long hash) {
        int mask = keyHashes.length - 1;
        for (int i = (int) (hash ^ (hash >>> 32)) & mask; ; i = (i + 1) & mask) {
            if (keyHashes[i] == 0) {
                keyHashes[i] = hash;
                return true;
            }
            if (keyHashes[i] == hash) {
                return false;
            }
        }
    }

    /** No more rows: frees the key hashes. */
    CopyRows seal() {
        keyHashes = null;
        return this;
    }

    // ---- reading ------------------------------------------------------------------------------

    private int start(int row) {
        return row == 0 ? 0 : ends[row - 1];
    }

    /**
     * The whole COPY stream for the stage table: each row's values, then its op and its sequence
     * number in these rows (the stage keeps the last change per key by it).
     */
    byte[] stageStream() {
        CopyRows out = new CopyRows(binary, 4, size + rows * 16 + BINARY_HEADER.length + 2);
        out.keyHashes = null;
        if (binary) {
            out.putRaw(BINARY_HEADER);
        }
        for (int r = 0; r < rows; r++) {
            int from = start(r);
            byte op = ops[r] == 'd' ? (byte) 'd' : (byte) 'u';
            if (binary) {
                int fields = ((data[from] & 0xFF) << 8) | (data[from + 1] & 0xFF);
                out.putInt16(fields + 2);
                System.arraycopy(data, from + 2, out.data, out.size, ends[r] - from - 2);
                out.size += ends[r] - from - 2;
                out.putInt32(1); // "char"
                out.put(op);
                out.putInt32(4); // integer
                out.putInt32(r);
            } else {
                int length = ends[r] - 1 - from;
                System.arraycopy(data, from, out.data, out.size, length);
                out.size += length;
                out.put((byte) '\t');
                out.put(op);
                out.put((byte) '\t');
                out.putLong(r);
                out.put((byte) '\n');
            }
        }
        if (binary) {
            out.putRaw(BINARY_TRAILER);
        }
        return Arrays.copyOf(out.data, out.size);
    }

    /** Row {@code row}'s bytes, for a decoder: {@code bytes()[rowStart(row), rowEnd(row))}. */
    int rowStart(int row) {
        return start(row);
    }

    int rowEnd(int row) {
        return ends[row];
    }

    /** The given rows (in order) as rows of their own. */
    CopyRows select(List<Integer> which) {
        CopyRows out = new CopyRows(binary);
        out.keyHashes = null;
        for (int r : which) {
            int from = start(r);
            int length = ends[r] - from;
            out.ensure(length);
            System.arraycopy(data, from, out.data, out.size, length);
            out.size += length;
            out.recordRow(ops[r], positions[r]);
        }
        out.repeatedKeys = repeatedKeys && which.size() > 1;
        return out;
    }

    /** A text row's values (null for SQL NULL), for messages. */
    String[] textValues(int row) {
        List<String> values = new ArrayList<>();
        StringBuilder value = new StringBuilder();
        byte[] raw = new byte[ends[row] - 1 - start(row)];
        System.arraycopy(data, start(row), raw, 0, raw.length);
        String line = new String(raw, StandardCharsets.UTF_8);
        boolean isNull = false;
        for (int i = 0; i <= line.length(); i++) {
            char c = i == line.length() ? '\t' : line.charAt(i);
            if (c == '\t') {
                values.add(isNull ? null : value.toString());
                value.setLength(0);
                isNull = false;
            } else if (c == '\\' && i + 1 < line.length()) {
                char next = line.charAt(++i);
                switch (next) {
                    case 'N' -> isNull = true;
                    case 't' -> value.append('\t');
                    case 'n' -> value.append('\n');
                    case 'r' -> value.append('\r');
                    default -> value.append(next);
                }
            } else {
                value.append(c);
            }
        }
        return values.toArray(String[]::new);
    }
}
