package dev.sluice.connector.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartFilesTest {

    @TempDir
    Path dir;

    @Test
    void aResumedRunDeletesOnlyThePartsAfterItsCheckpointAndUnfinishedOnes() throws Exception {
        Path parts = dir.resolve("out");
        PartFiles first = new PartFiles(parts, "parquet");
        assertEquals(List.of(), first.begin(null));
        for (int i = 0; i < 3; i++) {
            Files.writeString(first.inProgress(), "part " + i);
            first.complete();
        }
        String checkpoint = first.checkpoint(); // the state DB saw 3 parts
        Files.writeString(first.inProgress(), "part 3");
        first.complete(); // completed, but its checkpoint was never finalized
        Files.writeString(first.inProgress(), "half of part 4"); // killed while writing
        Files.writeString(parts.resolve("notes.txt"), "the user's");
        Files.writeString(parts.resolve("part-2.parquet"), "not a part's name");
        Files.writeString(parts.resolve("part-00000009.csv"), "another format's");

        PartFiles resumed = new PartFiles(parts, "parquet");
        assertEquals(List.of(".part-00000005.parquet.inprogress", "part-00000004.parquet"), resumed.begin(checkpoint));
        assertEquals(
                List.of(
                        "notes.txt",
                        "part-00000001.parquet",
                        "part-00000002.parquet",
                        "part-00000003.parquet",
                        "part-00000009.csv",
                        "part-2.parquet"),
                names(parts));
        assertEquals(
                parts.resolve(".part-00000004.parquet.inprogress"),
                resumed.inProgress(),
                "goes on with the next number");
        Files.writeString(resumed.inProgress(), "part 3 again");
        resumed.complete();
        assertEquals("part 3 again", Files.readString(parts.resolve("part-00000004.parquet")));
        assertTrue(resumed.checkpoint().startsWith("{\"last\":4,"), resumed.checkpoint());
    }

    @Test
    void aRunThatStartsOverOrWritesAnotherDirectoryDeletesEveryPart() throws Exception {
        Path parts = dir.resolve("out \"quoted\\dir");
        PartFiles first = new PartFiles(parts, "json");
        first.begin(null);
        Files.writeString(first.inProgress(), "{}\n");
        first.complete();
        assertTrue(Files.exists(parts.resolve("part-00000001.jsonl")));
        String checkpoint = first.checkpoint();

        PartFiles moved = new PartFiles(dir.resolve("elsewhere"), "json");
        assertEquals(List.of(), moved.begin(checkpoint), "a checkpoint of another directory: start over there");
        assertEquals(dir.resolve("elsewhere/.part-00000001.jsonl.inprogress"), moved.inProgress());

        PartFiles again = new PartFiles(parts, "json");
        assertEquals(List.of(), again.begin(checkpoint), "the same directory (its name escaped in the checkpoint)");
        assertEquals(List.of("part-00000001.jsonl"), new PartFiles(parts, "json").begin(null), "starting over");
        assertFalse(Files.exists(parts.resolve("part-00000001.jsonl")));
    }

    private static List<String> names(Path directory) throws Exception {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
