package dev.sluice.ffm;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.ValueLayout;
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

/**
 * The checks that {@link BindingsMatchHeaderTest} (sluice.h) and {@link PluginBindingsMatchHeaderTest}
 * (sluice_plugin.h) make of a header's bindings. Layouts are compared by kind, carrier and size, because
 * {@code C_POINTER} carries a target layout that a plain {@code ValueLayout.ADDRESS} would not {@code equals}.
 */
final class HeaderChecks {

    static final String REGENERATE = "; regenerate with ffm-bindings/generate.sh";

    private HeaderChecks() {}

    /** Surefire sets sluice.repo.root (the parent pom); elsewhere the working directory is this module. */
    static Path locateRepoRoot(String headerPath) {
        List<Path> candidates = new ArrayList<>();
        String property = System.getProperty("sluice.repo.root");
        if (property != null && !property.isBlank()) {
            candidates.add(Path.of(property));
        }
        candidates.add(Path.of(".."));
        for (Path root : candidates) {
            if (Files.isRegularFile(root.resolve(headerPath))) {
                return root.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException(headerPath + " not found under " + candidates + "; set -Dsluice.repo.root");
    }

    /** {@code #define}s whose value differs between the header and headerClass's NAME() methods, either way. */
    static List<String> constantMismatches(Map<String, Integer> defines, Class<?> headerClass) throws Exception {
        // Constants are the public static int NAME() methods with upper-case names; C_INT & co. are fields.
        Map<String, Integer> bound = new TreeMap<>();
        for (Method m : headerClass.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())
                    && m.getParameterCount() == 0
                    && m.getReturnType() == int.class
                    && m.getName().matches("[A-Z][A-Z0-9_]*")) {
                bound.put(m.getName(), (Integer) m.invoke(null));
            }
        }
        Set<String> names = new TreeSet<>(defines.keySet());
        names.addAll(bound.keySet());
        List<String> mismatches = new ArrayList<>();
        for (String name : names) {
            if (!Objects.equals(defines.get(name), bound.get(name))) {
                mismatches.add(name + ": header " + defines.get(name) + ", binding " + bound.get(name));
            }
        }
        return mismatches;
    }

    /** The names NAME of headerClass's NAME$descriptor() methods. */
    static List<String> boundFunctions(Class<?> headerClass) {
        return Arrays.stream(headerClass.getMethods())
                .filter(m -> Modifier.isStatic(m.getModifiers()) && m.getName().endsWith("$descriptor"))
                .map(m -> m.getName().substring(0, m.getName().length() - "$descriptor".length()))
                .sorted()
                .toList();
    }

    /** Field names, offsets, layouts, accessors and total size of binding; and each function-pointer field. */
    static void checkStruct(Class<?> binding, SluiceHeader.Struct struct) throws Exception {
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
            if (field.signature() != null) {
                checkFunctionPointer(binding, field);
            }
        }
        assertEquals(
                struct.byteSize(),
                (long) binding.getMethod("sizeof").invoke(null),
                struct.name() + ".sizeof()" + REGENERATE);
    }

    /**
     * jextract's nested class for a function-pointer field: its descriptor, its functional interface, the
     * upcall-stub factory {@code allocate(Function, Arena)} and the downcall {@code invoke(funcPtr, ...)}.
     */
    private static void checkFunctionPointer(Class<?> binding, SluiceHeader.Field field) throws Exception {
        String where = binding.getSimpleName() + "." + field.name();
        SluiceHeader.Function signature = field.signature();
        Class<?> nested;
        try {
            nested = Class.forName(binding.getName() + "$" + field.name());
        } catch (ClassNotFoundException e) {
            throw new AssertionError("no nested class " + where + " for the function pointer" + REGENERATE, e);
        }
        assertTrue(Modifier.isStatic(nested.getModifiers()) && Modifier.isPublic(nested.getModifiers()), where);

        FunctionDescriptor descriptor;
        try {
            descriptor = (FunctionDescriptor) nested.getMethod("descriptor").invoke(null);
        } catch (InvocationTargetException | LinkageError e) { // e.g. Function.apply does not fit $DESC
            throw new AssertionError(where + " does not initialize" + REGENERATE, e);
        }
        assertEquals(describe(signature), describe(descriptor), where + ".descriptor()" + REGENERATE);

        Class<?>[] carriers =
                signature.params().stream().map(SluiceHeader.CType::carrier).toArray(Class<?>[]::new);
        Class<?> function = Class.forName(nested.getName() + "$Function");
        assertTrue(function.isInterface(), where + ".Function is an interface");
        assertEquals(
                signature.ret().carrier(),
                function.getMethod("apply", carriers).getReturnType(),
                where + ".Function.apply" + REGENERATE);

        Method allocate = nested.getMethod("allocate", function, Arena.class);
        assertEquals(MemorySegment.class, allocate.getReturnType(), where + ".allocate");

        Class<?>[] invokeParams = new Class<?>[carriers.length + 1];
        invokeParams[0] = MemorySegment.class;
        System.arraycopy(carriers, 0, invokeParams, 1, carriers.length);
        Method invoke;
        try {
            invoke = nested.getMethod("invoke", invokeParams);
        } catch (NoSuchMethodException e) {
            String params =
                    Arrays.stream(invokeParams).map(Class::getSimpleName).collect(Collectors.joining(", "));
            throw new AssertionError(where + " has no invoke(" + params + ")" + REGENERATE, e);
        }
        assertTrue(Modifier.isStatic(invoke.getModifiers()), where + ".invoke is static");
        assertEquals(signature.ret().carrier(), invoke.getReturnType(), where + ".invoke" + REGENERATE);
    }

    /** Runs {@code generate.py --check}: skipped without python3, or when jextract made the sources. */
    static void generatePyFindsNothingStale(Path moduleDir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("python3", "generate.py", "--check"));
        command.addAll(List.of(args));
        Process process;
        try {
            process = new ProcessBuilder(command)
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
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
    }

    /** Whether the real jextract wrote this file (generate.sh puts "(jextract)" in its first line). */
    static boolean madeByJextract(Path javaFile) throws IOException {
        return Files.readAllLines(javaFile).getFirst().contains("(jextract)");
    }

    static String describe(FunctionDescriptor descriptor) {
        return descriptor.returnLayout().map(HeaderChecks::describe).orElse("void")
                + descriptor.argumentLayouts().stream()
                        .map(HeaderChecks::describe)
                        .collect(Collectors.joining(", ", "(", ")"));
    }

    /** What a C prototype's descriptor must describe as, e.g. "int4(address8, long8)". */
    static String describe(SluiceHeader.Function function) {
        return describe(function.ret())
                + function.params().stream().map(HeaderChecks::describe).collect(Collectors.joining(", ", "(", ")"));
    }

    /** "address8", "int4", "long8", ...: what the ABI sees, ignoring names and target layouts. */
    static String describe(MemoryLayout layout) {
        return switch (layout) {
            case AddressLayout address -> "address" + address.byteSize();
            case ValueLayout value -> value.carrier().getSimpleName() + value.byteSize();
            default -> layout.toString();
        };
    }

    static String describe(SluiceHeader.CType type) {
        if (type.isVoid()) {
            return "void";
        }
        return (type.pointers() > 0 ? "address" : type.carrier().getSimpleName()) + type.byteSize();
    }
}
