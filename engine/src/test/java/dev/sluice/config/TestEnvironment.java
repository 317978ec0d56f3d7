package dev.sluice.config;

import java.util.Map;

/** For tests outside this package: environment variables that {@code ${NAME}} references see. */
public final class TestEnvironment {

    private TestEnvironment() {}

    /** References see {@code variables} first, then the process environment, until {@link #reset}. */
    public static void set(Map<String, String> variables) {
        EnvReferences.lookUpIn(name -> variables.containsKey(name) ? variables.get(name) : System.getenv(name));
    }

    public static void reset() {
        EnvReferences.lookUpIn(System::getenv);
    }
}
