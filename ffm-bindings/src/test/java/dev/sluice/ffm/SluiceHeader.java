package dev.sluice.ffm;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a Sluice C header (sluice.h, sluice_plugin.h) declares, read by a small parser of its restricted C.
 * It is written independently of generate.py (regular expressions here, a tokenizer there) so that a bug in
 * one does not hide in both. Anything outside the subset throws, so a header change the parser does not
 * understand fails the test instead of being skipped.
 */
record SluiceHeader(
        Map<String, Integer> constants,
        Map<String, Function> functions,
        Map<String, Struct> structs,
        Set<String> opaques) {

    /** A C type as the ABI sees it; sizes and alignments are those of LP64 (Linux, macOS). */
    record CType(String base, int pointers) {
        private static final Map<String, Integer> SCALAR_SIZES =
                Map.of("char", 1, "uint8_t", 1, "int32_t", 4, "int64_t", 8, "size_t", 8, "uintptr_t", 8);

        boolean isVoid() {
            return pointers == 0 && base.equals("void");
        }

        long byteSize() {
            return pointers > 0 ? 8 : SCALAR_SIZES.get(base);
        }

        /** The Java type jextract uses for this C type. */
        Class<?> carrier() {
            if (isVoid()) {
                return void.class;
            }
            if (pointers > 0) {
                return MemorySegment.class;
            }
            return switch ((int) byteSize()) {
                case 1 -> byte.class;
                case 4 -> int.class;
                default -> long.class;
            };
        }
    }

    record Function(String name, CType ret, List<CType> params) {}

    /**
     * A struct field; a function-pointer field has type {@code void *} and its {@code signature} (named after
     * the field), other fields a null one.
     */
    record Field(String name, CType type, long offset, Function signature) {}

    record Struct(String name, List<Field> fields, long byteSize) {}

    private static final Pattern DEFINE = Pattern.compile("#define\\s+(\\w+)(?:\\s+(\\S+))?\\s*");
    /** struct X { fields }; or, as cbindgen writes a repr(C) struct, typedef struct X { fields } X; */
    private static final Pattern STRUCT =
            Pattern.compile("(typedef\\s+)?struct\\s+(\\w+)\\s*\\{([^{}]*)}\\s*(\\w*)\\s*;");

    private static final Pattern OPAQUE = Pattern.compile("typedef\\s+struct\\s+(\\w+)\\s+(\\w+)");
    private static final Pattern FUNCTION = Pattern.compile("(.+?)\\b(\\w+)\\s*\\((.*)\\)");
    private static final Pattern FUNCTION_POINTER =
            Pattern.compile("([^()]+?)\\(\\s*\\*\\s*(\\w+)\\s*\\)\\s*\\(([^()]*)\\)");

    static SluiceHeader parse(String source) {
        String text = source.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("//[^\n]*", "");
        Map<String, Integer> constants = new LinkedHashMap<>();
        StringBuilder code = new StringBuilder();
        for (String line : text.split("\n")) {
            String trimmed = line.strip();
            if (!trimmed.startsWith("#")) {
                code.append(line).append('\n');
                continue;
            }
            Matcher define = DEFINE.matcher(trimmed);
            if (define.matches()) {
                if (define.group(2) != null) { // without a value it is an include guard
                    constants.put(define.group(1), Integer.decode(define.group(2)));
                }
            } else if (!trimmed.matches(
                    "#(include\\s+<std(int|def)\\.h>|ifndef\\s+\\w+|if\\s+defined\\(\\w+\\)|endif)")) {
                // `#if defined(X)` (the test-only exports) is read as taken: they are bound too.
                throw new IllegalArgumentException("unsupported preprocessor line: " + trimmed);
            }
        }

        Map<String, List<String>> rawStructs = new LinkedHashMap<>(); // name -> field declarations
        Matcher struct = STRUCT.matcher(code);
        while (struct.find()) {
            String name = struct.group(2);
            String alias = struct.group(4);
            if (struct.group(1) != null ? !alias.equals(name) : !alias.isEmpty()) {
                throw new IllegalArgumentException("unsupported declaration: struct " + name + " { ... } " + alias);
            }
            List<String> fields = new ArrayList<>();
            for (String field : struct.group(3).split(";")) {
                if (!field.isBlank()) {
                    fields.add(field.strip().replaceAll("\\s+", " "));
                }
            }
            if (rawStructs.put(name, fields) != null) {
                throw new IllegalArgumentException("struct " + name + " is declared twice");
            }
        }
        String rest = STRUCT.matcher(code).replaceAll(" ");

        Set<String> opaques = new LinkedHashSet<>();
        Map<String, Function> functions = new LinkedHashMap<>();
        List<String> statements = new ArrayList<>(Arrays.asList(rest.split(";", -1)));
        String last = statements.removeLast();
        if (!last.isBlank()) {
            throw new IllegalArgumentException("declaration without ';': " + last.strip());
        }
        for (String statement : statements) {
            String decl = statement.strip().replaceAll("\\s+", " ");
            Matcher opaque = OPAQUE.matcher(decl);
            Matcher function = FUNCTION.matcher(decl);
            if (opaque.matches() && opaque.group(1).equals(opaque.group(2))) {
                opaques.add(opaque.group(1));
            } else if (function.matches()) {
                String name = function.group(2);
                functions.put(name, new Function(name, type(function.group(1)), params(function.group(3))));
            } else {
                throw new IllegalArgumentException("unsupported declaration: " + decl);
            }
        }

        Map<String, Struct> structs = new LinkedHashMap<>();
        rawStructs.forEach((name, raw) -> structs.put(name, layOut(name, raw)));
        SluiceHeader header = new SluiceHeader(constants, functions, structs, opaques);
        header.checkTypesAreKnown();
        return header;
    }

    /** The parameter types of "const char *a, int64_t b" (or "void", or ""). */
    private static List<CType> params(String list) {
        List<CType> params = new ArrayList<>();
        for (String param : list.split(",")) {
            if (!param.isBlank() && !param.strip().equals("void")) {
                if (param.contains("(")) {
                    throw new IllegalArgumentException("unsupported parameter: " + param.strip());
                }
                params.add(type(splitDeclaration(param)[0]));
            }
        }
        return List.copyOf(params);
    }

    /** Splits "const char *format" into {"const char *", "format"}. */
    private static String[] splitDeclaration(String declaration) {
        String decl = declaration.strip().replaceAll("\\s+", " ");
        Matcher named = Pattern.compile("(.*?[\\s*])(\\w+)").matcher(decl);
        if (named.matches()
                && !named.group(1).isBlank()
                && !named.group(1).strip().matches("(const\\s+)?(struct)?|const")) {
            return new String[] {named.group(1), named.group(2)};
        }
        return new String[] {decl, ""}; // an unnamed parameter
    }

    private static CType type(String text) {
        int pointers = (int) text.chars().filter(c -> c == '*').count();
        String base =
                text.replace("*", " ").replaceAll("\\b(const|struct)\\b", " ").strip();
        if (!base.matches("\\w+")) {
            throw new IllegalArgumentException("unsupported type: " + text.strip());
        }
        return new CType(base, pointers);
    }

    /** C's rule: each field at the next multiple of its alignment (= size here); the struct padded to its largest. */
    private static Struct layOut(String name, List<String> declarations) {
        List<Field> fields = new ArrayList<>();
        long offset = 0;
        long alignment = 1;
        for (String declaration : declarations) {
            String fieldName;
            CType type;
            Function signature = null;
            Matcher fp = FUNCTION_POINTER.matcher(declaration);
            if (fp.matches()) { // a function pointer is an address; its signature is checked on its own
                fieldName = fp.group(2);
                type = new CType("void", 1);
                signature = new Function(fieldName, type(fp.group(1)), params(fp.group(3)));
            } else if (declaration.contains("(") || declaration.contains("[") || declaration.contains(":")) {
                throw new IllegalArgumentException("unsupported field in struct " + name + ": " + declaration);
            } else {
                String[] split = splitDeclaration(declaration);
                if (split[1].isEmpty()) {
                    throw new IllegalArgumentException("field without a name in struct " + name + ": " + declaration);
                }
                fieldName = split[1];
                type = type(split[0]);
            }
            long size = type.byteSize();
            offset = (offset + size - 1) / size * size;
            fields.add(new Field(fieldName, type, offset, signature));
            offset += size;
            alignment = Math.max(alignment, size);
        }
        return new Struct(name, List.copyOf(fields), (offset + alignment - 1) / alignment * alignment);
    }

    private void checkTypesAreKnown() {
        List<CType> types = new ArrayList<>();
        functions.values().forEach(f -> {
            types.add(f.ret());
            types.addAll(f.params());
        });
        structs.values()
                .forEach(s -> s.fields().forEach(f -> {
                    types.add(f.type());
                    if (f.signature() != null) {
                        types.add(f.signature().ret());
                        types.addAll(f.signature().params());
                    }
                }));
        for (CType type : types) {
            boolean known = type.pointers() > 0
                    ? type.base().equals("void")
                            || structs.containsKey(type.base())
                            || opaques.contains(type.base())
                            || CType.SCALAR_SIZES.containsKey(type.base())
                    : type.isVoid() || CType.SCALAR_SIZES.containsKey(type.base());
            if (!known) {
                throw new IllegalArgumentException("unsupported type: " + type);
            }
        }
    }
}
