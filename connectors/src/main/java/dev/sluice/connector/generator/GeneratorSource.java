package dev.sluice.connector.generator;

import dev.sluice.bridge.NativeBatch;
import dev.sluice.bridge.NativeGenerator;
import dev.sluice.plugin.AbstractStageType;
import dev.sluice.plugin.Emitter;
import dev.sluice.plugin.NodeKind;
import dev.sluice.plugin.Source;
import dev.sluice.plugin.StageContext;
import dev.sluice.plugin.config.ConfigDef;
import dev.sluice.plugin.config.ConfigType;
import dev.sluice.plugin.config.Settings;
import dev.sluice.plugin.config.StandardKeys;
import dev.sluice.plugin.config.Validator;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The {@code generator} source: Nexmark events (person, auction, bid) made in the core as
 * Arrow columns. Every generator with the same seed walks the same event sequence, so a
 * pipeline that reads {@code bid} and {@code auction} sees consistent ids.
 */
public final class GeneratorSource implements Source {

    /** The {@code entity} setting. */
    public static final String ENTITY = "entity";
    /** The {@code count} setting. */
    public static final String COUNT = "count";
    /** The {@code seed} setting. */
    public static final String SEED = "seed";
    /** The {@code rate} setting. */
    public static final String RATE = "rate";

    /** The {@code generator} source's stage type, registered in META-INF/services/dev.sluice.plugin.StageType. */
    public static final class Type extends AbstractStageType {

        private static final ConfigDef CONFIG = StandardKeys.batching(new ConfigDef()
                .defineEnum(
                        ENTITY,
                        List.of("bid", "auction", "person"),
                        null,
                        true,
                        "Which Nexmark table this source emits; the schema is Nexmark's (camelCase columns such as dateTime).")
                .define(
                        COUNT,
                        ConfigType.LONG,
                        null,
                        false,
                        "Events in the whole Nexmark sequence (persons, auctions and bids in the proportions 1:3:46); "
                                + "a bid source emits about 92 % of them. Absent: unbounded.",
                        Validator.nonNegative())
                .define(SEED, ConfigType.LONG, 42L, false, "Seed of the event sequence; same seed, same events.")
                .define(
                        RATE,
                        ConfigType.LONG,
                        null,
                        false,
                        "Events per second (of the whole sequence) to emit at most. Absent: as fast as possible.",
                        Validator.positive()));

        public Type() {
            super(
                    NodeKind.SOURCE,
                    "generator",
                    "The Nexmark benchmark's event generator, deterministic from a seed. Event times start at "
                            + "2023-11-14T22:13:20Z and advance 100 µs per event.",
                    CONFIG);
        }

        @Override
        public int spiVersion() {
            return SPI_VERSION;
        }

        @Override
        public GeneratorSource create(Settings settings) {
            return new GeneratorSource(settings);
        }

        /** As a file source: a pipeline of generators alone starts over; beside Kafka it goes on. */
        @Override
        public boolean positionsResumeARun() {
            return false;
        }
    }

    /** The position key: the rows emitted, of which sequence ({@code entity} and {@code seed}). */
    static final String POSITION = "emitted";

    private static final java.util.regex.Pattern EMITTED =
            java.util.regex.Pattern.compile("\\{\"rows\": ?(\\d+), ?\"sequence\": ?\"([^\"]*)\"}");

    private final String entity;
    private final Long count;
    private final long seed;
    private final Long rate;
    private final int batchSize;
    private final long flushNanos;
    private NativeGenerator generator;
    private long startNanos;
    private long lastEmitNanos;
    /** Rows a resumed run generates again and drops: what the checkpoint had emitted. */
    private long toSkip;
    /** Rows emitted so far (those skipped by a resumed run included). */
    private long emitted;
    /** The position at each barrier, until its epoch (or a later one) is finalized. */
    private final java.util.TreeMap<Long, Map<String, String>> atBarrier = new java.util.TreeMap<>();

    GeneratorSource(Settings config) {
        this.entity = config.getString(ENTITY);
        this.count = config.has(COUNT) ? config.getLong(COUNT) : null;
        this.seed = config.getLong(SEED);
        this.rate = config.has(RATE) ? config.getLong(RATE) : null;
        this.batchSize = config.getInt(StandardKeys.BATCH_SIZE);
        Duration flush = config.getDuration(StandardKeys.BATCH_FLUSH_INTERVAL);
        this.flushNanos = flush.toNanos();
    }

    @Override
    public Schema open(StageContext context) {
        Map<String, Object> options = new HashMap<>();
        options.put("entity", entity);
        options.put("seed", seed);
        if (count != null) {
            options.put("count", count);
        }
        generator = NativeGenerator.create(context.allocator(), options);
        startNanos = lastEmitNanos = System.nanoTime();
        String restored = context.restoredPositions().get(POSITION);
        if (restored != null) {
            java.util.regex.Matcher m = EMITTED.matcher(restored);
            // Another entity or seed is another sequence: it starts at its beginning.
            if (m.matches() && m.group(2).equals(sequence())) {
                toSkip = Long.parseLong(m.group(1));
            }
        }
        return generator.schema();
    }

    /** A resumed run generates what the checkpoint had emitted again, and drops it. */
    @Override
    public void start() {
        while (toSkip > 0) {
            NativeBatch skipped = generator.next(Math.min(toSkip, 65_536));
            if (skipped == null) {
                break;
            }
            toSkip -= skipped.rowCount();
            emitted += skipped.rowCount();
            skipped.close();
        }
        toSkip = 0;
        // Paced as if the events skipped had been emitted at the pace asked for, up to now.
        startNanos =
                lastEmitNanos = System.nanoTime() - (rate == null ? 0 : (long) (generator.position() * 1e9 / rate));
    }

    private String sequence() {
        return entity + "/" + seed;
    }

    @Override
    public Poll poll(Emitter out) {
        long rows = batchSize;
        if (rate != null) {
            // Paced by event position: emit once a full batch is due or the flush interval passed.
            long now = System.nanoTime();
            long due = (long) ((now - startNanos) / 1e9 * rate) - generator.position();
            if (due <= 0 || (due < batchSize && now - lastEmitNanos < flushNanos)) {
                return Poll.IDLE;
            }
            rows = Math.min(batchSize, due);
            lastEmitNanos = now;
        }
        NativeBatch batch = generator.next(rows);
        if (batch == null) {
            return Poll.END;
        }
        emitted += batch.rowCount();
        out.emit(batch);
        return Poll.EMITTED;
    }

    /** Remembers how many rows were emitted, for a resumed run to skip. */
    @Override
    public void onBarrier(dev.sluice.plugin.Barrier barrier) {
        atBarrier.put(
                barrier.epoch(), Map.of(POSITION, "{\"rows\": " + emitted + ", \"sequence\": \"" + sequence() + "\"}"));
    }

    @Override
    public Map<String, String> positions(long epoch) {
        return atBarrier.getOrDefault(epoch, Map.of());
    }

    @Override
    public void onCheckpointComplete(long epoch) {
        atBarrier.headMap(epoch, true).clear();
    }

    @Override
    public void close() {
        if (generator != null) {
            generator.close();
        }
    }
}
