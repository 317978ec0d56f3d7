package dev.sluice.connector.file;

import dev.sluice.bridge.FileFormats;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativeFileWriter;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.FileCheckpoint;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code file} sink: JSON lines, CSV or Parquet, encoded and written in the core. The file
 * is replaced when a run starts over (never by validation) and continued when a run resumes
 * from a checkpoint: its length at every barrier is saved with the epoch's positions, and a
 * resumed run that writes the same path cuts the file back to it and appends, so the rows of
 * the epochs it replays are written once. JSON lines and CSV are synced to disk at every barrier; a Parquet file is
 * complete when the run ends (its footer is written last) and cannot be continued.
 */
public final class FileSink implements Sink {

    /** The {@code path} setting. */
    public static final String PATH = "path";
    /** The {@code format} setting. */
    public static final String FORMAT = "format";
    /** The {@code header} setting. */
    public static final String HEADER = "header";

    /** The position key of the file's length ({@link FileCheckpoint}). */
    private static final String FILE = "file";

    /** The {@code file} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = new ConfigDef()
                .define(
                        PATH,
                        ConfigType.PATH,
                        null,
                        true,
                        "The file to write, relative to the pipeline file; replaced when a run starts over, continued "
                                + "from its last checkpoint when a run resumes (validate leaves it alone).")
                .defineEnum(
                        FORMAT,
                        FileFormats.ALL,
                        null,
                        false,
                        "json (lines), csv or parquet. Default: from the file extension.")
                .define(HEADER, ConfigType.BOOLEAN, true, false, "CSV: write a header line.");

        public Type() {
            super(NodeKind.SINK, "file", "Writes every row to one file.", CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public FileSink create(Settings settings) {
            return new FileSink(settings);
        }

        @Override
        public Optional<Path> outputFile(Settings settings) {
            return Optional.of(settings.getPath(PATH));
        }
    }

    private final Path path;
    private final String format;
    private final boolean header;
    private NativeFileWriter writer;
    private StageContext context;
    /** The file's length at the last barrier, or -1 before the first. */
    private long durableLength = -1;

    FileSink(Settings config) {
        this.path = config.getPath(PATH);
        this.format = FileFormats.resolve(config.has(FORMAT) ? config.getString(FORMAT) : null, path);
        this.header = config.getBoolean(HEADER);
    }

    /** Checks the path without touching it: validation calls only this. */
    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        if (Files.isDirectory(path)) {
            throw new InvalidSettingException(PATH, path + " is a directory; name the file to write");
        }
    }

    /** Creates (or replaces) the file, or continues it when the run resumes: a run only. */
    @Override
    public void start() {
        Map<String, Object> options =
                new HashMap<>(Map.of("path", path.toString(), "format", format, "header", header));
        String restored = context.restoredPositions().get(FILE);
        long continueAt = restored == null ? -1 : FileCheckpoint.parse(restored).lengthOf(path);
        if (continueAt >= 0) {
            options.put("continue_at", continueAt);
            durableLength = continueAt;
        }
        try {
            writer = NativeFileWriter.open(options);
        } catch (NativeException e) {
            throw new InvalidSettingException(PATH, e.getMessage(), e);
        }
    }

    @Override
    public void write(Batch batch) {
        NativeBatch.with(batch, context.allocator(), writer::write);
    }

    @Override
    public void onBarrier(Barrier barrier) throws IOException {
        if (barrier.last()) {
            writer.finish();
        } else {
            writer.flush();
        }
        // A Parquet file is recorded too: a resumed run must refuse it rather than replace it.
        durableLength = Files.exists(path) ? Files.size(path) : 0;
    }

    @Override
    public Map<String, String> positions(long epoch) {
        return durableLength < 0 ? Map.of() : Map.of(FILE, new FileCheckpoint(path, durableLength).toJson());
    }

    @Override
    public void close() {
        if (writer != null) {
            writer.close();
        }
    }
}
