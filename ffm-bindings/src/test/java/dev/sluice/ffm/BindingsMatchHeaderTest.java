package dev.sluice.ffm;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
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
 * Layouts are compared by kind, carrier and size, because {@code C_POINTER} carries a target layout that a
 * plain {@code ValueLayout.ADDRESS} would not {@code equals}.
 */
class BindingsMatchHeaderTest {

    private static final String HEADER_PATH = "rust/core/include/sluice.h";
    private static final String REGENERATE = "; regenerate with ffm-bindings/generate.sh";

    private static Path moduleDir;
    private static SluiceHeader header;

    @BeforeAll
    static void readHeader() throws IOException {
        Path repoRoot = locateRepoRoot();
        moduleDir = repoRoot.resolve("ffm-bindings");
        header = SluiceHeader.parse(Files.readString(repoRoot.resolve(HEADER_PATH)));
        assertFalse(header.functions().isEmpty(), "no functions found in " + HEADER_PATH);
    }

    /** Surefire sets sluice.repo.root (the parent pom); elsewhere the working directory is this module. */
    private static Path locateRepoRoot() {
        List<Path> candidates = new ArrayList<>();
        String property = System.getProperty("sluice.repo.root");
        if (property != null && !property.isBlank()) {
            candidates.add(Path.of(property));
        }
        candidates.add(Path.of(".."));
        for (Path root : candidates) {
            if (Files.isRegularFile(root.resolve(HEADER_PATH))) {
                return root.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException(HEADER_PATH + " not found under " + candidates + "; set -Dsluice.repo.root");
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

        String expected = describe(function.ret())
                + function.params().stream()
                        .map(BindingsMatchHeaderTest::describe)
                        .collect(Collectors.joining(", ", "(", ")"));
        assertEquals(expected, describe(readDescriptor(descriptor)), name + "$descriptor()" + REGENERATE);
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
        List<String> extra = Arrays.stream(sluice_h.class.getMethods())
                .filter(m -> Modifier.isStatic(m.getModifiers()) && m.getName().endsWith("$descriptor"))
                .map(m -> m.getName().substring(0, m.getName().length() - "$descriptor".length()))
                .filter(name -> !header.functions().containsKey(name))
                .sorted()
                .toList();
        assertEquals(List.of(), extra, "bindings of functions that are not in sluice.h" + REGENERATE);
    }

    @Test
    void constantsMatchTheDefines() throws Exception {
        // Constants are the public static int NAME() methods with upper-case names; C_INT & co. are fields.
        Map<String, Integer> bound = new TreeMap<>();
        for (Method m : sluice_h.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())
                    && m.getParameterCount() == 0
                    && m.getReturnType() == int.class
                    && m.getName().matches("[A-Z][A-Z0-9_]*")) {
                bound.put(m.getName(), (Integer) m.invoke(null));
            }
        }
        List<String> mismatches = new ArrayList<>();
        for (String name : union(header.constants().keySet(), bound.keySet())) {
            Integer inHeader = header.constants().get(name);
            if (!Objects.equals(inHeader, bound.get(name))) {
                mismatches.add(name + ": sluice.h " + inHeader + ", binding " + bound.get(name));
            }
        }
        assertEquals(List.of(), mismatches, "#define constants" + REGENERATE);
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
        GroupLayout layout = (GroupLayout) binding.getMethod("layout").invoke(null);
        List<String> fieldNames = layout.memberLayouts().stream()
                .filter(member -> !(member instanceof PaddingLayout))
                .map(member -> member.name().orElse("<unnamed>"))
                .toList();
        assertEquals(
                struct.fields().stream().map(SluiceHeader.Field::name).toList(),
                fieldNames,
                "fields of " + struct.name() + REGENERATE);

        for (SluiceHeader.Field field : struct.fields()) {
            String where = struct.name() + "." + field.name();
            assertEquals(
                    field.offset(),
                    (long) binding.getMethod(field.name() + "$offset").invoke(null),
                    where + "$offset()" + REGENERATE);
            assertEquals(field.offset(), layout.byteOffset(groupElement(field.name())), where + " in layout()");
            MemoryLayout fieldLayout =
                    (MemoryLayout) binding.getMethod(field.name() + "$layout").invoke(null);
            assertEquals(describe(field.type()), describe(fieldLayout), where + "$layout()" + REGENERATE);

            Class<?> carrier = field.type().carrier();
            assertEquals(
                    carrier,
                    binding.getMethod(field.name(), MemorySegment.class).getReturnType(),
                    where + " getter");
            binding.getMethod(field.name(), MemorySegment.class, carrier); // the setter
        }
        assertEquals(
                struct.byteSize(),
                (long) binding.getMethod("sizeof").invoke(null),
                struct.name() + ".sizeof()" + REGENERATE);
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
        Process process;
        try {
            process = new ProcessBuilder("python3", "generate.py", "--check")
                    .directory(moduleDir.toFile())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            abort("python3 is not available, cannot run generate.py --check: " + e.getMessage());
            return;
        }
        String output = new String(process.getInputStream().readAllBytes(), UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "generate.py --check did not finish");
        assumeFalse(process.exitValue() == 3, output); // made by jextract: not generate.py's to compare
        assertEquals(0, process.exitValue(), "generate.py --check failed:\n" + output);
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

    private static String describe(FunctionDescriptor descriptor) {
        return descriptor.returnLayout().map(BindingsMatchHeaderTest::describe).orElse("void")
                + descriptor.argumentLayouts().stream()
                        .map(BindingsMatchHeaderTest::describe)
                        .collect(Collectors.joining(", ", "(", ")"));
    }

    /** "address8", "int4", "long8", ...: what the ABI sees, ignoring names and target layouts. */
    private static String describe(MemoryLayout layout) {
        return switch (layout) {
            case AddressLayout address -> "address" + address.byteSize();
            case ValueLayout value -> value.carrier().getSimpleName() + value.byteSize();
            default -> layout.toString();
        };
    }

    private static String describe(SluiceHeader.CType type) {
        if (type.isVoid()) {
            return "void";
        }
        return (type.pointers() > 0 ? "address" : type.carrier().getSimpleName()) + type.byteSize();
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }

    private static Path sourceDir() {
        return moduleDir.resolve(
                "src/main/java/" + sluice_h.class.getPackageName().replace('.', '/'));
    }

    private static boolean madeByJextract() throws IOException {
        return Files.readAllLines(sourceDir().resolve("sluice_h.java"))
                .getFirst()
                .contains("(jextract)");
    }
}
