package dev.sluice.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/** The state DB on its own: rows, encoding, atomic and durable writes, locking, closing. */
class StateStoreTest {

    @TempDir
    Path dir;

    private Path db() {
        return dir.resolve("nested/state");
    }

    @Test
    void putGetScanDeleteAndCount() {
        try (StateStore store = StateStore.open(db())) {
            store.put("orders", "source/in/t/1", "{\"offset\": 7}");
            store.put("orders", "source/in/t/0", "{\"offset\": 5}");
            store.put("ordersx", "a", "1");
            store.put("billing", "k", "\"text\"");

            StateRow row = store.get("orders", "source/in/t/0").orElseThrow();
            assertEquals("{\"offset\":5}", row.data(), "data is stored compact");
            assertTrue(Math.abs(Instant.now().toEpochMilli() - row.createdAt().toEpochMilli()) < 60_000);
            assertEquals(Optional.empty(), store.get("orders", "nope"));
            assertEquals(Optional.empty(), store.get("order", "source/in/t/0"));

            assertEquals(
                    List.of("billing/k", "orders/source/in/t/0", "orders/source/in/t/1", "ordersx/a"),
                    names(store.scan("")),
                    "ordered by namespace, then key");
            assertEquals(
                    List.of("orders/source/in/t/0", "orders/source/in/t/1", "ordersx/a"), names(store.scan("orders")));
            assertEquals(List.of(), names(store.scan("zzz")));
            assertEquals(4, store.count());

            assertTrue(store.delete("orders", "source/in/t/0"));
            assertFalse(store.delete("orders", "source/in/t/0"), "second delete finds nothing");
            assertEquals(3, store.count());

            assertEquals(2, store.deletePrefix("orders"));
            assertEquals(List.of("billing/k"), names(store.scan("")));
            assertEquals(0, store.deletePrefix("orders"));
        }
    }

    @Test
    void aKeyPrefixScanReadsOnlyThatNamespacesKeysWithThePrefix() {
        try (StateStore store = StateStore.open(db())) {
            store.put("p", "source/a/x", "1");
            store.put("p", "source/ab/y", "2");
            store.put("p", "table/t/meta", "3");
            store.put("p2", "source/a/z", "4");
            store.put("o", "source/a/w", "5");
            assertEquals(
                    List.of("source/a/x"),
                    store.scan("p", "source/a/").stream().map(StateRow::key).toList());
            assertEquals(
                    List.of("source/a/x", "source/ab/y"),
                    store.scan("p", "source/a").stream().map(StateRow::key).toList());
            assertEquals(
                    List.of("3"),
                    store.scan("p", "table/").stream().map(StateRow::data).toList());
        }
    }

    @Test
    void keysMayHoldAnyTextAndNamespacesAreChecked() {
        try (StateStore store = StateStore.open(db())) {
            store.put("ns", "", "{}");
            store.put("ns", "with\u0000nul and ünïcødé ✓", "[1,2]");
            assertEquals(
                    "[1,2]",
                    store.get("ns", "with\u0000nul and ünïcødé ✓").orElseThrow().data());
            assertEquals(List.of("ns/", "ns/with\u0000nul and ünïcødé ✓"), names(store.scan("ns")));

            var nul = assertThrows(IllegalArgumentException.class, () -> store.put("a\u0000b", "k", "{}"));
            assertTrue(nul.getMessage().contains("NUL"), nul.getMessage());
            assertThrows(IllegalArgumentException.class, () -> store.put("", "k", "{}"));
            var surrogate = assertThrows(IllegalArgumentException.class, () -> store.put("ns", "\uD800", "{}"));
            assertTrue(surrogate.getMessage().contains("not valid Unicode"), surrogate.getMessage());
            assertEquals(2, store.count());
        }
    }

    @Test
    void dataMustBeExactlyOneJsonValueAndKeepsItsDigits() {
        try (StateStore store = StateStore.open(db())) {
            var bad = assertThrows(IllegalArgumentException.class, () -> store.put("ns", "k", "{offset: 1}"));
            assertTrue(
                    bad.getMessage().startsWith("state data is not valid JSON")
                            && bad.getMessage().contains("line 1"),
                    bad.getMessage());
            assertThrows(IllegalArgumentException.class, () -> store.put("ns", "k", "{} {}"), "trailing value");
            assertThrows(
                    IllegalArgumentException.class, () -> store.put("ns", "k", "{\"a\":1,\"a\":2}"), "duplicate field");
            assertThrows(IllegalArgumentException.class, () -> store.put("ns", "k", "  "));
            assertEquals(0, store.count());

            store.put("ns", "k", "{ \"offset\" : 9007199254740993, \"rate\": 1.10 }");
            assertEquals(
                    "{\"offset\":9007199254740993,\"rate\":1.10}",
                    store.get("ns", "k").orElseThrow().data());
        }
    }

    @Test
    void putAllIsAtomicAndDurableAcrossReopen() {
        Instant at = Instant.parse("2024-05-01T10:00:00.123456Z");
        List<StateRow> rows = List.of(
                new StateRow("p", "source/in/t/0", "{\"offset\": 10, \"epoch\": 3}", at),
                new StateRow("p", "source/in/t/1", "{\"offset\": 20, \"epoch\": 3}", at));
        try (StateStore store = StateStore.open(db())) {
            List<StateRow> withBadRow = List.of(rows.get(0), new StateRow("p", "bad", "{", at));
            assertThrows(IllegalArgumentException.class, () -> store.putAll(withBadRow));
            assertEquals(0, store.count(), "a bad row fails the whole batch before anything is written");
            store.putAll(rows);
        }
        try (StateStore store = StateStore.open(db())) {
            List<StateRow> read = store.scan("");
            assertEquals(2, read.size());
            assertEquals(new StateRow("p", "source/in/t/0", "{\"offset\":10,\"epoch\":3}", at), read.get(0));
            assertEquals(Instant.parse("2024-05-01T10:00:00.123Z"), read.get(1).createdAt(), "kept to the millisecond");
        }
    }

    @Test
    void aSecondWriterIsRefusedButReadersAreNot() {
        try (StateStore writer = StateStore.open(db())) {
            writer.put("p", "k", "{\"offset\": 1}");
            var locked = assertThrows(StateLockedException.class, () -> StateStore.open(db()));
            assertTrue(
                    locked.getMessage().contains("the state directory " + db())
                            && locked.getMessage().contains("already open for writing"),
                    locked.getMessage());

            try (StateStore reader = StateStore.openReadOnly(db())) {
                assertTrue(reader.isReadOnly());
                assertEquals(
                        "{\"offset\":1}", reader.get("p", "k").orElseThrow().data(), "a reader sees synced writes");
                var refused = assertThrows(IllegalStateException.class, () -> reader.put("p", "k", "{}"));
                assertTrue(refused.getMessage().contains("read-only"), refused.getMessage());
                assertThrows(IllegalStateException.class, () -> reader.delete("p", "k"));
            }
            writer.put("p", "k2", "2");
        }
        try (StateStore again = StateStore.open(db())) {
            assertEquals(2, again.count(), "closing released the lock");
        }
    }

    @Test
    void anotherProcessHoldingTheLockGetsAClearMessageAndReadersStillWork() throws Exception {
        Path state = db();
        Process child = StateLockHolder.start(state);
        try {
            var locked = assertThrows(StateLockedException.class, () -> StateStore.open(state));
            assertEquals(
                    "the state directory " + state + " is in use by another process (is the pipeline running?)",
                    locked.getMessage());
            assertThrows(StateLockedException.class, () -> StateStore.openExisting(state));
            long logsBefore = logFiles(state);
            try (StateStore reader = StateStore.openReadOnly(state)) {
                assertEquals(
                        "{\"holder\":true}",
                        reader.get("child", "k").orElseThrow().data());
            }
            assertEquals(logsBefore, logFiles(state), "a reader leaves the writer's RocksDB LOG alone");
        } finally {
            StateLockHolder.stop(child);
        }
        try (StateStore store = StateStore.open(state)) {
            assertEquals(1, store.count(), "the lock is free once the other process exits");
        }
    }

    @Test
    void unknownValueVersionsAreRefused() throws RocksDBException {
        try (StateStore store = StateStore.open(db())) {
            store.put("p", "good", "{}");
        }
        byte[] key = "p\u0000future".getBytes(StandardCharsets.UTF_8);
        byte[] value = {2, 0, 0, 0, 0, 0, 0, 0, 1, '{', '}'};
        try (Options options = new Options();
                RocksDB raw = RocksDB.open(options, db().toString())) {
            raw.put(key, value);
        }
        try (StateStore store = StateStore.openReadOnly(db())) {
            assertEquals("{}", store.get("p", "good").orElseThrow().data(), "other rows still read");
            var refused = assertThrows(StateException.class, () -> store.get("p", "future"));
            assertEquals(
                    "state row (p, future) has format version 2, but this Sluice reads only version 1; "
                            + "was it written by a newer Sluice? Upgrade, or delete the row.",
                    refused.getMessage());
            assertThrows(StateException.class, () -> store.scan(""));
        }
        try (StateStore store = StateStore.open(db())) {
            assertTrue(store.delete("p", "future"), "an unreadable row can still be deleted");
            assertEquals(1, store.scan("").size());
        }
    }

    @Test
    void codecWritesVersionOneAndRejectsTruncatedValues() {
        Instant at = Instant.ofEpochMilli(1_700_000_000_123L);
        byte[] value = StateCodec.value(at, "{\"a\":1}");
        assertEquals(1, value[0], "the version byte comes first");
        byte[] key = StateCodec.key("ns", "k");
        assertEquals(new StateRow("ns", "k", "{\"a\":1}", at), StateCodec.decode(key, value));
        var truncated = assertThrows(StateException.class, () -> StateCodec.decode(key, new byte[] {1, 0, 0}));
        assertTrue(truncated.getMessage().contains("corrupt"), truncated.getMessage());
        var empty = assertThrows(StateException.class, () -> StateCodec.decode(key, new byte[0]));
        assertTrue(empty.getMessage().contains("an empty value"), empty.getMessage());
    }

    @Test
    void missingStateIsReportedNotCreatedByReaders() throws IOException {
        var missing = assertThrows(StateNotFoundException.class, () -> StateStore.openReadOnly(db()));
        assertEquals("no state directory at " + db(), missing.getMessage());
        assertThrows(StateNotFoundException.class, () -> StateStore.openExisting(db()));
        assertFalse(Files.exists(db()));

        Files.createDirectories(db());
        var notState = assertThrows(StateNotFoundException.class, () -> StateStore.openReadOnly(db()));
        assertTrue(notState.getMessage().contains("is not a state directory"), notState.getMessage());
    }

    @Test
    void closeIsIdempotentAndUseAfterCloseFails() {
        StateStore store = StateStore.open(db());
        store.put("p", "k", "{}");
        store.close();
        store.close();
        var closed = assertThrows(IllegalStateException.class, () -> store.get("p", "k"));
        assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
        assertThrows(IllegalStateException.class, () -> store.put("p", "k", "{}"));
        assertThrows(IllegalStateException.class, store::count);
        try (StateStore reopened = StateStore.open(db())) {
            assertEquals(1, reopened.count(), "close released the lock");
        }
    }

    private static long logFiles(Path state) throws IOException {
        try (var files = Files.list(state)) {
            return files.filter(f -> f.getFileName().toString().startsWith("LOG"))
                    .count();
        }
    }

    private static List<String> names(List<StateRow> rows) {
        return rows.stream().map(r -> r.namespace() + "/" + r.key()).toList();
    }
}
