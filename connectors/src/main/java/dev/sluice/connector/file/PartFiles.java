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
 * A directory of part files, one per checkpoint: {@code part-00000001.parquet}, … Each part is
 * written as a hidden {@code .part-00000001.parquet.inprogress} and renamed when its checkpoint's
 * barrier completes it, so every visible part is whole (a Parquet footer, a last line). The
 * number of the last part a finalized checkpoint counted on is the sink's position: a resumed
 * run deletes the parts after it (written for an epoch that was never finalized, whose rows are
 * replayed) and goes on with the next number; a run that starts over deletes them all. Only
 * files named as parts are ever deleted.
 */
final class PartFiles {

    private static final JsonFactory JSON = new JsonFactory();
    private static final String LAST = "last";
    private static final String DIRECTORY = "directory";

    private final Path directory;
    private final String extension;
    private final Pattern partName;
    private final Pattern inProgressName;
    /** The number of the last completed part. */
    private long last;

    PartFiles(Path directory, String format) {
        this.directory = directory.toAbsolutePath().normalize();
        this.extension = format.equals("json") ? "jsonl" : format.toLowerCase(Locale.ROOT);
        this.partName = Pattern.compile("part-(\\d{8,})\\." + Pattern.quote(extension));
        this.inProgressName = Pattern.compile("\\.part-\\d{8,}\\." + Pattern.quote(extension) + "\\.inprogress");
    }

    /**
     * Prepares the directory for a run: continues after the part a restored checkpoint names
     * (null: start over), deleting every part after it and every unfinished one.
     *
     * @return the names of the parts deleted
     */
    List<String> begin(String restoredCheckpoint) throws IOException {
        last = restoredCheckpoint == null ? 0 : lastOf(restoredCheckpoint);
        Files.createDirectories(directory);
        List<String> deleted = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                Matcher part = partName.matcher(name);
                boolean stale = part.matches()
                        ? Long.parseLong(part.group(1)) > last
                        : inProgressName.matcher(name).matches();
                if (stale && Files.isRegularFile(file)) {
                    Files.delete(file);
                    deleted.add(name);
                }
            }
        }
        return deleted;
    }

    /** Where the next part is written until it is complete. */
    Path inProgress() {
        return directory.resolve("." + name(last + 1) + ".inprogress");
    }

    /** Makes the part being written visible under its own name, durably: it is complete. */
    void complete() throws IOException {
        Files.move(inProgress(), directory.resolve(name(last + 1)), StandardCopyOption.ATOMIC_MOVE);
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true); // the rename itself must survive a crash
        }
        last++;
    }

    /** The position to save with a checkpoint: the last complete part and the directory. */
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
