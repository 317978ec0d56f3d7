package dev.sluice.connector.blackhole;

import dev.sluice.config.ConfigDef;
import dev.sluice.config.NodeKind;
import dev.sluice.plugin.Barrier;
import dev.sluice.plugin.Batch;
import dev.sluice.plugin.Sink;
import dev.sluice.plugin.StageContext;
import dev.sluice.runtime.StageType;
import org.apache.arrow.vector.types.pojo.Schema;

/** The {@code blackhole} sink: counts rows and discards them (for benchmarks and dry runs). */
public final class BlackholeSink implements Sink {

    public static final StageType TYPE = StageType.of(NodeKind.SINK, "blackhole",
            "Discards every row; the run's summary shows how many arrived.", new ConfigDef(), config -> new BlackholeSink());

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
