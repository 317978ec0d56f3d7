#!/usr/bin/env python3
"""Which Kafka client settings matter: the plain consume->produce loop (the ceiling) and Sluice q0,
Kafka JSON -> SQL -> Kafka, under several sets of client settings, on the same topic.

Called by `benchmarks/run.sh kafka-settings [EVENTS [REPEATS [SETS]]]` after the broker is up and
the JARs are built. Loads EVENTS Nexmark bids (JSON) into a 1-partition topic once; then, REPEATS
rounds (default 3), each running every set in turn, the ceiling then Sluice. A set changes a few
settings from where Sluice starts (KafkaClientDefaults) — for the ceiling as arguments, for
Sluice as the source's and the sink's `properties:`. Both run as in kafka_bench.py (the
launcher's JVM flags and a start-up cache for each; measured from outside: whole process
and steady window, peak RSS). Prints and writes benchmarks/results/kafka-settings-<time>.{json,md}
with medians (min-max) per set and engine, and each set's ratio to Sluice's defaults.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from kafka_bench import (QUERIES, ROOT, ceiling_command, ceiling_run, k, load_bids, measured, query_pipeline,
                         scratch_topic, sh, sluice_run, small_topic, summarize)

MIB = 1024 * 1024
# name -> (consumer settings, producer settings), each changed from Sluice's defaults.
SETS = {
    "kafka clients' own defaults": (
        {"fetch.min.bytes": 1, "fetch.max.wait.ms": 500, "max.poll.records": 500},
        {"batch.size": 16384, "linger.ms": 5, "compression.type": "none", "max.in.flight.requests.per.connection": 5}),
    "sluice defaults": ({}, {}),
    "sluice defaults before 2026-12-03 (1 MiB fetches, the clients' socket buffers)": (
        {"max.partition.fetch.bytes": MIB, "receive.buffer.bytes": 65536}, {"send.buffer.bytes": 131072}),
    "max.partition.fetch.bytes 8 MiB": ({"max.partition.fetch.bytes": 8 * MIB}, {}),
    "receive.buffer.bytes 1 MiB": ({"receive.buffer.bytes": MIB}, {}),
    "max.poll.records 5000": ({"max.poll.records": 5000}, {}),
    "fetch.min.bytes 1": ({"fetch.min.bytes": 1}, {}),
    "producer send.buffer.bytes 1 MiB, buffer.memory 64 MiB": ({}, {"send.buffer.bytes": MIB, "buffer.memory": 64 * MIB}),
    "producer batch.size 1 MiB, max.request.size 2 MiB": ({}, {"batch.size": MIB, "max.request.size": 2 * MIB}),
    "max.poll.records 5000 + max.partition.fetch.bytes 8 MiB": ({"max.poll.records": 5000, "max.partition.fetch.bytes": 8 * MIB}, {}),
    "socket buffers 1 MiB (receive, send)": ({"receive.buffer.bytes": MIB}, {"send.buffer.bytes": MIB}),
    "fetch 4 MiB + socket buffers 1 MiB": ({"max.partition.fetch.bytes": 4 * MIB, "receive.buffer.bytes": MIB},
                                           {"send.buffer.bytes": MIB}),
    "fetch 8 MiB + receive 1 MiB + send 1 MiB": (
        {"max.partition.fetch.bytes": 8 * MIB, "receive.buffer.bytes": MIB}, {"send.buffer.bytes": MIB}),
    # Latency (issue 16): how long a fetch may wait for fetch.min.bytes and a batch for more records.
    "fetch.max.wait.ms 20 + linger.ms 20": ({"fetch.max.wait.ms": 20}, {"linger.ms": 20}),
    "fetch.max.wait.ms 10 + linger.ms 10": ({"fetch.max.wait.ms": 10}, {"linger.ms": 10}),
    "fetch.max.wait.ms 5 + linger.ms 5": ({"fetch.max.wait.ms": 5}, {"linger.ms": 5}),
}


def args_of(consumer, producer):
    return [f"consumer.{key}={value}" for key, value in consumer.items()] + \
           [f"producer.{key}={value}" for key, value in producer.items()]


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 3_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    chosen = sys.argv[3].split(";") if len(sys.argv) > 3 else list(SETS)
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-kafka-settings-"))
    with scratch_topic(f"bench-settings-{stamp.lower()}") as topic:
        measure_sets(events, repeats, chosen, servers, java, stamp, work, topic)


def measure_sets(events, repeats, chosen, servers, java, stamp, work, topic):
    n = load_bids(servers, topic, events, work)
    small, small_n = small_topic(servers, work, stamp)
    sh("bash", "ci/kafka.sh", "topics", "create", f"{small}-warm", "--partitions", "1")
    measured(ceiling_command(java, work, servers, small, f"{small}-warm", small_n), work / "ceiling-warm")
    pipeline = work / "q0.yaml"  # one command line for every set, so one start-up cache
    query_pipeline(pipeline, "bench-settings", servers, small, f"settings-{stamp}-warm", QUERIES["q0"], f"{small}-warm")
    sluice_run(pipeline, work, small_n, work / "sluice-warm")

    runs = {(name, engine): [] for name in chosen for engine in ("ceiling", "Sluice q0")}
    total_bytes = 0
    for rep in range(repeats):
        for i, name in enumerate(chosen):
            consumer, producer = SETS[name]
            with scratch_topic(f"{topic}-c-{rep}-{i}") as out:
                base = ceiling_run(java, work, servers, topic, out, n, work / f"c-{rep}-{i}", args_of(consumer, producer))
            runs[(name, "ceiling")].append(base)
            total_bytes = base["bytes"]
            with scratch_topic(f"{topic}-s-{rep}-{i}") as out:
                query_pipeline(pipeline, "bench-settings", servers, topic, f"settings-{stamp}-{rep}-{i}", QUERIES["q0"],
                               out, consumer=consumer, producer=producer)
                runs[(name, "Sluice q0")].append(sluice_run(pipeline, work, n, work / f"s-{rep}-{i}"))
            print(f"round {rep + 1}/{repeats}, {name}: ceiling {k(base['steady_events_per_cpu_s'])} / Sluice "
                  f"{k(runs[(name, 'Sluice q0')][-1]['steady_events_per_cpu_s'])} steady events per CPU-s", file=sys.stderr)

    rows = [dict(summarize("q0", engine, rs, total_bytes), settings=name, consumer=SETS[name][0], producer=SETS[name][1])
            for (name, engine), rs in runs.items()]
    # Ratios against Sluice's defaults, or against the first set when the defaults did not run.
    reference = "sluice defaults" if "sluice defaults" in chosen else chosen[0]
    defaults = {r["engine"]: r for r in rows if r["settings"] == reference}
    for r in rows:
        d = defaults.get(r["engine"])
        if d:
            r["vs_defaults_steady_events_per_cpu_s"] = r["steady_events_per_cpu_s"] / d["steady_events_per_cpu_s"]
            r["vs_defaults_events_per_s"] = r["events_per_s"] / d["events_per_s"]

    results = ROOT / "benchmarks" / "results"
    (results / f"kafka-settings-{stamp}.json").write_text(json.dumps({"events": n, "topic_bytes": total_bytes, "rows": rows}, indent=2))
    lines = [f"Kafka client settings, {n:,} Nexmark bid events ({total_bytes / 1e6:,.0f} MB of JSON), 1 partition, "
             f"ceiling loop and Sluice q0; medians of {repeats} rounds (min–max); 'vs' = against '{reference}'; {stamp}", "",
             "| settings (changed from Sluice's defaults) | engine | events/s | steady events/s | steady events per CPU-s "
             "| whole-process events per CPU-s | peak RSS MiB | vs, steady per CPU-s | vs, events/s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["engine"], chosen.index(r["settings"]))):
        lo, hi = r["steady_events_per_cpu_s_range"] or [None, None]
        lines.append(f"| {r['settings']} | {r['engine']} | {k(r['events_per_s'])} | {k(r['steady_events_per_s'])} | "
                     f"{k(r['steady_events_per_cpu_s'])} [{k(lo)}–{k(hi)}] | {k(r['events_per_cpu_s'])} | "
                     f"{r['max_rss_mib']:.0f} | {r.get('vs_defaults_steady_events_per_cpu_s', float('nan')):.2f} | "
                     f"{r.get('vs_defaults_events_per_s', float('nan')):.2f} |")
    table = "\n".join(lines) + "\n"
    (results / f"kafka-settings-{stamp}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
