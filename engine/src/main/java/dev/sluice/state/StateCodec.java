package dev.sluice.state;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * The bytes of the state DB. Stateless and thread-safe.
 *
 * <p>Key: {@code UTF-8(namespace) 0x00 UTF-8(key)}. UTF-8 never produces a 0x00 byte for any
 * character but NUL, which namespaces may not contain, so the first 0x00 splits the two; and
 * RocksDB's bytewise order sorts rows by namespace, then key, with a namespace prefix being a
 * plain byte prefix (a prefix scan is one seek).
 *
 * <p>Value, version 1: {@code 0x01, created_at as 8-byte big-endian epoch milliseconds,
 * UTF-8(data)}. The version byte comes first so that a later layout (say, a binary data
 * encoding) can be told apart and old rows still read; a reader refuses versions it does not
 * know instead of misreading them.
 */
final class StateCodec {

    /** The value layout this code writes and the only one it reads. */
    static final byte VERSION = 1;

    private static final byte SEPARATOR = 0;
    private static final int HEADER = 1 + Long.BYTES;

    private StateCodec() {}

    static void checkNamespace(String namespace) {
        if (namespace == null || namespace.isEmpty()) {
            throw new IllegalArgumentException("state namespace must not be empty");
        }
        if (namespace.indexOf('\u0000') >= 0) {
            throw new IllegalArgumentException(
                    "state namespace must not contain the NUL character: " + namespace.replace("\u0000", "\\u0000"));
        }
    }

    static byte[] key(String namespace, String key) {
        checkNamespace(namespace);
        byte[] ns = utf8("namespace", namespace);
        byte[] k = utf8("key", Objects.requireNonNull(key, "key"));
        byte[] bytes = Arrays.copyOf(ns, ns.length + 1 + k.length);
        bytes[ns.length] = SEPARATOR;
        System.arraycopy(k, 0, bytes, ns.length + 1, k.length);
        return bytes;
    }

    /** The key prefix of every row whose namespace starts with {@code namespacePrefix}. */
    static byte[] namespacePrefix(String namespacePrefix) {
        if (namespacePrefix.indexOf('\u0000') >= 0) {
            throw new IllegalArgumentException("a namespace prefix must not contain the NUL character");
        }
        return utf8("namespace prefix", namespacePrefix);
    }

    static byte[] value(Instant createdAt, String data) {
        byte[] text = utf8("data", data);
        return ByteBuffer.allocate(HEADER + text.length)
                .put(VERSION)
                .putLong(createdAt.toEpochMilli())
                .put(text)
                .array();
    }

    static StateRow decode(byte[] key, byte[] value) {
        int separator = indexOf(key, SEPARATOR);
        if (separator <= 0) {
            throw new StateException("corrupt state key " + Arrays.toString(key) + ": no namespace separator");
        }
        String namespace = new String(key, 0, separator, StandardCharsets.UTF_8);
        String k = new String(key, separator + 1, key.length - separator - 1, StandardCharsets.UTF_8);
        if (value.length == 0 || value[0] != VERSION) {
            String found = value.length == 0 ? "an empty value" : "format version " + Byte.toUnsignedInt(value[0]);
            throw new StateException("state row (" + namespace + ", " + k + ") has " + found
                    + ", but this Sluice reads only version " + VERSION
                    + "; was it written by a newer Sluice? Upgrade, or delete the row.");
        }
        if (value.length < HEADER) {
            throw new StateException("state row (" + namespace + ", " + k + ") is corrupt: its value has "
                    + value.length + " bytes, fewer than the " + HEADER + "-byte header");
        }
        ByteBuffer buffer = ByteBuffer.wrap(value, 1, value.length - 1);
        Instant createdAt = Instant.ofEpochMilli(buffer.getLong());
        String data = new String(value, HEADER, value.length - HEADER, StandardCharsets.UTF_8);
        return new StateRow(namespace, k, data, createdAt);
    }

    static boolean startsWith(byte[] bytes, byte[] prefix) {
        return bytes.length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
    }

    /** Strict UTF-8: a lone surrogate would otherwise turn silently into '?', and two keys into one. */
    private static byte[] utf8(String what, String text) {
        try {
            ByteBuffer bytes = StandardCharsets.UTF_8
                    .newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(text));
            return Arrays.copyOfRange(bytes.array(), bytes.position(), bytes.limit());
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("state " + what + " is not valid Unicode text (unpaired surrogate)", e);
        }
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
