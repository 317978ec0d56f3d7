package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The FFM and JNI bridges are twins: the same calls give the same results, the same exception
 * classes and the same messages, and a handle made through one works through the other (both
 * call one library). Runs in both suites, whichever bridge is the default.
 */
class BridgeParityTest {

    private static final CoreBridge FFM;
    private static final CoreBridge JNI;

    static {
        NativeCore.bridge(); // loads the library and checks its version
        FFM = new FfmCoreBridge();
        JNI = new JniCoreBridge();
    }

    /** Runs {@code call} on both bridges and checks they fail alike; returns the JNI failure. */
    private static NativeException failsAlike(Class<? extends NativeException> expected, Consumer<CoreBridge> call) {
        NativeException viaFfm = assertThrows(expected, () -> call.accept(FFM));
        NativeException viaJni = assertThrows(expected, () -> call.accept(JNI));
        assertEquals(viaFfm.getMessage(), viaJni.getMessage());
        assertEquals(viaFfm.status(), viaJni.status());
        return viaJni;
    }

    @Test
    void everyCFunctionHasAJniTwinAndItsEntryPoint() {
        // sluice_transform_push ↔ sluiceTransformPush.
        java.util.Set<String> cFunctions = new java.util.TreeSet<>();
        for (var method : dev.sluice.ffm.sluice_h.class.getDeclaredMethods()) {
            String name = method.getName();
            if (name.startsWith("sluice_")
                    && !name.contains("$")
                    && java.lang.reflect.Modifier.isPublic(method.getModifiers())) {
                cFunctions.add(camelCase(name));
            }
        }
        java.util.Set<String> natives = new java.util.TreeSet<>();
        List<String> unlinked = new java.util.ArrayList<>();
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            // JNI links a native at its first call: check them all now, not when a rare path runs.
            var library = java.lang.foreign.SymbolLookup.libraryLookup(NativeLibrary.load(), arena);
            for (var method : JniCoreBridge.class.getDeclaredMethods()) {
                if (java.lang.reflect.Modifier.isNative(method.getModifiers())) {
                    natives.add(method.getName());
                    if (library.find("Java_dev_sluice_bridge_JniCoreBridge_" + method.getName())
                            .isEmpty()) {
                        unlinked.add(method.getName());
                    }
                }
            }
        }
        assertEquals(cFunctions, natives, "one JNI native per C function");
        assertEquals(List.of(), unlinked, "natives without an entry point in the library");
    }

    private static String camelCase(String snake) {
        StringBuilder out = new StringBuilder();
        boolean upper = false;
        for (char c : snake.toCharArray()) {
            if (c == '_') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }

    @Test
    void failuresHaveTheSameClassAndMessage() {
        long before = FFM.liveHandles();
        failsAlike(NativePlanException.class, b -> b.sqlTableReferences("SELEC * FORM x"));
        NativeException nullHandle = failsAlike(NativeArgumentException.class, b -> b.batchNumRows(0));
        assertTrue(nullHandle.getMessage().contains("batch handle is NULL"), nullHandle.getMessage());
        failsAlike(
                NativeIoException.class,
                b -> b.fileReaderOpen("{\"path\":\"/no/such/file.jsonl\",\"format\":\"json\"}", 0));
        failsAlike(NativeConfigException.class, b -> b.generatorCreate("{\"entity\":\"bids\"}"));
        failsAlike(NativeArgumentException.class, b -> b.generatorCreate("{not json"));
        long generator = FFM.generatorCreate("{\"entity\":\"bid\",\"count\":10}");
        long batch = FFM.generatorNext(generator, 10);
        long rows = FFM.batchNumRows(batch);
        NativeException outside = failsAlike(NativeArgumentException.class, b -> b.batchSlice(batch, rows - 2, 3));
        assertTrue(
                outside.getMessage().contains("rows " + (rows - 2) + " + 3 are outside a batch of " + rows),
                outside.getMessage());
        FFM.batchFree(batch);
        FFM.generatorFree(generator);
        assertEquals(before, JNI.liveHandles(), "no handle left behind by the failures");
    }

    @Test
    void aPanicInTheCoreIsTheSameExceptionOverJni() {
        // The panic location is in the message, so FFM and JNI messages are equal only
        // when both panicked at the same place: the core's, not the glue's.
        NativeException e = failsAlike(NativePanicException.class, b -> b.debugPanic("injected for a parity test"));
        assertTrue(
                e.getMessage().contains("abi.rs") && e.getMessage().contains("injected for a parity test"),
                e.getMessage());
        assertEquals(dev.sluice.ffm.sluice_h.SLUICE_ABI_VERSION(), JNI.abiVersion(), "the library carries on");
    }

    @Test
    void resultsAreTheSameAndHandlesCrossBridges() {
        long before = JNI.liveHandles();
        String options = "{\"entity\":\"bid\",\"seed\":3,\"count\":1000}";
        long viaFfm = FFM.generatorCreate(options);
        long viaJni = JNI.generatorCreate(options);
        try {
            assertEquals(FFM.liveHandles(), JNI.liveHandles());
            for (int i = 0; i < 3; i++) {
                long a = FFM.generatorNext(viaFfm, 100);
                long b = JNI.generatorNext(viaJni, 100);
                try {
                    assertEquals(FFM.batchNumRows(a), JNI.batchNumRows(b));
                    // Same rows, encoded by the other bridge: the handles are plain addresses.
                    assertEquals(encodeAll(JNI, a), encodeAll(FFM, b));
                    long sliceA = FFM.batchSlice(a, 10, 5);
                    long sliceB = JNI.batchSlice(b, 10, 5);
                    try {
                        assertEquals(5, JNI.batchNumRows(sliceA));
                        assertEquals(encodeAll(JNI, sliceA), encodeAll(FFM, sliceB));
                        assertTrue(
                                encodeAll(FFM, a).contains(encodeAll(FFM, sliceA)), "a slice holds the batch's rows");
                    } finally {
                        FFM.batchFree(sliceA);
                        JNI.batchFree(sliceB);
                    }
                } finally {
                    JNI.batchFree(a);
                    FFM.batchFree(b);
                }
            }
            assertEquals(FFM.generatorPosition(viaJni), JNI.generatorPosition(viaFfm));
            String join = "SELECT * FROM bid JOIN person ON bid.bidder = person.id";
            assertEquals(NativeTransform.tableReferences(FFM, join), NativeTransform.tableReferences(JNI, join));
            assertEquals(
                    List.of("bid", "person"),
                    NativeTransform.tableReferences(JNI, join).stream().sorted().toList());
        } finally {
            JNI.generatorFree(viaFfm);
            FFM.generatorFree(viaJni);
        }
        assertEquals(before, FFM.liveHandles(), "every handle freed, whichever bridge freed it");
    }

    @Test
    void decodingAndKeyedEncodingGiveTheSameRecords() {
        String before = NativeCore.bridge().name();
        try {
            NativeCore.select("ffm");
            String viaFfm = decodeAndEncode();
            NativeCore.select("jni");
            String viaJni = decodeAndEncode();
            assertEquals(viaFfm, viaJni);
            assertTrue(viaJni.contains("key 3 -> {\"id\":3,\"name\":\"c\"}"), viaJni);
            assertTrue(viaJni.contains("1 bad record"), viaJni);
        } finally {
            NativeCore.select(before);
        }
    }

    /** Slab → decoder (one bad record) → encoder with record offsets and keys, through the handle classes. */
    private static String decodeAndEncode() {
        List<String> records = List.of("{\"id\":1,\"name\":\"a\"}", "not json", "{\"id\":3,\"name\":\"c\"}");
        StringBuilder result = new StringBuilder();
        try (var allocator = ArrowC.rootAllocator().newChildAllocator("parity", 0, Long.MAX_VALUE);
                var arena = java.lang.foreign.Arena.ofConfined()) {
            byte[] bytes = String.join("", records).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            var data = arena.allocate(bytes.length);
            data.copyFrom(java.lang.foreign.MemorySegment.ofArray(bytes));
            var offsets = arena.allocate(8L * (records.size() + 1), 8);
            long end = 0;
            for (int i = 0; i < records.size(); i++) {
                end += records.get(i).length();
                offsets.setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i + 1, end);
            }
            var schema = NativeDecoder.inferJsonSchema(allocator, data, offsets, records.size());
            result.append(schema).append('\n');
            try (NativeDecoder decoder = NativeDecoder.create(allocator, "json", ",", schema)) {
                NativeDecoder.Decoded decoded = decoder.decode(data, offsets, records.size(), null);
                try (NativeBatch batch = decoded.batch();
                        NativeBatch errors = decoded.errors()) {
                    result.append(errors == null ? 0 : errors.rowCount()).append(" bad record\n");
                    new NativeEncoder("json", false, true, List.of("id")).encodeRecords(batch, encoded -> {
                        for (int i = 0; i < encoded.count(); i++) {
                            result.append("key ")
                                    .append(text(encoded.keys(), encoded.keyStart(i), encoded.keyLength(i)))
                                    .append(" -> ")
                                    .append(text(encoded.data(), encoded.start(i), encoded.length(i)))
                                    .append('\n');
                        }
                    });
                }
            }
        }
        return result.toString();
    }

    private static String text(java.lang.foreign.MemorySegment segment, long start, long length) {
        return new String(
                        segment.asSlice(start, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        java.nio.charset.StandardCharsets.UTF_8)
                .strip();
    }

    private static String encodeAll(CoreBridge bridge, long batch) {
        long buffer = bridge.encode(batch, "{\"format\":\"json\"}");
        try {
            long[] data = bridge.bufferData(buffer);
            byte[] bytes = java.lang.foreign.MemorySegment.ofAddress(data[0])
                    .reinterpret(data[1])
                    .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        } finally {
            bridge.bufferFree(buffer);
        }
    }
}
