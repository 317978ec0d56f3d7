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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code file} sink: JSON lines, CSV or Parquet, encoded and written in the core. The file
 * is replaced when a run starts over (never by validation) and continued when a run resumes
 * from a checkpoint: its length at every barrier is saved with the epoch's positions, and a
 * resumed run that writes the same path cuts the file back to it and appends, so the rows of
 * the epochs it replays are written once. JSON lines and CSV are synced to disk at every barrier; a Parquet file is
 * complete when the run ends (its footer is written last) and cannot be continued. With
 * {@code parts: true} the path is a directory of {@link PartFiles}, one completed at each
 * barrier and made visible when its checkpoint is finalized, which a resumed run continues in
 * every format.
 */
public final class FileSink implements Sink {

    private static final Logger LOG = LoggerFactory.getLogger(FileSink.class);

    /** The {@code path} setting. */
    public static final String PATH = "path";
    /** The {@code format} setting. */
    public static final String FORMAT = "format";
    /** The {@code header} setting. */
    public static final String HEADER = "header";
    /** The {@code parts} setting. */
    public static final String PARTS = "parts";

    /** The position key of the file's length ({@link FileCheckpoint}). */
    private static final String FILE = "file";
    /** The position key of the last completed part ({@link PartFiles#checkpoint}). */
    private static final String LAST_PART = "parts";

    /** The {@code file} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = new ConfigDef()
                .define(
                        PATH,
                        ConfigType.PATH,
                        null,
                        true,
                        "The file to write (with parts: true, the directory), relative to the pipeline file; replaced "
                                + "when a run starts over, continued from its last checkpoint when a run resumes (validate "
                                + "leaves it alone).")
                .defineEnum(
                        FORMAT,
                        FileFormats.ALL,
                        null,
                        false,
                        "json (lines), csv or parquet. Default: from the file extension.")
                .define(HEADER, ConfigType.BOOLEAN, true, false, "CSV: write a header line (in every part).")
                .define(
                        PARTS,
                        ConfigType.BOOLEAN,
                        false,
                        false,
                        "Write `path` as a directory of part files, one per checkpoint (part-00000001.parquet, ...), "
                                + "each hidden until its checkpoint is finalized, then whole and never taken back. A resumed "
                                + "run goes on with the next number (deleting hidden parts its checkpoint did not count); a "
                                + "run that starts over deletes every part. How to write Parquet from a source that resumes "
                                + "(Kafka).");

        public Type() {
            super(NodeKind.SINK, "file", "Writes every row to one file, or to part files in a directory.", CONFIG);
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
    /** With {@code parts: true}: the directory's parts; else null. */
    private final PartFiles parts;

    private NativeFileWriter writer;
    private StageContext context;
    private Schema schema;
    /** Whether a batch went into the current file (a Parquet file is created by its first). */
    private boolean wroteBatch;
    /** The file's length at the last barrier, or -1 before the first. */
    private long durableLength = -1;

    FileSink(Settings config) {
        this.path = config.getPath(PATH);
        this.format = FileFormats.resolve(config.has(FORMAT) ? config.getString(FORMAT) : null, path);
        this.header = config.getBoolean(HEADER);
        this.parts = config.getBoolean(PARTS) ? new PartFiles(path, format) : null;
    }

    /** Checks the path without touching it: validation calls only this. */
    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        this.schema = schema;
        if (parts != null && Files.exists(path) && !Files.isDirectory(path)) {
            throw new InvalidSettingException(PATH, path + " is a file; with parts: true, name the directory to write");
        }
        if (parts == null && Files.isDirectory(path)) {
            throw new InvalidSettingException(
                    PATH,
                    path + " is a directory; name the file to write, or set parts: true to write part files there");
        }
    }

    /** Creates (or replaces) the file, or continues it when the run resumes: a run only. */
    @Override
    public void start() throws IOException {
        if (parts != null) {
            List<String> deleted = parts.begin(context.restoredPositions().get(LAST_PART));
            if (!deleted.isEmpty()) {
                LOG.info(
                        "node '{}': deleted {} part file(s) no checkpoint counts on in {}: {}",
                        context.nodeName(),
                        deleted.size(),
                        path,
                        String.join(", ", deleted));
            }
            return; // each part is opened by its first batch
        }
        Map<String, Object> options = options(path);
        String restored = context.restoredPositions().get(FILE);
        long continueAt = restored == null ? -1 : FileCheckpoint.parse(restored).lengthOf(path);
        if (continueAt >= 0) {
            options.put("continue_at", continueAt);
            durableLength = continueAt;
        }
        writer = open(options);
    }

    private Map<String, Object> options(Path file) {
        return new HashMap<>(Map.of("path", file.toString(), "format", format, "header", header));
    }

    private static NativeFileWriter open(Map<String, Object> options) {
        try {
            return NativeFileWriter.open(options);
        } catch (NativeException e) {
            throw new InvalidSettingException(PATH, e.getMessage(), e);
        }
    }

    @Override
    public void write(Batch batch) {
        if (writer == null) {
            writer = open(options(parts.inProgress()));
        }
        NativeBatch.with(batch, context.allocator(), writer::write);
        wroteBatch = true;
    }

    /**
     * A run without rows still ends with a Parquet file: one of the input's columns and no rows
     * (the core removed the file of an earlier run when it opened, so its rows cannot pass for
     * this run's).
     */
    private void writeEmptyParquet() {
        try (VectorSchemaRoot none = VectorSchemaRoot.create(schema, context.allocator());
                NativeBatch empty = NativeBatch.fromVectors(context.allocator(), none)) {
            writer.write(empty);
        }
    }

    @Override
    public void onBarrier(Barrier barrier) throws IOException {
        if (parts != null) {
            if (writer != null) {
                writer.finish();
                writer.close();
                writer = null;
                parts.complete();
            }
            return;
        }
        if (barrier.last()) {
            if (!wroteBatch && format.equals("parquet")) {
                writeEmptyParquet();
            }
            writer.finish();
        } else {
            writer.flush();
        }
        // A Parquet file is recorded too: a resumed run must refuse it rather than replace it.
        durableLength = Files.exists(path) ? Files.size(path) : 0;
    }

    /** Parts completed for a finalized checkpoint become visible. */
    @Override
    public void onCheckpointComplete(long epoch) throws IOException {
        if (parts != null) {
            parts.commit();
        }
    }

    @Override
    public Map<String, String> positions(long epoch) {
        if (parts != null) {
            return Map.of(LAST_PART, parts.checkpoint());
        }
        return durableLength < 0 ? Map.of() : Map.of(FILE, new FileCheckpoint(path, durableLength).toJson());
    }

    @Override
    public void close() {
        if (writer != null) {
            writer.close();
        }
    }
}
