#!/usr/bin/env python3
"""Kafka JSON -> SQL -> Kafka on one machine, side by side with the I/O ceiling.

Called by `benchmarks/run.sh kafka [EVENTS]` after the broker is up and the JARs are built.
Loads EVENTS Nexmark bids (JSON, from Sluice's own generator) into a topic once, then for each
query runs (a) a plain kafka-clients consume->produce loop of the same records with the same
client settings and (b) `sluice run` of kafka source -> SQL -> kafka sink, bounded to the
topic's end, alternating the two KAFKA_BENCH_REPEATS times each (default 3). Reports the medians
of events/s, MB/s, process CPU seconds, events per CPU-second and the broker's CPU, and
Sluice/baseline ratios of the medians from the same run. Then measures resume-to-first-record on a
quiet 100-event topic, FIRST_RECORD_RUNS times (default 7) through the launcher's fast path for
`run` and through picocli. Writes JSON and Markdown to benchmarks/results/.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERIES = {
    "q0": "SELECT auction, bidder, price, dateTime, extra FROM bid",
    "q1": "SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q22": "SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, "
           "split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid",
}
BID_SCHEMA = ("{auction: bigint, bidder: bigint, price: bigint, channel: string, url: string, "
              "dateTime: timestamp(ms), extra: string}")


def sh(*args, env=None, capture=True):
    result = subprocess.run(args, cwd=ROOT, env=env, text=True, capture_output=capture)
    if result.returncode != 0:
        sys.stderr.write(result.stdout or "")
        sys.stderr.write(result.stderr or "")
        raise SystemExit(f"failed: {' '.join(args)}")
    return result.stdout


def broker_cpu_seconds():
    pid = (ROOT / "target/kafka/broker.pid").read_text().strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def sluice(pipeline_yaml, workdir, state_arg=None):
    summary = workdir / "summary.json"
    env = dict(os.environ, SLUICE_SUMMARY_JSON=str(summary))
    state = workdir / "state"
    state_args = ["--state-dir", str(state)] if state_arg is None else [state_arg.format(state=state)]
    sh("./sluice", "run", str(pipeline_yaml), *state_args, env=env)
    return json.loads(summary.read_text())


def load_bids(servers, topic, events, work):
    """Writes about EVENTS Nexmark bids (JSON, seed 1) into `topic` with Sluice's own generator
    (46 of every 50 events are bids); returns how many were written."""
    load = work / "load.yaml"
    load.write_text(f"""name: bench-load
sources:
  bid: {{type: generator, entity: bid, count: {(events * 50 + 45) // 46}, seed: 1}}
transforms:
  bids: {{type: sql, sql: "SELECT * FROM bid"}}
sinks:
  out: {{type: kafka, from: bids, topic: {topic}, bootstrap_servers: "{servers}"}}
""")
    loaded = sluice(load, work)
    print(f"loaded {loaded['records_out']:,} bid events into {topic} in {loaded['seconds']:.1f} s", file=sys.stderr)
    return loaded["records_out"]


def query_pipeline(path, name, servers, topic, group, sql, out, settings=""):
    """Writes a bounded kafka source -> sql -> kafka sink pipeline to `path`; `settings` are more
    top-level lines (e.g. delivery and checkpoint)."""
    path.write_text(f"""name: {name}
{settings}sources:
  bid:
    type: kafka
    topic: {topic}
    group_id: {group}
    bootstrap_servers: "{servers}"
    schema: {BID_SCHEMA}
    bounded: true
transforms:
  result: {{type: sql, sql: "{sql}"}}
sinks:
  out: {{type: kafka, from: result, topic: {out}, bootstrap_servers: "{servers}"}}
""")
    return path


def first_record_series(servers, work, stamp, runs):
    """Resume-to-first-record on a quiet 100-event topic: `runs` restarts of q0 with a fresh group
    (after one unmeasured first run), each through the launcher's fast path for `run` and through
    picocli (the `--state-dir=DIR` form), alternating, a second apart. Returns {path: [ms, ...]}."""
    topic = f"bench-small-{stamp.lower()}"
    sh("bash", "ci/kafka.sh", "topics", "create", topic, "--partitions", "1")
    load = work / "load-small.yaml"
    load.write_text(f"""name: bench-load-small
sources:
  bid: {{type: generator, entity: bid, count: 109, seed: 1}}
transforms:
  bids: {{type: sql, sql: "SELECT * FROM bid"}}
sinks:
  out: {{type: kafka, from: bids, topic: {topic}, bootstrap_servers: "{servers}"}}
""")
    sluice(load, work)
    out = f"{topic}-out"
    sh("bash", "ci/kafka.sh", "topics", "create", out, "--partitions", "1")
    times = {"launcher fast path": [], "picocli": []}
    # Run 0 of each path is the pipeline's first run: it records the launcher's class-data archive
    # for that command line (./sluice). Resuming means a restart, so runs 1..N are measured.
    for i in range(runs + 1):
        for path, state_arg in (("launcher fast path", None), ("picocli", "--state-dir={state}")):
            pipeline = query_pipeline(work / "first-record.yaml", "bench-first-record", servers, topic,
                                      f"bench-first-{stamp}-{i}-{path[0]}", QUERIES["q0"], out)
            shutil.rmtree(work / "state", ignore_errors=True)
            time.sleep(1)
            ms = sluice(pipeline, work, state_arg)["first_record_ms_after_jvm_start"]
            if i > 0:
                times[path].append(ms)
    return times


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(QUERIES)
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-kafka-bench-"))
    topic = f"bench-bids-{stamp.lower()}"
    sh("bash", "ci/kafka.sh", "topics", "create", topic, "--partitions", "1")

    n = load_bids(servers, topic, events, work)

    repeats = int(os.environ.get("KAFKA_BENCH_REPEATS", "3"))
    rows = []
    for name in chosen:
        sql = QUERIES[name]
        base_out = f"{topic}-{name}-baseline"
        sluice_out = f"{topic}-{name}-sluice"
        sh("bash", "ci/kafka.sh", "topics", "create", base_out, "--partitions", "1")
        sh("bash", "ci/kafka.sh", "topics", "create", sluice_out, "--partitions", "1")
        # The two engines alternate, `repeats` times each: on shared vCPUs a single pair of runs
        # can differ by 40 % for the same work, so medians are compared.
        runs = {"kafka-clients copy (ceiling)": [], "Sluice FFM": []}
        for rep in range(repeats):
            before = broker_cpu_seconds()
            out = sh(java, *flags, "-cp", "benchmarks/target/benchmarks.jar", "dev.sluice.benchmarks.KafkaCopyBaseline",
                     servers, topic, base_out, str(n))
            base = json.loads(out.strip().splitlines()[-1])
            base["broker_cpu_seconds"] = broker_cpu_seconds() - before
            runs["kafka-clients copy (ceiling)"].append(base)
            total_bytes = base["bytes"]

            pipeline = query_pipeline(work / f"{name}.yaml", f"bench-{name}", servers, topic, f"bench-{name}-{stamp}-{rep}",
                                      sql, sluice_out)
            shutil.rmtree(work / "state", ignore_errors=True)  # else the run resumes at the end
            before = broker_cpu_seconds()
            run = sluice(pipeline, work)
            run["broker_cpu_seconds"] = broker_cpu_seconds() - before
            if run["records_in"] != n:
                raise SystemExit(f"{name}: sluice read {run['records_in']} of {n} events")
            run["events"] = run["records_in"]
            runs["Sluice FFM"].append(run)

        for engine, rs in runs.items():
            rates = [r["events"] / r["seconds"] for r in rs]
            per_cpu = [r["events"] / r["cpu_seconds"] for r in rs]
            rows.append({
                "query": name, "engine": engine, "events": rs[0]["events"], "runs": len(rs),
                "events_per_s": statistics.median(rates), "events_per_s_range": [min(rates), max(rates)],
                "mb_per_s": total_bytes * statistics.median(rates) / rs[0]["events"] / 1e6,
                "cpu_seconds": statistics.median(r["cpu_seconds"] for r in rs),
                "events_per_cpu_s": statistics.median(per_cpu), "events_per_cpu_s_range": [min(per_cpu), max(per_cpu)],
                "broker_cpu_seconds": statistics.median(r["broker_cpu_seconds"] for r in rs),
                "seconds": [r["seconds"] for r in rs],
            })
        ratio_rate = rows[-1]["events_per_s"] / rows[-2]["events_per_s"]
        ratio_cpu = rows[-1]["events_per_cpu_s"] / rows[-2]["events_per_cpu_s"]
        rows[-1]["ratio_events_per_s"] = ratio_rate
        rows[-1]["ratio_events_per_cpu_s"] = ratio_cpu
        print(f"{name}: sluice {rows[-1]['events_per_s']:,.0f} ev/s vs ceiling {rows[-2]['events_per_s']:,.0f} "
              f"({ratio_rate:.2f}x); per CPU-second {ratio_cpu:.2f}x (medians of {repeats})", file=sys.stderr)

    first_records = first_record_series(servers, work, stamp, int(os.environ.get("FIRST_RECORD_RUNS", "7")))

    java_opts = os.environ.get("SLUICE_JAVA_OPTS", "")  # the launcher adds these JVM options to Sluice's
    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"kafka-{stamp}.json").write_text(json.dumps(
        {"events": n, "topic_bytes": total_bytes, "sluice_java_opts": java_opts, "rows": rows,
         "first_record_ms_quiet": first_records}, indent=2))
    lines = [f"Kafka JSON -> SQL -> Kafka, {n:,} Nexmark bid events ({total_bytes / 1e6:,.0f} MB of JSON), "
             f"1 partition, 1 lane; medians of {repeats} alternating runs per engine (range in brackets); {stamp}"
             + (f"; Sluice with SLUICE_JAVA_OPTS={java_opts}" if java_opts else ""), "",
             "| query | engine | events/s | MB/s | process CPU s | events per CPU-s | broker CPU s | ratio events/s | ratio per CPU-s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lo, hi = r["events_per_s_range"]
        clo, chi = r["events_per_cpu_s_range"]
        lines.append(f"| {r['query']} | {r['engine']} | {r['events_per_s']:,.0f} [{lo / 1e3:,.0f}k–{hi / 1e3:,.0f}k] | "
                     f"{r['mb_per_s']:,.1f} | {r['cpu_seconds']:.1f} | {r['events_per_cpu_s']:,.0f} [{clo / 1e3:,.0f}k–{chi / 1e3:,.0f}k] | "
                     f"{r['broker_cpu_seconds']:.1f} | {r.get('ratio_events_per_s', 1.0):.2f} | {r.get('ratio_events_per_cpu_s', 1.0):.2f} |")
    lines += ["", "Resume to first record on a quiet 100-event topic (q0, fresh group each run, ms after JVM start; "
              "restarts after the pipeline's first run):", "",
              "| path | runs | min | median | max |", "|---|---:|---:|---:|---:|"]
    for path, ms in first_records.items():
        lines.append(f"| {path} | {len(ms)} | {min(ms)} | {statistics.median(ms):.0f} | {max(ms)} |")
    table = "\n".join(lines) + "\n"
    (results / f"kafka-{stamp}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
