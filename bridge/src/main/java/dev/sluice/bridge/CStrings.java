package dev.sluice.bridge;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * C strings that Java code hands to the core from an upcall (error messages): allocated with
 * libc's {@code malloc}, so the core frees them with {@link #FREE}, the {@code free_string} an
 * upcall's registration passes.
 */
public final class CStrings {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MALLOC = LINKER.downcallHandle(
            LINKER.defaultLookup().find("malloc").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    /** libc's {@code free}: what frees a string from {@link #malloced}. */
    public static final MemorySegment FREE = LINKER.defaultLookup().find("free").orElseThrow();

    private CStrings() {}

    /** {@code text} as a NUL-terminated UTF-8 string from malloc; NULL when that fails (never throws). */
    public static MemorySegment malloced(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        try {
            MemorySegment memory =
                    ((MemorySegment) MALLOC.invokeExact((long) bytes.length + 1)).reinterpret(bytes.length + 1);
            if (memory.address() == 0) {
                return MemorySegment.NULL;
            }
            memory.copyFrom(MemorySegment.ofArray(bytes));
            memory.set(ValueLayout.JAVA_BYTE, bytes.length, (byte) 0);
            return memory;
        } catch (Throwable e) {
            return MemorySegment.NULL;
        }
    }

    /** Writes a malloced copy of {@code text} into the {@code char*} that {@code out} points to. */
    public static void writeMessage(MemorySegment out, String text) {
        out.reinterpret(ValueLayout.ADDRESS.byteSize()).set(ValueLayout.ADDRESS, 0, malloced(text));
    }
}
