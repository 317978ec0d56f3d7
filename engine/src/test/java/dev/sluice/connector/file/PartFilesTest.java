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
    void aPartIsVisibleOnlyOnceItsCheckpointIsFinalized() throws Exception {
        Path parts = dir.resolve("out");
        PartFiles files = new PartFiles(parts, "parquet");
        files.begin(null);
        Files.writeString(files.inProgress(), "part 1");
        assertEquals(List.of(".part-00000001.parquet.inprogress"), names(parts));
        files.complete(); // the barrier
        assertEquals(List.of(".part-00000001.parquet.pending"), names(parts));
        assertTrue(files.checkpoint().startsWith("{\"last\":1,"), "the checkpoint counts the pending part");
        files.commit(); // the checkpoint is finalized
        assertEquals(List.of("part-00000001.parquet"), names(parts));
        files.commit();
        assertEquals(List.of("part-00000001.parquet"), names(parts), "commit is idempotent");
    }

    @Test
    void aResumedRunKeepsWhatItsCheckpointCountsOnAndDeletesTheRest() throws Exception {
        Path parts = dir.resolve("out");
        PartFiles first = new PartFiles(parts, "parquet");
        assertEquals(List.of(), first.begin(null));
        for (int i = 1; i <= 2; i++) {
            Files.writeString(first.inProgress(), "part " + i);
            first.complete();
            first.commit();
        }
        Files.writeString(first.inProgress(), "part 3");
        first.complete();
        String checkpoint = first.checkpoint(); // finalized with 3 parts, killed before part 3's rename
        Files.writeString(first.inProgress(), "part 4");
        first.complete(); // completed, but its checkpoint was never finalized
        Files.writeString(first.inProgress(), "half of part 5"); // killed while writing
        Files.writeString(parts.resolve("notes.txt"), "the user's");
        Files.writeString(parts.resolve("part-2.parquet"), "not a part's name");
        Files.writeString(parts.resolve("part-00000009.csv"), "another format's");
        Files.writeString(parts.resolve("part-00000003.parquet.pending"), "pending, but not hidden: not a part's name");

        PartFiles resumed = new PartFiles(parts, "parquet");
        assertEquals(
                List.of(".part-00000004.parquet.pending", ".part-00000005.parquet.inprogress"),
                resumed.begin(checkpoint));
        assertEquals(
                List.of(
                        "notes.txt",
                        "part-00000001.parquet",
                        "part-00000002.parquet",
                        "part-00000003.parquet",
                        "part-00000003.parquet.pending",
                        "part-00000009.csv",
                        "part-2.parquet"),
                names(parts));
        assertEquals(
                "part 3", Files.readString(parts.resolve("part-00000003.parquet")), "the finalized part made visible");
        assertEquals(
                parts.resolve(".part-00000004.parquet.inprogress"),
                resumed.inProgress(),
                "goes on with the next number");
        Files.writeString(resumed.inProgress(), "part 4 again");
        resumed.complete();
        resumed.commit();
        assertEquals("part 4 again", Files.readString(parts.resolve("part-00000004.parquet")));
    }

    @Test
    void aRunThatStartsOverOrWritesAnotherDirectoryDeletesEveryPart() throws Exception {
        Path parts = dir.resolve("out \"quoted\\dir");
        PartFiles first = new PartFiles(parts, "json");
        first.begin(null);
        Files.writeString(first.inProgress(), "{}\n");
        first.complete();
        first.commit();
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
