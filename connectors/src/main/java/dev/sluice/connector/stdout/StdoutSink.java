package dev.sluice.connector.stdout;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeEncoder;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code stdout} sink: rows encoded in the core (JSON lines or CSV) and written straight
 * from native memory to the process's standard output.
 */
public final class StdoutSink implements Sink {

    /** The {@code format} setting. */
    public static final String FORMAT = "format";

    /** The {@code stdout} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = new ConfigDef()
                .defineEnum(
                        FORMAT,
                        List.of("json", "csv"),
                        "json",
                        false,
                        "json (one object per line) or csv (no header).");

        public Type() {
            super(
                    NodeKind.SINK,
                    "stdout",
                    "Prints every row on standard output; progress goes to standard error.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public StdoutSink create(Settings settings) {
            return new StdoutSink(settings.getString(FORMAT));
        }

        /** Each lane writes whole batches; lines of different lanes interleave only between batches. */
        @Override
        public boolean supportsLanes() {
            return true;
        }
    }

    private final NativeEncoder encoder;
    private final FileChannel out = new FileOutputStream(FileDescriptor.out).getChannel();
    private StageContext context;

    StdoutSink(String format) {
        this.encoder = new NativeEncoder(format, false);
    }

    @Override
    public void open(StageContext context, Schema schema) {
        this.context = context;
    }

    @Override
    public void write(Batch batch) {
        NativeBatch.with(batch, context.allocator(), nativeBatch -> encoder.encode(nativeBatch, this::writeFully));
    }

    private void writeFully(MemorySegment bytes) {
        ByteBuffer buffer = bytes.asByteBuffer();
        try {
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing to standard output", e);
        }
    }

    @Override
    public void onBarrier(Barrier barrier) {
        // Every write already went to the file descriptor; nothing is buffered here.
    }

    @Override
    public void close() {
        // Standard output stays open for the rest of the process.
    }
}
