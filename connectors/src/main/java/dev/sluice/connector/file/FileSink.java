package dev.sluice.connector.file;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeException;
import dev.sluice.bridge.NativeFileWriter;
import dev.sluice.config.ConfigDef;
import dev.sluice.config.ConfigType;
import dev.sluice.config.NodeKind;
import dev.sluice.config.ParsedConfig;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.InvalidSettingException;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.runtime.StageType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code file} sink: JSON lines, CSV or Parquet, encoded and written in the core. The file
 * is replaced when the run starts (never by validation). JSON lines and CSV are synced to disk at every barrier; a Parquet file
 * is complete when the run ends (its footer is written last).
 */
public final class FileSink implements Sink {

    public static final StageType TYPE = StageType.of(NodeKind.SINK, "file", "Writes every row to one file.",
            new ConfigDef()
                    .define("path", ConfigType.PATH, null, true, "The file to write, relative to the pipeline file; replaced when a run starts (validate leaves it alone).")
                    .defineEnum("format", FileFormats.ALL, null, false, "json (lines), csv or parquet. Default: from the file extension.")
                    .define("header", ConfigType.BOOLEAN, true, false, "CSV: write a header line."),
            FileSink::new);

    private final Path path;
    private final String format;
    private final boolean header;
    private NativeFileWriter writer;
    private StageContext context;

    FileSink(ParsedConfig config) {
        this.path = config.getPath("path");
        this.format = FileFormats.resolve(config.has("format") ? config.getString("format") : null, path);
        this.header = config.getBoolean("header");
    }

    /** Checks the path without touching it: validation calls only this. */
    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
        if (Files.isDirectory(path)) {
            throw new InvalidSettingException("path", path + " is a directory; name the file to write");
        }
    }

    /** Creates (or replaces) the file: a run only. */
    @Override
    public void start() {
        try {
            writer = NativeFileWriter.open(Map.of("path", path.toString(), "format", format, "header", header));
        } catch (NativeException e) {
            throw new InvalidSettingException("path", e.getMessage(), e);
        }
    }

    @Override
    public void write(Batch batch) {
        if (batch instanceof NativeBatch nativeBatch) {
            writer.write(nativeBatch);
        } else {
            try (VectorSchemaRoot root = batch.toVectors(context.allocator());
                    NativeBatch copy = NativeBatch.fromVectors(context.allocator(), root)) {
                writer.write(copy);
            }
        }
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
