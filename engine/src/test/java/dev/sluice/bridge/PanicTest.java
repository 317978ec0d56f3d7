package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PanicTest {

    @Test
    void aPanicInTheCoreBecomesAnExceptionAndTheJvmCarriesOn() {
        CoreBridge core = NativeCore.bridge();
        NativePanicException e = assertThrows(NativePanicException.class, () -> core.debugPanic("injected for a test"));
        assertTrue(e.getMessage().contains("injected for a test"), e.getMessage());
        assertTrue(e.getMessage().contains("abi.rs"), "the message names where it panicked: " + e.getMessage());
        // The library is still usable, many times over.
        for (int i = 0; i < 100; i++) {
            assertThrows(NativePanicException.class, () -> core.debugPanic("again"));
        }
        assertEquals(dev.sluice.ffm.sluice_h.SLUICE_ABI_VERSION(), core.abiVersion());
    }

    @Test
    void errorsAreClassifiedByCause() {
        CoreBridge core = NativeCore.bridge();
        assertThrows(NativePlanException.class, () -> core.sqlTableReferences("SELEC * FORM x"));
        NativeArgumentException nullHandle = assertThrows(NativeArgumentException.class, () -> core.batchNumRows(0));
        assertTrue(nullHandle.getMessage().contains("NULL"), nullHandle.getMessage());
        assertThrows(
                NativeIoException.class,
                () -> core.fileReaderOpen("{\"path\":\"/no/such/file.jsonl\",\"format\":\"json\"}", 0));
        assertThrows(NativeConfigException.class, () -> core.generatorCreate("{\"entity\":\"bids\"}"));
    }
}
