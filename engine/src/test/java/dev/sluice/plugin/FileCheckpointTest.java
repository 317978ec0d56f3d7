package dev.sluice.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class FileCheckpointTest {

    @Test
    void roundTripsAnyPathAndContinuesOnlyThatFile() {
        for (String name : new String[] {
            "out.jsonl", "a \"quoted\" name.csv", "back\\slash\\u0041.jsonl", "tab\tand\nnewline", "ünï €"
        }) {
            Path path = Path.of("/tmp/sluice-checkpoint", name);
            FileCheckpoint checkpoint = new FileCheckpoint(path, 1042);
            FileCheckpoint back = FileCheckpoint.parse(checkpoint.toJson());
            assertEquals(checkpoint, back, checkpoint.toJson());
            assertEquals(1042, back.lengthOf(path));
            assertEquals(1042, back.lengthOf(Path.of("/tmp/sluice-checkpoint/../sluice-checkpoint", name)));
            assertEquals(-1, back.lengthOf(Path.of("/tmp/sluice-checkpoint", name + ".moved")));
        }
        assertEquals("{\"bytes\": 7, \"path\": \"/x/a\\\"b\"}", new FileCheckpoint(Path.of("/x/a\"b"), 7).toJson());
        assertThrows(IllegalArgumentException.class, () -> FileCheckpoint.parse("{\"bytes\": 7}"));
    }
}
