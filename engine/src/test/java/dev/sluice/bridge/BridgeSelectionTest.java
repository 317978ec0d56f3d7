package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The bridge in use is the one asked for: the JNI run of the bridge and SQL suites (engine
 * pom, execution {@code jni-bridge}, {@code -Dsluice.bridge=jni}) cannot silently run on FFM.
 */
class BridgeSelectionTest {

    @Test
    void theBridgeInUseIsTheOneAskedFor() {
        String asked = System.getProperty(NativeCore.BRIDGE_PROPERTY, "ffm");
        CoreBridge bridge = NativeCore.bridge();
        assertEquals(asked, bridge.name());
        Class<? extends CoreBridge> expected = asked.equals("jni") ? JniCoreBridge.class : FfmCoreBridge.class;
        assertEquals(expected, bridge.getClass());
    }

    @Test
    void anUnknownBridgeIsRefusedWithTheNamesThatExist() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NativeCore.select("jna"));
        assertTrue(e.getMessage().contains("'jna'") && e.getMessage().contains("ffm, jni"), e.getMessage());
    }
}
