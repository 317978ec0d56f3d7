package dev.sluice.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The status codes are declared once, by Rust's ErrorKind, and reach Java twice: through the
 * generated header and through {@link NativeException.Status}. This keeps the second copy honest.
 */
class StatusTableMatchesHeaderTest {

    private static final Pattern STATUS_DEFINE =
            Pattern.compile("^#define (SLUICE_OK|SLUICE_ERR_\\w+) (-?\\d+)\\s*$", Pattern.MULTILINE);

    @Test
    void everyStatusInTheHeaderIsInTheJavaTableWithTheSameNumberAndViceVersa() throws Exception {
        Path header = Path.of("..", "rust", "core", "include", "sluice.h");
        if (!Files.exists(header)) {
            header = Path.of("rust", "core", "include", "sluice.h");
        }
        String text = Files.readString(header);
        Map<String, Integer> inHeader = new TreeMap<>();
        Matcher m = STATUS_DEFINE.matcher(text);
        while (m.find()) {
            inHeader.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        assertTrue(
                inHeader.containsKey("SLUICE_OK") && inHeader.size() > 1,
                "no status constants found in " + header.toAbsolutePath() + ": " + inHeader);

        Map<String, Integer> inJava = new TreeMap<>();
        for (NativeException.Status s : NativeException.Status.values()) {
            inJava.put(s.headerName(), s.code);
        }
        assertEquals(inHeader, inJava, "NativeException.Status against " + header);

        // And each error status makes the exception class that reports that same status.
        for (NativeException.Status s : NativeException.Status.values()) {
            if (s != NativeException.Status.OK) {
                NativeException e = NativeException.of(s.code, "x");
                assertEquals(s.code, e.status(), s.name());
                assertTrue(e.getClass() != NativeException.class, s + " has its own exception class");
            }
        }
    }
}
