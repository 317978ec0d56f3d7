package dev.sluice.peers.flink;

import java.time.Duration;
import java.util.Locale;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Runs one Nexmark query with Flink SQL in a local MiniCluster (this JVM): reads the bid topic
 * from its start to the end offsets it has at start, writes the result rows as JSON to the output
 * topic, and prints one JSON line on stdout when the job has finished.
 *
 * <p>Checkpointing is off: the job is bounded and the result topic is compared, not recovered.
 * (Sluice runs at-least-once with a checkpoint every 10 s; a checkpoint of these stateless jobs
 * is only the sources' offsets, so leaving it out favours Flink by very little.)
 */
public final class FlinkNexmarkPeer {

    private FlinkNexmarkPeer() {}

    public static void main(String[] argv) {
        PeerArgs args;
        try {
            args = PeerArgs.parse(argv);
            if (args.query().equals(PROBE)) {
                runProbe(args);
                return;
            }
            if (!NexmarkQueries.known(args.query())) {
                throw new PeerArgs.UsageException("unknown query " + args.query() + "; known: " + NexmarkQueries.names());
            }
            if (NexmarkQueries.NEED_SIDE_INPUT.contains(args.query()) && args.sideInput() == null) {
                throw new PeerArgs.UsageException(args.query() + " needs --side-input FILE.csv");
            }
        } catch (PeerArgs.UsageException e) {
            System.err.println("flink peer: " + e.getMessage());
            System.err.println(PeerArgs.USAGE);
            System.exit(2);
            return;
        }
        try {
            Timing timing = run(args);
            System.out.printf(Locale.ROOT,
                    "{\"engine\":\"flink\",\"query\":\"%s\",\"parallelism\":%d,\"seconds\":%.3f,\"job_seconds\":%.3f}%n",
                    args.query(), args.parallelism(), timing.seconds(), timing.jobSeconds());
            System.out.flush();
            // Client and connector threads may outlive the job; the run is over.
            System.exit(0);
        } catch (Exception e) {
            System.err.println("flink peer: " + args.query() + " failed:");
            e.printStackTrace();
            System.exit(1);
        }
    }

    /**
     * The query name of the latency benchmark's pipeline (benchmarks/latency_bench.py): {@code
     * SELECT id, sent_us} over the probe's records, unbounded.
     */
    static final String PROBE = "probe";

    /**
     * Runs the probe pipeline until the process is stopped; prints {@code {"running": true}} once
     * the job is submitted, so the benchmark knows when to start producing.
     */
    private static void runProbe(PeerArgs args) {
        try {
            // Checkpoints as Sluice's default: every 10 s, at-least-once (the Kafka sink flushes on each).
            Configuration conf = configuration(args.parallelism());
            conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(10));
            conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.AT_LEAST_ONCE);
            TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.newInstance()
                    .inStreamingMode()
                    .withConfiguration(conf)
                    .build());
            tables.createTemporaryTable("events", Tables.probeSource(args));
            Table result = tables.sqlQuery("SELECT id, sent_us FROM events");
            TableResult job = result.insertInto(Tables.resultSink(args, result.getResolvedSchema())).execute();
            System.out.println("{\"engine\":\"flink\",\"running\":true}");
            System.out.flush();
            job.getJobClient().orElseThrow().getJobExecutionResult().get();
        } catch (Exception e) {
            System.err.println("flink peer: the probe pipeline failed:");
            e.printStackTrace();
            System.exit(1);
        }
    }

    /**
     * {@code seconds}: wall time from submitting the INSERT job (which starts the MiniCluster) to
     * its end; {@code jobSeconds}: Flink's own net runtime of the job, from its creation in the
     * MiniCluster to FINISHED.
     */
    record Timing(double seconds, double jobSeconds) {}

    /** Plans and runs the query, and waits for the job to finish. */
    private static Timing run(PeerArgs args) throws Exception {
        TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.newInstance()
                .inStreamingMode()
                .withConfiguration(configuration(args.parallelism()))
                .build());
        tables.createTemporaryTable("bid", Tables.bidSource(args));
        if (args.sideInput() != null) {
            tables.createTemporaryTable("side_input", Tables.sideInput(args.sideInput()));
        }
        tables.createTemporarySystemFunction("count_char", CountChar.class);

        Table result = tables.sqlQuery(NexmarkQueries.sql(args.query()));
        long start = System.nanoTime();
        TableResult job = result.insertInto(Tables.resultSink(args, result.getResolvedSchema())).execute();
        JobExecutionResult finished = job.getJobClient().orElseThrow().getJobExecutionResult().get();
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Timing(seconds, finished.getNetRuntime() / 1e3);
    }

    private static Configuration configuration(int parallelism) {
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, parallelism);
        // Records are not copied between chained operators (Flink's advice for throughput).
        conf.set(PipelineOptions.OBJECT_REUSE, true);
        return conf;
    }
}
