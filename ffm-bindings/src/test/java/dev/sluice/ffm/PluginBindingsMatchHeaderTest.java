package dev.sluice.ffm;

import static dev.sluice.ffm.plugin.sluice_plugin_h.C_POINTER;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_COMPONENT_SCALAR_UDF;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_COMPONENT_SOURCE;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_PLUGIN_ABI_MAJOR;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_PLUGIN_ABI_MINOR;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_PLUGIN_ERROR;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_PLUGIN_OK;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_POLL_BATCH;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_POLL_NONE_YET;
import static dev.sluice.ffm.plugin.sluice_plugin_h.SLUICE_VOLATILITY_IMMUTABLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.sluice.ffm.plugin.SluiceComponent;
import dev.sluice.ffm.plugin.SluiceInstanceInfo;
import dev.sluice.ffm.plugin.SluicePlugin;
import dev.sluice.ffm.plugin.SluiceScalarUdf;
import dev.sluice.ffm.plugin.SluiceSource;
import dev.sluice.ffm.plugin.sluice_plugin_h;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fails when the committed bindings in {@code dev.sluice.ffm.plugin} and plugins-api/include/sluice_plugin.h
 * disagree, in either direction: {@code #define} values, struct field names, offsets, sizes and totals, and
 * each function-pointer field's nested class (descriptor, {@code Function}, {@code allocate}, {@code invoke})
 * and the entry point's descriptor. The Arrow C Data Interface structs the header repeats must be declared as
 * in sluice.h, whose bindings ({@code dev.sluice.ffm.ArrowSchema}, {@code ArrowArray}) they reuse.
 *
 * <p>It also drives the bindings: vtables built in Java from upcall stubs, called back through the
 * function-pointer downcalls, and (when a C compiler is on PATH) a plugin compiled from the header, loaded
 * with {@code SymbolLookup.libraryLookup} as the engine loads one.
 */
class PluginBindingsMatchHeaderTest {

    private static final String HEADER_PATH = "plugins-api/include/sluice_plugin.h";
    private static final String CORE_HEADER_PATH = "rust/core/include/sluice.h";
    private static final String REGENERATE = HeaderChecks.REGENERATE;
    private static final String PLUGIN_PACKAGE = sluice_plugin_h.class.getPackageName();

    /** What gcc says on x86-64 Linux (LP64); an independent check of both parsers' layout rule. */
    private static final Map<String, Long> SIZES = Map.of(
            "SluiceInstanceInfo", 32L,
            "SluiceSource", 48L,
            "SluiceTransform", 40L,
            "SluiceSink", 48L,
            "SluiceScalarUdf", 48L,
            "SluicePreprocessor", 8L,
            "SluiceSideOutput", 32L,
            "SluiceComponent", 40L,
            "SluicePlugin", 56L);

    private static Path repoRoot;
    private static Path moduleDir;
    private static SluiceHeader header;
    private static SluiceHeader coreHeader;

    @BeforeAll
    static void readHeaders() throws IOException {
        repoRoot = HeaderChecks.locateRepoRoot(HEADER_PATH);
        moduleDir = repoRoot.resolve("ffm-bindings");
        header = SluiceHeader.parse(Files.readString(repoRoot.resolve(HEADER_PATH)));
        coreHeader = SluiceHeader.parse(Files.readString(repoRoot.resolve(CORE_HEADER_PATH)));
        assertFalse(header.functions().isEmpty(), "no functions found in " + HEADER_PATH);
    }

    /** A struct sluice.h declares too (the Arrow C Data Interface): bound once, in dev.sluice.ffm. */
    private static boolean shared(String struct) {
        return coreHeader.structs().containsKey(struct);
    }

    private static Class<?> bindingOf(String struct) {
        String pkg = shared(struct) ? sluice_h.class.getPackageName() : PLUGIN_PACKAGE;
        try {
            return Class.forName(pkg + "." + struct);
        } catch (ClassNotFoundException e) {
            throw new AssertionError("no class " + pkg + "." + struct + " for struct " + struct + REGENERATE, e);
        }
    }

    @TestFactory
    Stream<DynamicTest> everyFunctionHasADescriptor() {
        // Only the descriptor: each plugin library exports its own entry point, looked up by the caller.
        return header.functions().values().stream()
                .map(f -> dynamicTest(f.name(), () -> {
                    Method method;
                    try {
                        method = sluice_plugin_h.class.getMethod(f.name() + "$descriptor");
                    } catch (NoSuchMethodException e) {
                        throw new AssertionError(
                                "sluice_plugin_h has no " + f.name() + "$descriptor()" + REGENERATE, e);
                    }
                    assertTrue(Modifier.isStatic(method.getModifiers()), method + " is static");
                    FunctionDescriptor descriptor = (FunctionDescriptor) method.invoke(null);
                    assertEquals(
                            HeaderChecks.describe(f),
                            HeaderChecks.describe(descriptor),
                            f.name() + "$descriptor()" + REGENERATE);
                }));
    }

    @Test
    void noDescriptorForAFunctionTheHeaderLacks() {
        List<String> extra = HeaderChecks.boundFunctions(sluice_plugin_h.class).stream()
                .filter(name -> !header.functions().containsKey(name))
                .toList();
        assertEquals(List.of(), extra, "bindings of functions that are not in sluice_plugin.h" + REGENERATE);
    }

    @Test
    void constantsMatchTheDefines() throws Exception {
        assertEquals(
                List.of(),
                HeaderChecks.constantMismatches(header.constants(), sluice_plugin_h.class),
                "#define constants of sluice_plugin.h" + REGENERATE);
    }

    @TestFactory
    Stream<DynamicTest> structsMatchTheHeader() {
        return header.structs().values().stream()
                .map(s -> dynamicTest(s.name(), () -> HeaderChecks.checkStruct(bindingOf(s.name()), s)));
    }

    @Test
    void theArrowStructsAreDeclaredAsInSluiceH() {
        List<String> shared = header.structs().keySet().stream()
                .filter(PluginBindingsMatchHeaderTest::shared)
                .toList();
        assertEquals(List.of("ArrowSchema", "ArrowArray"), shared, "structs sluice_plugin.h shares with sluice.h");
        for (String name : shared) {
            assertEquals(
                    coreHeader.structs().get(name),
                    header.structs().get(name),
                    "struct " + name + " of sluice_plugin.h and of sluice.h (its binding is dev.sluice.ffm." + name
                            + ")");
        }
    }

    @Test
    void structSizesAreWhatACompilerGives() throws Exception {
        Set<String> own = new TreeSet<>(header.structs().keySet());
        own.removeIf(PluginBindingsMatchHeaderTest::shared);
        assertEquals(new TreeSet<>(SIZES.keySet()), own, "the structs of sluice_plugin.h (update SIZES)");
        for (String name : own) {
            assertEquals(SIZES.get(name), header.structs().get(name).byteSize(), name + " as SluiceHeader lays it out");
            assertEquals(
                    SIZES.get(name), (long) bindingOf(name).getMethod("sizeof").invoke(null), name + ".sizeof()");
        }
    }

    @Test
    void noClassForAStructTheHeaderLacks() throws IOException {
        Path dir = moduleDir.resolve("src/main/java/" + PLUGIN_PACKAGE.replace('.', '/'));
        try (Stream<Path> files = Files.list(dir)) {
            List<String> extra = files.map(file -> file.getFileName().toString())
                    .filter(file -> file.endsWith(".java"))
                    .map(file -> file.substring(0, file.length() - ".java".length()))
                    .filter(name -> !name.startsWith("sluice_plugin_h"))
                    .filter(name -> !header.structs().containsKey(name) || shared(name))
                    .sorted()
                    .toList();
            assertEquals(
                    List.of(),
                    extra,
                    "classes in " + PLUGIN_PACKAGE + " of structs sluice_plugin.h lacks or sluice.h's bindings have"
                            + REGENERATE);
        }
    }

    @Test
    void committedSourcesAreWhatGeneratePyWrites() throws Exception {
        HeaderChecks.generatePyFindsNothingStale(moduleDir, "--target", "plugin");
    }

    @Test
    void aScalarUdfUpcallStubIsCalledBackThroughItsDowncall() {
        // A Java-implemented UDF: the vtable the engine would hand to the SQL engine, called as it would.
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment message = arena.allocateFrom("n_rows < 0");
            // Keep upcalls trivial: an exception thrown from one crashes the JVM.
            SluiceScalarUdf.invoke.Function add = (state, args, nRows, outResult, outError) -> {
                if (nRows < 0) {
                    outError.set(C_POINTER, 0, message);
                    return SLUICE_PLUGIN_ERROR();
                }
                MemorySegment first = args.getAtIndex(C_POINTER, 0);
                MemorySegment second = args.getAtIndex(C_POINTER, 1);
                ArrowArray.length(outResult, nRows);
                ArrowArray.null_count(outResult, ArrowArray.length(first) + ArrowArray.length(second));
                ArrowArray.offset(outResult, state.get(JAVA_LONG, 0));
                return SLUICE_PLUGIN_OK();
            };
            MemorySegment udf = SluiceScalarUdf.allocate(arena);
            MemorySegment argTypes = arena.allocate(C_POINTER, 2);
            argTypes.setAtIndex(C_POINTER, 0, arena.allocateFrom("l"));
            argTypes.setAtIndex(C_POINTER, 1, arena.allocateFrom("l"));
            SluiceScalarUdf.n_args(udf, 2);
            SluiceScalarUdf.arg_types(udf, argTypes);
            SluiceScalarUdf.return_type(udf, arena.allocateFrom("l"));
            SluiceScalarUdf.volatility(udf, SLUICE_VOLATILITY_IMMUTABLE());
            SluiceScalarUdf.state(udf, arena.allocateFrom(JAVA_LONG, 100));
            SluiceScalarUdf.invoke(udf, SluiceScalarUdf.invoke.allocate(add, arena));

            MemorySegment args = arena.allocate(C_POINTER, 2);
            for (int i = 0; i < 2; i++) {
                MemorySegment arg = ArrowArray.allocate(arena);
                ArrowArray.length(arg, 7 + i);
                args.setAtIndex(C_POINTER, i, arg);
            }
            MemorySegment out = ArrowArray.allocate(arena);
            MemorySegment outError = arena.allocate(C_POINTER);

            MemorySegment fn = SluiceScalarUdf.invoke(udf);
            MemorySegment state = SluiceScalarUdf.state(udf);
            assertEquals(SLUICE_PLUGIN_OK(), SluiceScalarUdf.invoke.invoke(fn, state, args, 3, out, outError));
            assertEquals(3, ArrowArray.length(out));
            assertEquals(15, ArrowArray.null_count(out), "both argument arrays read through args");
            assertEquals(100, ArrowArray.offset(out), "state passed through");
            assertEquals(MemorySegment.NULL, outError.get(C_POINTER, 0));

            assertEquals(SLUICE_PLUGIN_ERROR(), SluiceScalarUdf.invoke.invoke(fn, state, args, -1, out, outError));
            assertEquals("n_rows < 0", outError.get(C_POINTER, 0).getString(0));
            assertEquals(
                    "l", SluiceScalarUdf.arg_types(udf).getAtIndex(C_POINTER, 1).getString(0));
        }
    }

    @Test
    void aSourceVtableAndAPluginDescriptorBuiltInJavaReadBack() {
        try (Arena arena = Arena.ofConfined()) {
            long[] seen = new long[4];
            MemorySegment source = SluiceSource.allocate(arena);
            SluiceSource.poll(
                    source,
                    SluiceSource.poll.allocate(
                            (state, maxRows, timeoutMillis, outResult, outBatch, outError) -> {
                                seen[0] = maxRows;
                                seen[1] = timeoutMillis;
                                outResult.set(
                                        JAVA_INT, 0, timeoutMillis == 0 ? SLUICE_POLL_NONE_YET() : SLUICE_POLL_BATCH());
                                ArrowArray.length(outBatch, maxRows);
                                return SLUICE_PLUGIN_OK();
                            },
                            arena));
            SluiceSource.close(source, SluiceSource.close.allocate(state -> seen[2] = state.address(), arena));

            MemorySegment result = arena.allocate(JAVA_INT);
            MemorySegment batch = ArrowArray.allocate(arena);
            MemorySegment state = MemorySegment.ofAddress(0x1234);
            int status = SluiceSource.poll.invoke(
                    SluiceSource.poll(source), state, 10, 250, result, batch, arena.allocate(C_POINTER));
            assertEquals(SLUICE_PLUGIN_OK(), status);
            assertEquals(10, seen[0]);
            assertEquals(250, seen[1]);
            assertEquals(SLUICE_POLL_BATCH(), result.get(JAVA_INT, 0));
            assertEquals(10, ArrowArray.length(batch));
            SluiceSource.close.invoke(SluiceSource.close(source), state);
            assertEquals(0x1234, seen[2]);
            assertEquals(MemorySegment.NULL, SluiceSource.restore(source), "an optional entry left NULL");

            // A descriptor as sluice_plugin_entry returns it, read the way the engine reads one.
            MemorySegment components = SluiceComponent.allocateArray(2, arena);
            SluiceComponent.kind(SluiceComponent.asSlice(components, 0), SLUICE_COMPONENT_SOURCE());
            SluiceComponent.name(SluiceComponent.asSlice(components, 0), arena.allocateFrom("ticks"));
            SluiceComponent.vtable(SluiceComponent.asSlice(components, 0), source);
            SluiceComponent.kind(SluiceComponent.asSlice(components, 1), SLUICE_COMPONENT_SCALAR_UDF());
            SluiceComponent.name(SluiceComponent.asSlice(components, 1), arena.allocateFrom("add"));
            MemorySegment plugin = SluicePlugin.allocate(arena);
            SluicePlugin.abi_major(plugin, SLUICE_PLUGIN_ABI_MAJOR());
            SluicePlugin.abi_minor(plugin, SLUICE_PLUGIN_ABI_MINOR());
            SluicePlugin.name(plugin, arena.allocateFrom("java-plugin"));
            SluicePlugin.n_components(plugin, 2);
            SluicePlugin.components(plugin, components);
            SluicePlugin.free_bytes(
                    plugin, SluicePlugin.free_bytes.allocate((data, len) -> seen[3] = data.address() + len, arena));

            assertEquals(SLUICE_PLUGIN_ABI_MAJOR(), SluicePlugin.abi_major(plugin));
            assertEquals("java-plugin", SluicePlugin.name(plugin).getString(0));
            MemorySegment read = SluicePlugin.components(plugin);
            assertEquals(2, SluicePlugin.n_components(plugin));
            assertEquals(
                    "add",
                    SluiceComponent.name(SluiceComponent.asSlice(read, 1)).getString(0));
            assertEquals(SLUICE_COMPONENT_SCALAR_UDF(), SluiceComponent.kind(SluiceComponent.asSlice(read, 1)));
            assertEquals(
                    source.address(),
                    SluiceComponent.vtable(SluiceComponent.asSlice(read, 0)).address());
            SluicePlugin.free_bytes.invoke(SluicePlugin.free_bytes(plugin), MemorySegment.ofAddress(1000), 24);
            assertEquals(1024, seen[3], "void free_bytes(uint8_t *, size_t)");
        }
    }

    /**
     * A plugin written in C against the header, compiled here and loaded by path as the engine does: its
     * descriptor read through the bindings and its vtables called through the function-pointer downcalls.
     * It also exports sizeof/offsetof of every field of the header, which the bindings must agree with.
     * Skipped without a C compiler ({@code cc}).
     */
    @Test
    void aPluginCompiledFromTheHeaderLoadsAndRuns(@TempDir Path dir) throws Throwable {
        Path library = compilePlugin(dir);
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, arena);
            MethodHandle entry = Linker.nativeLinker()
                    .downcallHandle(
                            lookup.find("sluice_plugin_entry").orElseThrow(),
                            sluice_plugin_h.sluice_plugin_entry$descriptor());
            MemorySegment plugin = (MemorySegment) entry.invokeExact();

            checkLayoutAgainstTheCompiler(lookup);

            assertEquals(SLUICE_PLUGIN_ABI_MAJOR(), SluicePlugin.abi_major(plugin));
            assertEquals(SLUICE_PLUGIN_ABI_MINOR(), SluicePlugin.abi_minor(plugin));
            assertEquals("test-plugin", SluicePlugin.name(plugin).getString(0));
            assertEquals("0.1.0", SluicePlugin.version(plugin).getString(0));
            assertEquals(2, SluicePlugin.n_components(plugin));
            MemorySegment components = SluicePlugin.components(plugin);
            MemorySegment freed = lookup.find("sluice_test_freed").orElseThrow().reinterpret(4);

            MemorySegment udfComponent = SluiceComponent.asSlice(components, 0);
            assertEquals(SLUICE_COMPONENT_SCALAR_UDF(), SluiceComponent.kind(udfComponent));
            assertEquals("add", SluiceComponent.name(udfComponent).getString(0));
            assertEquals(
                    "Adds two int64 arrays.",
                    SluiceComponent.description(udfComponent).getString(0));
            assertEquals(MemorySegment.NULL, SluiceComponent.options_schema(udfComponent));
            MemorySegment udf = SluiceComponent.vtable(udfComponent);
            assertEquals(2, SluiceScalarUdf.n_args(udf));
            assertEquals(
                    "l", SluiceScalarUdf.arg_types(udf).getAtIndex(C_POINTER, 1).getString(0));
            assertEquals("l", SluiceScalarUdf.return_type(udf).getString(0));

            MemorySegment args = arena.allocate(C_POINTER, 2);
            for (int i = 0; i < 2; i++) {
                MemorySegment arg = ArrowArray.allocate(arena);
                ArrowArray.length(arg, 7 + i);
                args.setAtIndex(C_POINTER, i, arg);
            }
            MemorySegment out = ArrowArray.allocate(arena);
            MemorySegment outError = arena.allocate(C_POINTER);
            MemorySegment invoke = SluiceScalarUdf.invoke(udf);
            MemorySegment state = SluiceScalarUdf.state(udf);
            assertEquals(SLUICE_PLUGIN_OK(), SluiceScalarUdf.invoke.invoke(invoke, state, args, 3, out, outError));
            assertEquals(3, ArrowArray.length(out));
            assertEquals(15, ArrowArray.null_count(out));
            assertEquals(100, ArrowArray.offset(out));
            assertEquals(SLUICE_PLUGIN_ERROR(), SluiceScalarUdf.invoke.invoke(invoke, state, args, -1, out, outError));
            MemorySegment error = outError.get(C_POINTER, 0);
            assertEquals("n_rows < 0", error.getString(0));
            SluicePlugin.free_string.invoke(SluicePlugin.free_string(plugin), error);
            assertEquals(1, freed.get(JAVA_INT, 0), "free_string ran");

            MemorySegment sourceComponent = SluiceComponent.asSlice(components, 1);
            assertEquals(SLUICE_COMPONENT_SOURCE(), SluiceComponent.kind(sourceComponent));
            MemorySegment source = SluiceComponent.vtable(sourceComponent);
            assertEquals(MemorySegment.NULL, SluiceSource.restore(source));
            MemorySegment info = SluiceInstanceInfo.allocate(arena);
            SluiceInstanceInfo.pipeline(info, arena.allocateFrom("p"));
            SluiceInstanceInfo.node(info, arena.allocateFrom("n"));
            SluiceInstanceInfo.pipeline_dir(info, arena.allocateFrom("/tmp"));
            SluiceInstanceInfo.lane(info, 2);
            SluiceInstanceInfo.lanes(info, 4);
            MemorySegment outState = arena.allocate(C_POINTER);
            MemorySegment schema = ArrowSchema.allocate(arena);
            assertEquals(
                    SLUICE_PLUGIN_OK(),
                    SluiceSource.open.invoke(
                            SluiceSource.open(source), arena.allocateFrom("{}"), info, outState, schema, outError));
            MemorySegment sourceState = outState.get(C_POINTER, 0);

            MemorySegment result = arena.allocate(JAVA_INT);
            MemorySegment batch = ArrowArray.allocate(arena);
            assertEquals(
                    SLUICE_PLUGIN_OK(),
                    SluiceSource.poll.invoke(SluiceSource.poll(source), sourceState, 10, 250, result, batch, outError));
            assertEquals(SLUICE_POLL_BATCH(), result.get(JAVA_INT, 0));
            assertEquals(2014, ArrowArray.length(batch), "lane * 1000 + lanes + max_rows");
            assertEquals(
                    SLUICE_PLUGIN_OK(),
                    SluiceSource.poll.invoke(SluiceSource.poll(source), sourceState, 10, 0, result, batch, outError));
            assertEquals(SLUICE_POLL_NONE_YET(), result.get(JAVA_INT, 0));

            MemorySegment outData = arena.allocate(C_POINTER);
            MemorySegment outLen = arena.allocate(JAVA_LONG);
            assertEquals(
                    SLUICE_PLUGIN_OK(),
                    SluiceSource.snapshot.invoke(
                            SluiceSource.snapshot(source), sourceState, 5, outData, outLen, outError));
            assertEquals(8, outLen.get(JAVA_LONG, 0));
            MemorySegment data = outData.get(C_POINTER, 0);
            assertEquals(2014 * 10 + 5, data.get(JAVA_LONG, 0), "position * 10 + epoch");
            SluicePlugin.free_bytes.invoke(SluicePlugin.free_bytes(plugin), data, outLen.get(JAVA_LONG, 0));
            assertEquals(2, freed.get(JAVA_INT, 0), "free_bytes ran");
            SluiceSource.close.invoke(SluiceSource.close(source), sourceState);
            assertEquals(3, freed.get(JAVA_INT, 0), "close ran");
        }
    }

    /** sluice_test_layout: for each struct its sizeof, then each field's offsetof, in header order. */
    private static void checkLayoutAgainstTheCompiler(SymbolLookup lookup) throws Exception {
        List<String> mismatches = new ArrayList<>();
        int count = header.structs().values().stream()
                .mapToInt(s -> 1 + s.fields().size())
                .sum();
        MemorySegment table = lookup.find("sluice_test_layout").orElseThrow().reinterpret(count * 8L);
        int i = 0;
        for (SluiceHeader.Struct struct : header.structs().values()) {
            Class<?> binding = bindingOf(struct.name());
            long size = table.getAtIndex(JAVA_LONG, i++);
            if (size != (long) binding.getMethod("sizeof").invoke(null)) {
                mismatches.add("sizeof(struct " + struct.name() + ") is " + size);
            }
            for (SluiceHeader.Field field : struct.fields()) {
                long offset = table.getAtIndex(JAVA_LONG, i++);
                if (offset != (long) binding.getMethod(field.name() + "$offset").invoke(null)) {
                    mismatches.add("offsetof(struct " + struct.name() + ", " + field.name() + ") is " + offset);
                }
            }
        }
        assertEquals(List.of(), mismatches, "the C compiler lays sluice_plugin.h out otherwise" + REGENERATE);
    }

    private static Path compilePlugin(Path dir) throws Exception {
        StringBuilder layout = new StringBuilder("const int64_t sluice_test_layout[] = {\n");
        for (SluiceHeader.Struct struct : header.structs().values()) {
            layout.append("    sizeof(struct ").append(struct.name()).append("),\n");
            for (SluiceHeader.Field field : struct.fields()) {
                layout.append("    offsetof(struct ")
                        .append(struct.name())
                        .append(", ")
                        .append(field.name())
                        .append("),\n");
            }
        }
        layout.append("};\n");
        Path source = dir.resolve("test_plugin.c");
        Files.writeString(source, TEST_PLUGIN + layout, UTF_8);
        Path library = dir.resolve(System.mapLibraryName("test_plugin"));
        List<String> command = List.of(
                "cc",
                "-shared",
                "-fPIC",
                "-std=c11",
                "-Wall",
                "-I",
                repoRoot.resolve("plugins-api/include").toString(),
                "-o",
                library.toString(),
                source.toString());
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            abort("no C compiler (cc), cannot build a test plugin: " + e.getMessage());
            return null;
        }
        String output = new String(process.getInputStream().readAllBytes(), UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "cc did not finish");
        assertEquals(0, process.exitValue(), "cc failed on a plugin written against sluice_plugin.h:\n" + output);
        return library;
    }

    private static final String TEST_PLUGIN = """
            #include <stdlib.h>
            #include <string.h>
            #include "sluice_plugin.h"

            int32_t sluice_test_freed = 0;

            static char *copy(const char *text) {
                size_t n = strlen(text) + 1;
                char *c = malloc(n);
                memcpy(c, text, n);
                return c;
            }

            static int32_t add_invoke(void *state, struct ArrowArray **args, int64_t n_rows,
                                      struct ArrowArray *out_result, char **out_error) {
                if (n_rows < 0) {
                    *out_error = copy("n_rows < 0");
                    return SLUICE_PLUGIN_ERROR;
                }
                memset(out_result, 0, sizeof *out_result);
                out_result->length = n_rows;
                out_result->null_count = args[0]->length + args[1]->length;
                out_result->offset = *(int64_t *) state;
                return SLUICE_PLUGIN_OK;
            }

            static int64_t add_state = 100;
            static const char *add_args[] = {"l", "l"};
            static const struct SluiceScalarUdf add = {
                2, add_args, "l", SLUICE_VOLATILITY_IMMUTABLE, &add_state, add_invoke};

            static int32_t ticks_open(const char *options_json, const struct SluiceInstanceInfo *instance,
                                      void **out_state, struct ArrowSchema *out_schema, char **out_error) {
                (void) options_json; (void) out_error;
                memset(out_schema, 0, sizeof *out_schema);
                int64_t *position = malloc(sizeof *position);
                *position = instance->lane * 1000 + instance->lanes;
                *out_state = position;
                return SLUICE_PLUGIN_OK;
            }

            static int32_t ticks_poll(void *state, int64_t max_rows, int64_t timeout_millis, int32_t *out_result,
                                      struct ArrowArray *out_batch, char **out_error) {
                (void) out_error;
                int64_t *position = state;
                if (timeout_millis == 0) {
                    *out_result = SLUICE_POLL_NONE_YET;
                    return SLUICE_PLUGIN_OK;
                }
                *position += max_rows;
                memset(out_batch, 0, sizeof *out_batch);
                out_batch->length = *position;
                *out_result = SLUICE_POLL_BATCH;
                return SLUICE_PLUGIN_OK;
            }

            static int32_t ticks_snapshot(void *state, int64_t epoch, uint8_t **out_data, size_t *out_len,
                                          char **out_error) {
                (void) out_error;
                int64_t value = *(int64_t *) state * 10 + epoch;
                *out_data = malloc(sizeof value);
                memcpy(*out_data, &value, sizeof value);
                *out_len = sizeof value;
                return SLUICE_PLUGIN_OK;
            }

            static void ticks_close(void *state) {
                free(state);
                sluice_test_freed++;
            }

            static const struct SluiceSource ticks = {ticks_open, NULL, ticks_poll, ticks_snapshot, NULL, ticks_close};

            static void free_string(char *text) {
                free(text);
                sluice_test_freed++;
            }

            static void free_bytes(uint8_t *data, size_t len) {
                (void) len;
                free(data);
                sluice_test_freed++;
            }

            static const struct SluiceComponent components[] = {
                {SLUICE_COMPONENT_SCALAR_UDF, "add", "Adds two int64 arrays.", NULL, &add},
                {SLUICE_COMPONENT_SOURCE, "ticks", NULL, "[]", &ticks},
            };

            static const struct SluicePlugin plugin = {
                SLUICE_PLUGIN_ABI_MAJOR, SLUICE_PLUGIN_ABI_MINOR, "test-plugin", "0.1.0",
                2, components, free_string, free_bytes};

            const struct SluicePlugin *sluice_plugin_entry(void) {
                return &plugin;
            }

            """;
}
