#!/usr/bin/env python3
"""Nexmark side by side: Sluice (FFM and JNI bridges), Flink SQL, Kafka Streams and DataFusion alone
on the same machine, the same run and the same events.

Called by `benchmarks/run.sh nexmark [EVENTS [QUERIES]] [options]`, which starts the broker,
builds Sluice and sets up the Python environment (confluent-kafka, numpy, matplotlib) under
target/. Steps:
1. EVENTS Nexmark bids are generated once by Sluice's generator into a Kafka topic (JSON).
2. Kafka series, per query: each engine reads that topic, runs the query and writes its own
   output topic; each process is measured from outside (benchmarks/nexmark/measure.py). Then
   every output topic is compared with Sluice FFM's as a multiset of normalized rows
   (benchmarks/nexmark/parity.py).
3. In-memory series, per query: generator -> query -> discard, for Sluice FFM/JNI
   (generator -> sql -> blackhole) and DataFusion alone (the same plan in one Rust process).
4. benchmarks/results/nexmark-<UTC>.json (raw), .md (tables) and .png (chart); the tables are
   printed. An engine that cannot run is reported as "not run: <reason>", never left out.
With `--repeats N` both series run each query in N rounds, every engine once per round (see
Bench.rounds); the JSON keeps every run and adds medians and min/max ("summary"), the tables show
the median (min–max) and take each ratio against Sluice FFM per round.
The queries Sluice runs are benchmarks/nexmark/queries/qN.sql; the peers carry their own
(benchmarks/peers/*/).
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "nexmark"))
import measure  # noqa: E402
import report  # noqa: E402

QUERY_DIR = ROOT / "benchmarks" / "nexmark" / "queries"
ALL_QUERIES = ["q0", "q1", "q2", "q13", "q14", "q21", "q22"]
SIDE_INPUT_QUERIES = {"q13"}
SIDE_INPUT_ROWS = 10_000  # q13 joins on MOD(auction, 10000)
SEED = 42  # the generator source's default seed, and DataFusion alone's
BID_SCHEMA = {"auction": "bigint", "bidder": "bigint", "price": "bigint", "channel": "string", "url": "string",
              "dateTime": "timestamp(ms)", "extra": "string"}
SLUICE = {"Sluice FFM": "ffm", "Sluice JNI": "jni"}
FLINK, KSTREAMS, DF_ALONE = "Flink SQL", "Kafka Streams", "DataFusion alone"
PEERS = ROOT / "benchmarks" / "peers"


def round_order(engines, repeat):
    """The engines of round `repeat` (1, 2, ...), rotated one place per round: over N rounds of N
    engines each runs in every position equally often. In a fixed order Sluice JNI, always run right
    after Sluice FFM, came out 1-12 % ahead of it in several series, where 80 alternating pairs
    measured the two equal (benchmarks/README.md)."""
    engines = list(engines)
    shift = (repeat - 1) % len(engines) if engines else 0
    return engines[shift:] + engines[:shift]


def main():
    args = parse_args()
    try:
        import parity  # noqa: F401  (needs confluent-kafka and numpy: benchmarks/run.sh sets them up)
        from confluent_kafka.admin import AdminClient  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"nexmark.py: {e}; run it through `benchmarks/run.sh nexmark`, which sets up its Python environment")
    bench = Bench(args)
    bench.run()


def parse_args():
    p = argparse.ArgumentParser(description="Nexmark side by side (see the module docstring).")
    p.add_argument("events", nargs="?", type=lambda s: int(s.replace("_", "")), default=1_000_000,
                   help="bid events in the input (default 1 000 000)")
    p.add_argument("queries", nargs="?", default=",".join(ALL_QUERIES), help="comma-separated, default all")
    p.add_argument("--partitions", type=int, default=1, help="partitions of the input and output topics")
    p.add_argument("--parallelism", type=int, default=1,
                   help="Sluice lanes = Flink parallelism = Kafka Streams threads (default 1)")
    p.add_argument("--series", default="kafka,memory", help="kafka, memory or both (default)")
    p.add_argument("--engines", default=None, help="comma-separated subset, e.g. 'Sluice FFM,Flink SQL'")
    p.add_argument("--no-parity", action="store_true", help="skip comparing the output topics")
    p.add_argument("--keep-topics", action="store_true", help="keep the input and output topics")
    p.add_argument("--repeats", type=int, default=1,
                   help="runs per engine and query, in rounds that alternate the engines (default 1)")
    args = p.parse_args()
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    args.queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    unknown = [q for q in args.queries if q not in ALL_QUERIES]
    if unknown:
        p.error(f"unknown queries {unknown}; known: {', '.join(ALL_QUERIES)}")
    args.series = [s.strip() for s in args.series.split(",")]
    args.engines = None if args.engines is None else {e.strip() for e in args.engines.split(",")}
    return args


def query_sql(name: str) -> str:
    """The query's SQL without its comment lines."""
    lines = (QUERY_DIR / f"{name}.sql").read_text().splitlines()
    return "\n".join(l for l in lines if not l.lstrip().startswith("--")).strip()


class Bench:
    def __init__(self, args):
        self.args = args
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.work = ROOT / "target" / "nexmark" / self.stamp
        self.work.mkdir(parents=True, exist_ok=True)
        self.bootstrap = sh("bash", "ci/kafka.sh", "bootstrap").strip()
        self.generator_count = (args.events * 50 + 45) // 46  # 46 of every 50 Nexmark events are bids
        self.timeout = 300 + args.events / 1_000  # generous; a stuck engine is killed, not waited for
        self.side_input = self.work / "side_input.csv"
        self.side_input.write_text("".join(f"{k},value-{k}\n" for k in range(SIDE_INPUT_ROWS)))
        self.topics = []
        self.notes = []
        self.results = {"stamp": self.stamp, "environment": environment(), "kafka": [], "memory": [], "parity": []}
        self.unavailable = {}  # engine -> reason it cannot run at all
        self._admin = None

    def wanted(self, engine):
        return self.args.engines is None or engine in self.args.engines

    def rounds(self):
        """Round numbers 1..N. Each round runs every engine once, in the order `round_order` gives, so
        slow drift of the machine (heat, other load) hits every engine alike instead of the ones that
        happened to run last."""
        return range(1, self.args.repeats + 1)

    def tag(self, repeat):
        """Sets a round's topics, groups and files apart from the other rounds'; "" with a single
        round, so its names are those of a run without --repeats."""
        return f"-r{repeat}" if self.args.repeats > 1 else ""

    def new_row(self, series, q, engine, repeat, **fields):
        """A run's row of the JSON; `repeat` (its round) only with --repeats, so that a single run's
        JSON keeps its shape."""
        row = {"series": series, "query": q, "engine": engine, **fields}
        if self.args.repeats > 1:
            row["repeat"] = repeat
        return row

    # -- setup ---------------------------------------------------------------------------------

    def prepare_engines(self):
        """Builds the peers before anything is measured; an engine that cannot be built or run is
        reported with the reason instead of numbers."""
        for engine, script in ((FLINK, PEERS / "flink" / "run.sh"), (KSTREAMS, PEERS / "kstreams" / "run.sh"),
                               (DF_ALONE, PEERS / "datafusion-alone" / "run.sh")):
            if not self.wanted(engine):
                continue
            if not os.access(script, os.X_OK):
                self.unavailable[engine] = f"{script.relative_to(ROOT)} is missing"
                continue
            log("building", engine)
            build = subprocess.run(["bash", str(script), "--build"], cwd=ROOT, capture_output=True, text=True)
            if build.returncode != 0:
                self.unavailable[engine] = f"{script.relative_to(ROOT)} --build failed: " + tail(build.stderr)
        if self.wanted("Sluice JNI"):
            probe = self.work / "jni-probe.yaml"
            write_pipeline(probe, "jni-probe", {"bid": {"type": "generator", "entity": "bid", "count": 10}},
                           "SELECT auction FROM bid", {}, {"type": "blackhole"})
            check = subprocess.run(["./sluice", "validate", str(probe), "--bridge=jni"], cwd=ROOT, capture_output=True, text=True)
            if check.returncode != 0:
                self.unavailable["Sluice JNI"] = "the JNI bridge does not load: " + tail(check.stderr)
        for engine, reason in self.unavailable.items():
            log(f"{engine}: not available ({reason})")

    def admin(self):
        """One client for the whole run: a client's futures fail once it is garbage-collected."""
        if self._admin is None:
            from confluent_kafka.admin import AdminClient
            self._admin = AdminClient({"bootstrap.servers": self.bootstrap})
        return self._admin

    def create_topic(self, name):
        from confluent_kafka.admin import NewTopic
        futures = self.admin().create_topics([NewTopic(name, num_partitions=self.args.partitions, replication_factor=1)])
        futures[name].result(timeout=60)
        self.topics.append(name)
        return name

    def delete_topics(self, names):
        names = [n for n in names if n in self.topics]
        if not names or self.args.keep_topics:
            return
        for name, future in self.admin().delete_topics(names).items():
            try:
                future.result(timeout=60)
                self.topics.remove(name)
            except Exception as e:  # a leftover topic is not worth failing the run for
                log(f"could not delete topic {name}: {e}")

    def topic_rows(self, topic):
        from confluent_kafka import Consumer, TopicPartition
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"nexmark-count-{self.stamp}"})
        try:
            partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
            total = 0
            for p in partitions:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                total += high - low
            return total
        finally:
            consumer.close()

    # -- the run -------------------------------------------------------------------------------

    def run(self):
        self.prepare_engines()
        if "kafka" in self.args.series:
            self.kafka_series()
        if "memory" in self.args.series:
            self.memory_series()
        self.results["settings"] = self.settings()
        self.results["notes"] = self.notes
        if self.args.repeats > 1:
            self.results["summary"] = {series: report.summarize(self.results[series]) for series in ("kafka", "memory")}
        self.write_results()
        self.delete_topics(list(self.topics))
        bad = report.differing(self.results["parity"])
        if bad:
            # A benchmark whose engines computed different results compared different work.
            raise SystemExit("nexmark.py: outputs differ from Sluice FFM's for " +
                             ", ".join(f"{q} ({engine})" for q, engine in bad) + "; see the parity table")

    def settings(self):
        return {
            "bids": self.results.get("bids", self.args.events), "generator_count": self.generator_count, "seed": SEED,
            "partitions": self.args.partitions, "parallelism": self.args.parallelism,
            "input_topic": self.results.get("input_topic"), "topic_mb": self.results.get("topic_mb", 0.0),
            "queries": self.args.queries, "repeats": self.args.repeats, "bootstrap": self.bootstrap,
            "work_dir": str(self.work.relative_to(ROOT)),
            # Sluice's defaults (KafkaClientDefaults), which the peers repeat by hand.
            "linger_ms": 10, "fetch_max_wait_ms": 10,
        }

    def kafka_series(self):
        topic = self.create_topic(f"nexmark-{self.stamp.lower()}-bids")
        self.results["input_topic"] = topic
        load = self.work / "load.yaml"
        write_pipeline(load, "nexmark-load",
                       {"bid": {"type": "generator", "entity": "bid", "count": self.generator_count, "seed": SEED}},
                       "SELECT * FROM bid", {}, {"type": "kafka", "topic": topic, "bootstrap_servers": self.bootstrap})
        log(f"loading {self.args.events:,} bids into {topic}")
        loaded = sluice_run(load, self.work / "load", "ffm", self.timeout)
        if loaded.error:
            raise SystemExit(f"loading the input topic failed: {loaded.error}")
        bids = self.topic_rows(topic)
        self.results["bids"] = bids
        self.results["topic_mb"] = topic_bytes_on_disk(topic) / 1e6
        log(f"loaded {bids:,} bids in {loaded.wall_seconds:.1f} s")
        broker_pid = int((ROOT / "target" / "kafka" / "broker.pid").read_text().strip())

        for q in self.args.queries:
            for repeat in self.rounds():
                self.kafka_round(q, repeat, topic, bids, broker_pid)

    def kafka_round(self, q, repeat, topic, bids, broker_pid):
        """Every engine once on the query, each writing an output topic of its own."""
        outputs, written = {}, []
        for engine in round_order([e for e in (*SLUICE, FLINK, KSTREAMS) if self.wanted(e)], repeat):
            row = self.new_row("kafka", q, engine, repeat, events=bids)
            if engine in self.unavailable:
                if repeat == 1:  # said once per query: the reason is the same every round
                    row["error"] = self.unavailable[engine]
                    self.results["kafka"].append(row)
                continue
            # A fresh topic per run, so rows_out and parity see this run's output alone.
            output = self.create_topic(f"nexmark-{self.stamp.lower()}-{q}-{slug(engine)}{self.tag(repeat)}")
            written.append(output)
            before = measure.process_cpu_seconds(broker_pid)
            run = self.kafka_run(engine, q, topic, output, repeat)
            row["broker_cpu_seconds"] = measure.process_cpu_seconds(broker_pid) - before
            row["rows_out"] = self.topic_rows(output)
            if engine in SLUICE and not run.error and run.result.get("records_in") != bids:
                run.error = f"read {run.result.get('records_in')} of {bids:,} events"
            self.record(row, run, "kafka")
            if not run.error:
                outputs[engine] = output
        # Parity once per engine and query: every round runs the same query on the same input.
        if repeat == 1 and not self.args.no_parity:
            self.check_parity(q, outputs)
        # The round's outputs go before the next round starts (at 10 M events they are GBs each).
        self.delete_topics(written)

    def kafka_run(self, engine, q, topic, output, repeat) -> measure.Run:
        # A pipeline file, state directory, consumer group and Kafka Streams application id of its
        # own per round: a run must read the whole topic, not resume where an earlier round ended.
        # (Sluice's start-up cache is per command line, so every round's run is a first run, as
        # without --repeats.)
        log_prefix = self.work / f"kafka-{q}-{slug(engine)}{self.tag(repeat)}"
        side = ["--side-input", str(self.side_input)] if q in SIDE_INPUT_QUERIES else []
        n = str(self.args.parallelism)
        if engine in SLUICE:
            pipeline = log_prefix.with_suffix(".yaml")
            source = {"type": "kafka", "topic": topic, "group_id": f"nexmark-{self.stamp}-{q}-{SLUICE[engine]}{self.tag(repeat)}",
                      "bootstrap_servers": self.bootstrap, "schema": BID_SCHEMA, "bounded": True,
                      "starting_offsets": "earliest", "parallelism": self.args.parallelism}
            write_pipeline(pipeline, f"nexmark-{q}", {"bid": source}, query_sql(q), self.side_tables(q),
                           {"type": "kafka", "topic": output, "bootstrap_servers": self.bootstrap})
            return sluice_run(pipeline, log_prefix, SLUICE[engine], self.timeout, sample=True)
        common = ["--bootstrap", self.bootstrap, "--query", q, "--input", topic, "--output", output, *side]
        if engine == FLINK:
            command = ["bash", PEERS / "flink" / "run.sh", *common, "--parallelism", n]
        else:
            command = ["bash", PEERS / "kstreams" / "run.sh", *common, "--threads", n,
                       "--app-id", f"nexmark-{self.stamp}-{q}{self.tag(repeat)}"]
        log(f"{q}: {engine}")
        run = measure.run_measured(command, log_prefix, cwd=ROOT, timeout_seconds=self.timeout, sample=True)
        run.result["engine_seconds"] = run.result.get("seconds")
        return run

    def memory_series(self):
        for q in self.args.queries:
            for repeat in self.rounds():
                for engine in round_order([e for e in (*SLUICE, DF_ALONE) if self.wanted(e)], repeat):
                    self.memory_run(q, engine, repeat)

    def memory_run(self, q, engine, repeat):
        row = self.new_row("memory", q, engine, repeat)
        if engine in self.unavailable:
            if repeat == 1:  # said once per query: the reason is the same every round
                row["error"] = self.unavailable[engine]
                self.results["memory"].append(row)
            return
        base = self.work / f"memory-{q}-{slug(engine)}"
        log_prefix = base.with_name(base.name + self.tag(repeat))
        if engine in SLUICE:
            # The same pipeline file and state directory every round, so the same command line:
            # the start-up cache written by the first round's unmeasured run serves every round
            # (sluice_run empties the state directory before each run).
            pipeline = base.with_suffix(".yaml")
            write_pipeline(pipeline, f"nexmark-{q}-memory",
                           {"bid": {"type": "generator", "entity": "bid", "count": self.generator_count, "seed": SEED}},
                           query_sql(q), self.side_tables(q), {"type": "blackhole"})
            run = sluice_run(pipeline, log_prefix, SLUICE[engine], self.timeout, warm=repeat == 1,
                             state=base.with_suffix(".state"))
            row["events"] = run.result.get("records_in")
            row["rows_out"] = run.result.get("records_out")
        else:
            run = self.datafusion_alone(q, log_prefix)
            row["events"] = run.result.get("rows_in")
            row["rows_out"] = run.result.get("rows_out")
        self.record(row, run, "memory")

    def datafusion_alone(self, q, log_prefix) -> measure.Run:
        """Runs the binary run.sh built (run.sh itself would add cargo's up-to-date check to the
        measured process); falls back to run.sh when the binary is not where run.sh puts it."""
        target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "sluice" / "cargo-target"))
        binary = target / "release" / "nexmark-alone"
        launcher = [str(binary)] if binary.exists() else ["bash", str(PEERS / "datafusion-alone" / "run.sh")]
        side = ["--side-input", str(self.side_input)] if q in SIDE_INPUT_QUERIES else []
        command = [*launcher, "--query-sql", query_sql(q), "--events", str(self.generator_count), "--seed", str(SEED), *side]
        log(f"{q}: {DF_ALONE}")
        run = measure.run_measured(command, log_prefix, cwd=ROOT, timeout_seconds=self.timeout)
        run.result["engine_seconds"] = run.result.get("seconds")
        return run

    def side_tables(self, q):
        if q not in SIDE_INPUT_QUERIES:
            return {}
        return {"side_input": {"path": str(self.side_input), "format": "csv", "header": False,
                               "schema": {"key": "bigint", "value": "string"}}}

    def record(self, row, run: measure.Run, series):
        row.update(wall_seconds=run.wall_seconds, cpu_seconds=run.cpu_seconds, user_seconds=run.user_seconds,
                   system_seconds=run.system_seconds, max_rss_mb=run.max_rss_mb, engine_seconds=run.result.get("engine_seconds"),
                   engine_result=run.result, command=run.command, log=str(Path(run.log).relative_to(ROOT)), error=run.error)
        events = row.get("events")
        if not run.error and not events:
            row["error"] = run.error = "reported no events"
        if not run.error:
            row["events_per_s"] = events / run.wall_seconds
            row["cpu_seconds_per_m_events"] = run.cpu_seconds / events * 1e6
            # The Kafka series: the same rates over the steady window (the middle 60 % of the bytes
            # the process read), which leaves out each engine's start (measure.steady_window).
            steady = measure.steady_window(run, events) if run.samples else None
            if steady:
                row["steady_events_per_s"] = steady["events_per_s"]
                row["steady_cpu_seconds_per_m_events"] = 1e6 / steady["events_per_cpu_s"]
        self.results[series].append(row)
        what = f"{row['query']} {row['engine']}" + (f" (round {row['repeat']} of {self.args.repeats})" if "repeat" in row else "")
        if run.error:
            log(f"{what}: FAILED {run.error}")
        else:
            log(f"{what}: {row['events_per_s']:,.0f} events/s, "
                f"{row['cpu_seconds_per_m_events']:.2f} CPU s per M events, {row['max_rss_mb']:,.0f} MB RSS")

    def check_parity(self, q, outputs):
        """Each output against Sluice FFM's: the peers after normalization, Sluice JNI byte for
        byte. The topics are read in two processes (the engines are not running meanwhile)."""
        import parity
        reference = outputs.get("Sluice FFM")
        others = [e for e in ("Sluice JNI", FLINK, KSTREAMS) if self.wanted(e)]
        if reference is None:
            for engine in others:
                self.results["parity"].append({"query": q, "engine": engine, "reason": "Sluice FFM did not run"})
            return
        log(f"{q}: reading the output topics for parity")
        with ProcessPoolExecutor(max_workers=2) as pool:
            reference_hashes = {normalized: pool.submit(parity.topic_hashes, self.bootstrap, reference, normalized)
                                for normalized in (True, False)}
            other_hashes = {engine: pool.submit(parity.topic_hashes, self.bootstrap, outputs[engine], engine not in SLUICE)
                            for engine in others if engine in outputs}
            for engine in others:
                entry = {"query": q, "engine": engine}
                if engine not in outputs:
                    entry["reason"] = f"{engine} did not run"
                else:
                    normalized = engine not in SLUICE
                    c = parity.compare(self.bootstrap, reference, reference_hashes[normalized].result(), outputs[engine],
                                       other_hashes[engine].result(), normalized)
                    entry["comparison"] = c
                    log(f"{q}: {engine} vs Sluice FFM: " + ("equal" if c["equal"] else
                        f"DIFFERENT ({c['only_in_reference']:,} rows only in FFM, {c['only_in_other']:,} only in {engine})"))
                self.results["parity"].append(entry)

    def write_results(self):
        out = ROOT / "benchmarks" / "results"
        out.mkdir(parents=True, exist_ok=True)
        base = out / f"nexmark-{self.stamp}"
        base.with_suffix(".json").write_text(json.dumps(self.results, indent=2, default=str))
        text = report.markdown(self.results)
        png = base.with_suffix(".png")
        try:
            if report.chart(self.results, png):
                text += f"\n![chart]({png.name})\n"
        except Exception as e:  # the numbers stand without the picture; say why it is missing
            text += f"\nChart not drawn: {e}\n"
        base.with_suffix(".md").write_text(text)
        print(text)
        log(f"results: {base.relative_to(ROOT)}.{{json,md,png}}; logs and pipelines: {self.work.relative_to(ROOT)}")


# -- helpers ---------------------------------------------------------------------------------------

def write_pipeline(path: Path, name, sources, sql, tables, sink):
    """A pipeline file, written as JSON (which YAML reads as is: no quoting to get wrong)."""
    transform = {"type": "sql", "sql": sql}
    if tables:
        transform["tables"] = tables
    pipeline = {"name": name, "sources": sources, "transforms": {"result": transform}, "sinks": {"out": {**sink, "from": "result"}}}
    path.write_text(json.dumps(pipeline, indent=2) + "\n")


def sluice_run(pipeline: Path, log_prefix: Path, bridge: str, timeout, warm=False, sample=False, state=None) -> measure.Run:
    """One measured `sluice run`. With `warm`, the same command line runs once first, unmeasured
    (its state directory deleted after it): the launcher keeps a start-up cache per command line and
    writes it at the exit of the first run (see `benchmarks/run.sh startup`), so the
    measured run is a user's second run of a pipeline; the first run's wall time is kept as
    cold_wall_seconds. Only for runs without side effects (the in-memory series). `state`: the
    state directory (default beside the logs); it is emptied first, since a checkpoint of an
    earlier round would resume the run at that round's end."""
    summary = log_prefix.with_suffix(".summary.json")
    summary.unlink(missing_ok=True)
    env = dict(os.environ, SLUICE_SUMMARY_JSON=str(summary))
    state = state or log_prefix.with_suffix(".state")
    shutil.rmtree(state, ignore_errors=True)
    command = ["./sluice", "run", str(pipeline), "--state-dir", str(state), f"--bridge={bridge}"]
    cold = None
    if warm:
        log(f"{pipeline.stem}: Sluice {bridge.upper()} (first run of this command line, not measured)")
        cold = measure.run_measured(command, log_prefix.with_name(log_prefix.name + "-cold"), env=env, cwd=ROOT, timeout_seconds=timeout)
        shutil.rmtree(state, ignore_errors=True)
        summary.unlink(missing_ok=True)
    log(f"{pipeline.stem}: Sluice {bridge.upper()}")
    run = measure.run_measured(command, log_prefix, env=env, cwd=ROOT, timeout_seconds=timeout, sample=sample)
    if summary.exists():
        run.result = json.loads(summary.read_text())
        run.result["engine_seconds"] = run.result.get("seconds")
        if cold is not None:
            run.result["cold_wall_seconds"] = cold.wall_seconds
    elif not run.error:
        run.error = "no run summary written"
    return run


def slug(engine):
    """An engine's name as a part of topic and file names: "Sluice FFM" -> "sluice-ffm"."""
    return engine.lower().replace(" ", "-")


def topic_bytes_on_disk(topic) -> float:
    """Size of the topic's log segments (lz4-compressed batches), 0 if the data dir is elsewhere."""
    data = Path(os.environ.get("SLUICE_KAFKA_HOME", ROOT / "target" / "kafka")) / "data"
    return float(sum(f.stat().st_size for d in data.glob(f"{topic}-*") for f in d.glob("*.log")))


def environment():
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    mem_kib = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
    java_home = os.environ.get("JAVA_HOME", "")
    java17 = os.environ.get("FLINK_PEER_JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
    flink_pom = (PEERS / "flink" / "pom.xml").read_text() if (PEERS / "flink" / "pom.xml").exists() else ""
    lock = (ROOT / "rust" / "Cargo.lock").read_text()
    return {
        "cpu": cpu, "cores": os.cpu_count(), "ram_gib": mem_kib / 1024 / 1024, "kernel": platform.release(),
        "java": java_version(Path(java_home) / "bin" / "java"), "java17": java_version(Path(java17) / "bin" / "java"),
        "flink": xml_property(flink_pom, "flink.version"), "flink_kafka": xml_property(flink_pom, "flink.kafka.version"),
        "kafka": kafka_version(), "datafusion": (re.search(r'name = "datafusion"\nversion = "([^"]+)"', lock) or [None, "?"])[1],
    }


def java_version(java: Path) -> str:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True).stderr.splitlines()
        runtime = next((l for l in out if "Runtime Environment" in l), out[0] if out else "")
        return runtime.strip() or "?"
    except OSError:
        return f"not found ({java})"


def xml_property(pom: str, name: str) -> str:
    match = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", pom)
    return match.group(1) if match else "?"


def kafka_version() -> str:
    libs = Path(os.environ.get("SLUICE_KAFKA_HOME", ROOT / "target" / "kafka")) / "libs"
    jar = next(iter(sorted(libs.glob("kafka_2.13-*.jar"))), None)
    return jar.name[len("kafka_2.13-"):-len(".jar")] if jar else "?"


def sh(*args):
    return subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def tail(text, width=300):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    joined = " | ".join(lines[-3:]) or "(no output)"
    return joined if len(joined) <= width else "…" + joined[-width:]


def log(*parts):
    print("nexmark:", *parts, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
