package dev.sluice.peers.flink;

import java.nio.file.Path;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableDescriptor;
import org.apache.flink.table.catalog.ResolvedSchema;

/**
 * The tables of a run: the Kafka bid topic in, the Kafka result topic out, and q13's CSV side
 * input (a lookup table). The Kafka client settings are Sluice's own (engine/.../connector/kafka/KafkaSource.java
 * and KafkaSink.java), passed through the connector's {@code properties.*}, so both engines put
 * the same load on the broker.
 */
final class Tables {

    private Tables() {}

    /** The bid records Sluice's Nexmark generator writes: one JSON object per record. */
    static TableDescriptor bidSource(PeerArgs args) {
        Schema schema = Schema.newBuilder()
                .column("auction", DataTypes.BIGINT())
                .column("bidder", DataTypes.BIGINT())
                .column("price", DataTypes.BIGINT())
                .column("channel", DataTypes.STRING())
                .column("url", DataTypes.STRING())
                // Sluice writes local ISO-8601 ("2023-11-14T22:13:20.543", no fraction at .000).
                .column("dateTime", DataTypes.TIMESTAMP(3))
                .column("extra", DataTypes.STRING())
                .build();
        return consumer(kafka(args.bootstrap(), args.input(), schema))
                // From the start of the topic to the end offsets it has when the job starts: a
                // bounded job, like Sluice's `bounded: true` source.
                .option("scan.startup.mode", "earliest-offset")
                .option("scan.bounded.mode", "latest-offset")
                // Offsets are never committed (no checkpoints), so the group only names the run.
                .option("properties.group.id", "flink-peer-" + args.query() + "-" + System.currentTimeMillis())
                .option("json.timestamp-format.standard", "ISO-8601")
                .option("json.fail-on-missing-field", "true")
                .build();
    }

    /** The result topic, with the columns of the query's result. */
    static TableDescriptor resultSink(PeerArgs args, ResolvedSchema result) {
        return kafka(args.bootstrap(), args.output(), Schema.newBuilder().fromResolvedSchema(result).build())
                // Sluice's producer: acks=all, idempotence, lz4, 512 KiB batches, 10 ms linger,
                // 1 MiB socket send buffer.
                .option("properties.acks", "all")
                .option("properties.enable.idempotence", "true")
                .option("properties.compression.type", "lz4")
                .option("properties.batch.size", Integer.toString(512 * 1024))
                .option("properties.linger.ms", "10")
                .option("properties.send.buffer.bytes", Integer.toString(1024 * 1024))
                // Without checkpoints the sink flushes when the input ends; at-least-once is
                // what Sluice gives too.
                .option("sink.delivery-guarantee", "at-least-once")
                // Timestamps as ISO-8601 and decimals (0.908 * price) as plain JSON numbers.
                .option("json.timestamp-format.standard", "ISO-8601")
                .option("json.encode.decimal-as-plain-number", "true")
                .build();
    }

    /**
     * The latency probe's records ({@code {"id": N, "sent_us": T}}, benchmarks/LatencyProbe.java):
     * from the start of the topic, unbounded (the job runs until the process is stopped), with
     * the same consumer settings as the bid source.
     */
    static TableDescriptor probeSource(PeerArgs args) {
        Schema schema = Schema.newBuilder()
                .column("id", DataTypes.BIGINT())
                .column("sent_us", DataTypes.BIGINT())
                .build();
        return consumer(kafka(args.bootstrap(), args.input(), schema))
                .option("scan.startup.mode", "earliest-offset")
                .option("properties.group.id", "flink-peer-probe-" + System.currentTimeMillis())
                .build();
    }

    /** Sluice's consumer settings (KafkaClientDefaults), through the connector's properties. */
    private static TableDescriptor.Builder consumer(TableDescriptor.Builder kafka) {
        return kafka
                // Sluice's consumer (KafkaClientDefaults): max.poll.records = its batch size
                // (8192), 64 KiB minimum fetch, 10 ms maximum wait, 8 MiB per partition, 1 MiB
                // socket receive buffer.
                .option("properties.max.poll.records", "8192")
                .option("properties.fetch.min.bytes", "65536")
                .option("properties.fetch.max.wait.ms", "10")
                .option("properties.max.partition.fetch.bytes", Integer.toString(8 * 1024 * 1024))
                .option("properties.receive.buffer.bytes", Integer.toString(1024 * 1024));
    }

    /**
     * q13's side input: {@code key BIGINT, value STRING}, CSV without a header, as a lookup
     * table (see {@link SideInputTableFactory} for why not the filesystem connector).
     */
    static TableDescriptor sideInput(Path csv) {
        return TableDescriptor.forConnector(SideInputTableFactory.IDENTIFIER)
                .schema(Schema.newBuilder()
                        .column("key", DataTypes.BIGINT())
                        .column("value", DataTypes.STRING())
                        .build())
                .option(SideInputTableFactory.PATH, csv.toString())
                .build();
    }

    private static TableDescriptor.Builder kafka(String bootstrap, String topic, Schema schema) {
        return TableDescriptor.forConnector("kafka")
                .schema(schema)
                .option("topic", topic)
                .option("properties.bootstrap.servers", bootstrap)
                .format("json");
    }
}
