package dev.sluice.connector.file;

import dev.sluice.bridge.FileFormats;
import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativeFileWriter;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code file} sink: JSON lines, CSV or Parquet, encoded and written in the core. The file
 * is replaced when the run starts (never by validation). JSON lines and CSV are synced to disk at every barrier; a Parquet file
 * is complete when the run ends (its footer is written last).
 */
public final class FileSink implements Sink {

    /** The {@code path} setting. */
    public static final String PATH = "path";
    /** The {@code format} setting. */
    public static final String FORMAT = "format";
    /** The {@code header} setting. */
    public static final String HEADER = "header";

    /** The {@code file} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = new ConfigDef()
                .define(
                        PATH,
                        ConfigType.PATH,
                        null,
                        true,
                        "The file to write, relative to the pipeline file; replaced when a run starts (validate leaves it alone).")
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

    /** Creates (or replaces) the file: a run only. */
    @Override
    public void start() {
        try {
            writer = NativeFileWriter.open(Map.of("path", path.toString(), "format", format, "header", header));
        } catch (NativeException e) {
            throw new InvalidSettingException(PATH, e.getMessage(), e);
        }
    }

    @Override
    public void write(Batch batch) {
        NativeBatch.with(batch, context.allocator(), writer::write);
    }

    @Override
    public void onBarrier(Barrier barrier) {
        if (barrier.last()) {
            writer.finish();
        } else {
            writer.flush();
        }
    }

    @Override
    public void close() {
        if (writer != null) {
            writer.close();
        }
    }
}
