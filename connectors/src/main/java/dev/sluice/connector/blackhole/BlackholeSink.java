package dev.sluice.connector.blackhole;

import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.Settings;
import org.apache.arrow.vector.types.pojo.Schema;

/** The {@code blackhole} sink: counts rows and discards them (for benchmarks and dry runs). */
public final class BlackholeSink implements Sink {

    /** The {@code blackhole} sink's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = new ConfigDef();

        public Type() {
            super(NodeKind.SINK, "blackhole", "Discards every row; the run's summary shows how many arrived.", CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public BlackholeSink create(Settings settings) {
            return new BlackholeSink();
        }

        /** Nothing is written. */
        @Override
        public boolean supportsLanes() {
            return true;
        }
    }

    private long rows;

    @Override
    public void open(StageContext context, Schema schema) {}

    @Override
    public void write(Batch batch) {
        rows += batch.rowCount();
    }

    @Override
    public void onBarrier(Barrier barrier) {}

    /** Rows received so far. */
    public long rows() {
        return rows;
    }

    @Override
    public void close() {}
}
