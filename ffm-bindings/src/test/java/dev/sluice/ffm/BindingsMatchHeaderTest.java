package dev.sluice.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Fails when the committed bindings and rust/core/include/sluice.h disagree, in either direction.
 *
 * <p>It runs without the native library: it only reads descriptors, layouts and constants, and those
 * must not resolve symbols (only the holder behind {@code name$handle()} / {@code name$address()} does).
 * The comparisons themselves are {@link HeaderChecks}'; {@link PluginBindingsMatchHeaderTest} makes the same
 * of sluice_plugin.h.
 */
class BindingsMatchHeaderTest {

    private static final String HEADER_PATH = "rust/core/include/sluice.h";
    private static final String REGENERATE = HeaderChecks.REGENERATE;

    private static Path moduleDir;
    private static SluiceHeader header;

    @BeforeAll
    static void readHeader() throws IOException {
        Path repoRoot = HeaderChecks.locateRepoRoot(HEADER_PATH);
        moduleDir = repoRoot.resolve("ffm-bindings");
        header = SluiceHeader.parse(Files.readString(repoRoot.resolve(HEADER_PATH)));
        assertFalse(header.functions().isEmpty(), "no functions found in " + HEADER_PATH);
    }

    @TestFactory
    Stream<DynamicTest> everyHeaderFunctionHasAMatchingBinding() {
        return header.functions().values().stream().map(f -> dynamicTest(f.name(), () -> checkFunction(f)));
    }

    private static void checkFunction(SluiceHeader.Function function) throws Exception {
        String name = function.name();
        Method descriptor = staticMethod(name + "$descriptor", FunctionDescriptor.class);
        staticMethod(name + "$handle", MethodHandle.class);
        staticMethod(name + "$address", MemorySegment.class);

        Class<?>[] carriers =
                function.params().stream().map(SluiceHeader.CType::carrier).toArray(Class<?>[]::new);
        Method wrapper;
        try {
            wrapper = sluice_h.class.getMethod(name, carriers);
        } catch (NoSuchMethodException e) {
            String signature = Arrays.stream(carriers).map(Class::getSimpleName).collect(Collectors.joining(", "));
            throw new AssertionError("sluice_h has no " + name + "(" + signature + ")" + REGENERATE, e);
        }
        assertEquals(function.ret().carrier(), wrapper.getReturnType(), name + " return type" + REGENERATE);

        assertEquals(
                HeaderChecks.describe(function),
                HeaderChecks.describe(readDescriptor(descriptor)),
                name + "$descriptor()" + REGENERATE);
    }

    private static FunctionDescriptor readDescriptor(Method descriptor) throws Exception {
        try {
            return (FunctionDescriptor) descriptor.invoke(null);
        } catch (InvocationTargetException e) {
            // jextract's own holder class initializes DESC together with the symbol lookup.
            assumeFalse(madeByJextract(), "jextract-made bindings resolve the symbol to read a descriptor");
            throw new AssertionError(
                    descriptor.getName() + "() must not need the native library" + " (the test runs without it)",
                    e.getCause());
        }
    }

    @Test
    void noBindingForAFunctionTheHeaderLacks() {
        List<String> extra = HeaderChecks.boundFunctions(sluice_h.class).stream()
                .filter(name -> !header.functions().containsKey(name))
                .toList();
        assertEquals(List.of(), extra, "bindings of functions that are not in sluice.h" + REGENERATE);
    }

    @Test
    void constantsMatchTheDefines() throws Exception {
        assertEquals(
                List.of(),
                HeaderChecks.constantMismatches(header.constants(), sluice_h.class),
                "#define constants" + REGENERATE);
    }

    @TestFactory
    Stream<DynamicTest> structsMatchTheHeader() {
        return header.structs().values().stream().map(s -> dynamicTest(s.name(), () -> checkStruct(s)));
    }

    private static void checkStruct(SluiceHeader.Struct struct) throws Exception {
        Class<?> binding;
        try {
            binding = Class.forName(sluice_h.class.getPackageName() + "." + struct.name());
        } catch (ClassNotFoundException e) {
            throw new AssertionError("no class for struct " + struct.name() + REGENERATE, e);
        }
        HeaderChecks.checkStruct(binding, struct);
    }

    @Test
    void arrowStructsHaveTheSizesOfTheArrowCDataInterface() {
        assertEquals(72, header.structs().get("ArrowSchema").byteSize(), "ArrowSchema in sluice.h");
        assertEquals(80, header.structs().get("ArrowArray").byteSize(), "ArrowArray in sluice.h");
        assertEquals(72, ArrowSchema.sizeof());
        assertEquals(80, ArrowArray.sizeof());
    }

    @Test
    void structAccessorsAndTheReleaseCallbackWork() {
        // Exercises the generated code itself (no native library needed): field access at the C offsets,
        // and an upcall stub for the release callback invoked through the function-pointer downcall.
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment array = ArrowArray.allocate(arena);
            ArrowArray.n_buffers(array, 3);
            assertEquals(3, array.get(ValueLayout.JAVA_LONG, 24));

            MemorySegment[] released = new MemorySegment[1];
            MemorySegment schema = ArrowSchema.allocate(arena);
            ArrowSchema.release(schema, ArrowSchema.release.allocate(s -> released[0] = s, arena));
            ArrowSchema.release.invoke(ArrowSchema.release(schema), schema);
            assertEquals(schema.address(), released[0].address());
        }
    }

    @Test
    void noClassForAStructTheHeaderLacks() throws IOException {
        try (Stream<Path> files = Files.list(sourceDir())) {
            List<String> extra = files.map(file -> file.getFileName().toString())
                    .filter(file -> file.endsWith(".java"))
                    .map(file -> file.substring(0, file.length() - ".java".length()))
                    .filter(name ->
                            !name.startsWith("sluice_h") && !header.structs().containsKey(name))
                    .sorted()
                    .toList();
            assertEquals(List.of(), extra, "classes of structs that are not in sluice.h" + REGENERATE);
        }
    }

    @Test
    void committedSourcesAreWhatGeneratePyWrites() throws Exception {
        HeaderChecks.generatePyFindsNothingStale(moduleDir, "--target", "core");
    }

    private static Method staticMethod(String name, Class<?> returnType) {
        try {
            Method method = sluice_h.class.getMethod(name);
            assertTrue(Modifier.isStatic(method.getModifiers()), name + " is not static");
            assertEquals(returnType, method.getReturnType(), name + " return type");
            return method;
        } catch (NoSuchMethodException e) {
            throw new AssertionError("sluice_h has no " + name + "()" + REGENERATE, e);
        }
    }

    private static Path sourceDir() {
        return moduleDir.resolve(
                "src/main/java/" + sluice_h.class.getPackageName().replace('.', '/'));
    }

    private static boolean madeByJextract() throws IOException {
        return HeaderChecks.madeByJextract(sourceDir().resolve("sluice_h.java"));
    }
}
