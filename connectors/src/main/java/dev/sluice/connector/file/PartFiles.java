package dev.sluice.connector.file;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A directory of part files, one per checkpoint: {@code part-00000001.parquet}, … A part is
 * committed in two steps, as Flink's file sink does. It is written as a hidden
 * {@code .part-00000001.parquet.inprogress}; the barrier completes it (footer, sync) and renames it
 * {@code .part-00000001.parquet.pending}; once the checkpoint is finalized (the state DB holds
 * its number as the sink's position) it is renamed to its visible name. So a visible part is
 * whole and is never taken back. A resumed run makes visible the pending parts its checkpoint
 * counts on (finalized, but the run ended before their rename), deletes the parts after them
 * (an epoch never finalized, whose rows it replays) and unfinished ones, and goes on with the
 * next number; a run that starts over deletes every part. Only files named as parts are ever
 * deleted.
 */
final class PartFiles {

    private static final JsonFactory JSON = new JsonFactory();
    private static final String LAST = "last";
    private static final String DIRECTORY = "directory";

    private final Path directory;
    private final String extension;
    /** Visible, pending or in progress: the part's number is group 1, its state group 2. */
    private final Pattern partName;
    /** The number of the last part completed at a barrier (pending or visible). */
    private long last;
    /** The number of the last visible part. */
    private long visible;

    PartFiles(Path directory, String format) {
        this.directory = directory.toAbsolutePath().normalize();
        this.extension = format.equals("json") ? "jsonl" : format.toLowerCase(Locale.ROOT);
        this.partName =
                Pattern.compile("\\.?part-(\\d{8,})\\." + Pattern.quote(extension) + "(\\.pending|\\.inprogress)?");
    }

    /**
     * Prepares the directory for a run that continues after the part a restored checkpoint names
     * (null: starts over): makes visible the pending parts up to it, deletes every other part
     * after it and every unfinished one.
     *
     * @return the names of the files deleted
     */
    List<String> begin(String restoredCheckpoint) throws IOException {
        last = restoredCheckpoint == null ? 0 : lastOf(restoredCheckpoint);
        Files.createDirectories(directory);
        List<String> deleted = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                Matcher part = partName.matcher(name);
                if (!part.matches() || !Files.isRegularFile(file) || name.startsWith(".") == (part.group(2) == null)) {
                    continue; // not a part's name (a hidden one must be pending or in progress, and only a hidden one)
                }
                long number = Long.parseLong(part.group(1));
                if (".pending".equals(part.group(2)) && number <= last) {
                    Files.move(file, directory.resolve(name(number)), StandardCopyOption.ATOMIC_MOVE);
                } else if (number > last || ".inprogress".equals(part.group(2))) {
                    Files.delete(file);
                    deleted.add(name);
                }
            }
        }
        syncDirectory();
        visible = last;
        return deleted;
    }

    /** Where the next part is written until it is complete. */
    Path inProgress() {
        return hidden(last + 1, ".inprogress");
    }

    /** The part being written is complete (its writer finished and synced it): pending, durably. */
    void complete() throws IOException {
        Files.move(inProgress(), hidden(last + 1, ".pending"), StandardCopyOption.ATOMIC_MOVE);
        syncDirectory(); // before the state DB counts on it
        last++;
    }

    /** The checkpoint that counted the pending parts is finalized: they become visible. */
    void commit() throws IOException {
        if (visible == last) {
            return;
        }
        for (long number = visible + 1; number <= last; number++) {
            Files.move(hidden(number, ".pending"), directory.resolve(name(number)), StandardCopyOption.ATOMIC_MOVE);
        }
        syncDirectory();
        visible = last;
    }

    private void syncDirectory() throws IOException {
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true); // renames must survive a crash
        }
    }

    private Path hidden(long number, String state) {
        return directory.resolve("." + name(number) + state);
    }

    /** The position to save with a checkpoint: the last completed part and the directory. */
    String checkpoint() {
        StringWriter text = new StringWriter();
        try (JsonGenerator json = JSON.createGenerator(text)) {
            json.writeStartObject();
            json.writeNumberField(LAST, last);
            json.writeStringField(DIRECTORY, directory.toString());
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return text.toString();
    }

    private String name(long number) {
        return String.format(Locale.ROOT, "part-%08d.%s", number, extension);
    }

    /** The last part of a checkpoint of this directory; 0 (start over) when it is of another. */
    private long lastOf(String checkpoint) throws IOException {
        long number = -1;
        String dir = null;
        try (JsonParser json = JSON.createParser(checkpoint)) {
            if (json.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a part-files checkpoint: " + checkpoint);
            }
            while (json.nextToken() == JsonToken.FIELD_NAME) {
                String field = json.currentName();
                json.nextToken();
                switch (field) {
                    case LAST -> number = json.getLongValue();
                    case DIRECTORY -> dir = json.getText();
                    default -> json.skipChildren();
                }
            }
        }
        if (number < 0 || dir == null) {
            throw new IOException("not a part-files checkpoint: " + checkpoint);
        }
        return Path.of(dir).equals(directory) ? number : 0;
    }
}
