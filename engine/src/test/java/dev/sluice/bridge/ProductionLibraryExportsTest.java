package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The library the engine ships (in the bridge module's classes, hence in sluice.jar) exports no
 * test-only or benchmark-only function; the one these tests load (engine test classes, built from
 * rust/debug-exports) is the same core plus {@code sluice_debug_panic} and its JNI twin.
 */
class ProductionLibraryExportsTest {

    private static final String RESOURCE = "native/" + NativeLibrary.platform() + "/" + NativeLibrary.FILE_NAME;
    private static final List<String> TEST_ONLY =
            List.of("sluice_debug_panic", "Java_dev_sluice_bridge_JniCoreBridge_sluiceDebugPanic");
    /** Benchmark functions (libsluice_bench.so) and the counting allocator's probe (builds with alloc-stats only). */
    private static final List<String> NEVER = List.of(
            "sluice_bench_noop",
            "sluice_bench_two_pointers",
            "sluice_bench_upcall",
            "Java_dev_sluice_benchmarks_CallShapeBenchmark_00024Jni_noop",
            "sluice_bench_jni_udf_invoke",
            "Java_dev_sluice_benchmarks_UdfBenchmark_00024Jni_register",
            "sluice_debug_live_bytes");

    /** The copy of the core next to NativeLibrary's own class: the bridge module's, the one sluice.jar ships. */
    private static URL productionLibrary() throws Exception {
        URL bridgeCode =
                NativeLibrary.class.getProtectionDomain().getCodeSource().getLocation();
        for (URL url : Collections.list(NativeLibrary.class.getClassLoader().getResources(RESOURCE))) {
            String location = url.toString();
            String bridge = bridgeCode.toString();
            if (location.startsWith("jar:" + bridge + "!/") || location.equals(bridge + RESOURCE)) {
                return url;
            }
        }
        throw new AssertionError("no " + RESOURCE + " next to " + bridgeCode);
    }

    @Test
    void theShippedLibraryLacksTestAndBenchmarkExports() throws Exception {
        URL url = productionLibrary();
        Path production = NativeLibrary.extractOnce(url, NativeLibrary.FILE_NAME);
        assertNotEquals(
                NativeLibrary.load().toRealPath(),
                production.toRealPath(),
                "the tests must not run on the shipped library");
        List<String> present = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup library = SymbolLookup.libraryLookup(production, arena);
            assertTrue(library.find("sluice_abi_version").isPresent(), url + " is not the core");
            for (String symbol : concat(TEST_ONLY, NEVER)) {
                library.find(symbol).ifPresent(found -> present.add(symbol));
            }
        }
        assertEquals(List.of(), present, url + " exports test or benchmark functions");
    }

    @Test
    void theTestLibraryHasTheTestExportsOnly() {
        NativeLibrary.load();
        SymbolLookup loaded = SymbolLookup.loaderLookup();
        for (String symbol : TEST_ONLY) {
            assertTrue(loaded.find(symbol).isPresent(), "the tests' library lacks " + symbol);
        }
        for (String symbol : NEVER) {
            assertTrue(loaded.find(symbol).isEmpty(), "the tests' library exports " + symbol);
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
