#!/usr/bin/env python3
"""Exactly-once against at-least-once, Kafka -> SQL -> Kafka, at checkpoint intervals of 1 s and 10 s.

Called by `benchmarks/run.sh delivery [EVENTS [REPEATS]]` after the broker is up and the JARs are
built. Two measurements, every configuration in the same run:

- Throughput: EVENTS Nexmark bids (JSON, from Sluice's own generator) loaded once into a
  1-partition topic; `sluice run` of kafka source (bounded to the topic's end) -> q0 -> kafka sink,
  for each of delivery at_least_once / exactly_once x checkpoint.interval 1s / 10s, the four
  configurations alternating, REPEATS times each (default 3). Medians of events/s and events per
  CPU-second, and exactly_once / at_least_once ratios of the medians per interval.
- End-to-end latency, measured outside the engine: for each configuration a running pipeline
  (unbounded source) and `LatencyProbe`, which produces {"id", "sent_us"} records at
  LATENCY_RATE events/s (default 20000) for LATENCY_SECONDS (default 20, after 5 s unmeasured)
  and reads the output topic read_committed: p50 / p99 / p99.9 / max of receive minus send time.

Peak RSS (ru_maxrss of the JVM, which the launcher execs) is reported for every row. Writes JSON and
Markdown to benchmarks/results/delivery-<UTC time>.*.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka_bench import QUERIES, ROOT, load_bids, query_pipeline, sh


def sluice_measured(pipeline_yaml, workdir):
    """`sluice run` to its end, as kafka_bench.sluice, plus the JVM's peak RSS in MiB (the launcher
    execs the JVM, so os.wait4's ru_maxrss is the engine's own)."""
    summary = workdir / "summary.json"
    env = dict(os.environ, SLUICE_SUMMARY_JSON=str(summary))
    process = subprocess.Popen(["./sluice", "run", str(pipeline_yaml), "--state-dir", str(workdir / "state")],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.stderr.write(stderr)
        raise SystemExit(f"failed: sluice run {pipeline_yaml}")
    result = json.loads(summary.read_text())
    result["max_rss_mib"] = usage.ru_maxrss / 1024
    return result

CONFIGS = [(d, i) for i in ("1s", "10s") for d in ("at_least_once", "exactly_once")]


def throughput_pipeline(path, servers, topic, group, out, delivery, interval):
    return query_pipeline(path, "delivery-bench", servers, topic, group, QUERIES["q0"], out,
                          f"delivery: {delivery}\ncheckpoint: {{interval: {interval}}}\n")


def latency_pipeline(path, servers, topic, group, out, delivery, interval):
    path.write_text(f"""name: delivery-latency
delivery: {delivery}
checkpoint: {{interval: {interval}}}
sources:
  events:
    type: kafka
    topic: {topic}
    group_id: {group}
    bootstrap_servers: "{servers}"
    schema: {{id: bigint, sent_us: bigint}}
    starting_offsets: latest
transforms:
  result: {{type: sql, sql: "SELECT id, sent_us FROM events"}}
sinks:
  out: {{type: kafka, from: result, topic: {out}, bootstrap_servers: "{servers}"}}
""")
    return path


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rate = int(os.environ.get("LATENCY_RATE", "20000"))
    seconds = int(os.environ.get("LATENCY_SECONDS", "20"))
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-delivery-bench-"))
    topic = f"delivery-bids-{stamp.lower()}"
    sh("bash", "ci/kafka.sh", "topics", "create", topic, "--partitions", "1")

    n = load_bids(servers, topic, events, work)

    runs = {c: [] for c in CONFIGS}
    for rep in range(repeats):
        for delivery, interval in CONFIGS:
            out = f"{topic}-{delivery}-{interval}-{rep}".replace("_", "-")
            sh("bash", "ci/kafka.sh", "topics", "create", out, "--partitions", "1")
            pipeline = throughput_pipeline(work / "throughput.yaml", servers, topic,
                                           f"delivery-{stamp}-{delivery}-{interval}-{rep}", out, delivery, interval)
            shutil.rmtree(work / "state", ignore_errors=True)
            run = sluice_measured(pipeline, work)
            if run["records_in"] != n:
                raise SystemExit(f"{delivery} {interval}: read {run['records_in']} of {n} events")
            runs[(delivery, interval)].append(run)
            print(f"{delivery} {interval} #{rep + 1}: {n / run['seconds']:,.0f} ev/s, "
                  f"{run['cpu_seconds']:.1f} CPU s", file=sys.stderr)

    rows = []
    for (delivery, interval), rs in runs.items():
        rates = [n / r["seconds"] for r in rs]
        per_cpu = [n / r["cpu_seconds"] for r in rs]
        rows.append({"delivery": delivery, "interval": interval, "runs": len(rs),
                     "events_per_s": statistics.median(rates), "events_per_s_range": [min(rates), max(rates)],
                     "events_per_cpu_s": statistics.median(per_cpu),
                     "events_per_cpu_s_range": [min(per_cpu), max(per_cpu)],
                     "max_rss_mib": max(r["max_rss_mib"] for r in rs),
                     "seconds": [r["seconds"] for r in rs], "cpu_seconds": [r["cpu_seconds"] for r in rs]})
    for row in rows:
        base = next(r for r in rows if r["interval"] == row["interval"] and r["delivery"] == "at_least_once")
        row["ratio_events_per_s"] = row["events_per_s"] / base["events_per_s"]
        row["ratio_events_per_cpu_s"] = row["events_per_cpu_s"] / base["events_per_cpu_s"]

    latencies = []
    for delivery, interval in CONFIGS:
        name = f"lat-{stamp.lower()}-{delivery}-{interval}".replace("_", "-")
        lat_in, lat_out = name + "-in", name + "-out"
        sh("bash", "ci/kafka.sh", "topics", "create", lat_in, "--partitions", "1")
        sh("bash", "ci/kafka.sh", "topics", "create", lat_out, "--partitions", "1")
        pipeline = latency_pipeline(work / "latency.yaml", servers, lat_in, f"{name}-g", lat_out, delivery, interval)
        shutil.rmtree(work / "state", ignore_errors=True)
        log = open(work / f"{name}.log", "w")
        process = subprocess.Popen(["./sluice", "run", str(pipeline), "--state-dir", str(work / "state")],
                                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        try:
            time.sleep(5)  # joined the group and assigned (starting_offsets: latest)
            probe = sh(java, *flags, "-cp", "benchmarks/target/benchmarks.jar", "dev.sluice.benchmarks.LatencyProbe",
                       servers, lat_in, lat_out, str(rate), str(seconds), "5")
        finally:
            process.send_signal(signal.SIGTERM)
            _, _, usage = os.wait4(process.pid, 0)
            log.close()
        result = json.loads(probe.strip().splitlines()[-1])
        result.update({"delivery": delivery, "interval": interval, "max_rss_mib": usage.ru_maxrss / 1024})
        latencies.append(result)
        print(f"latency {delivery} {interval}: p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
              f"missing {result['missing']}", file=sys.stderr)

    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"delivery-{stamp}.json").write_text(json.dumps(
        {"events": n, "repeats": repeats, "latency_rate": rate, "latency_seconds": seconds,
         "throughput": rows, "latency": latencies}, indent=2))
    lines = [f"Kafka JSON -> q0 -> Kafka, {n:,} Nexmark bid events, 1 partition, 1 lane; medians of {repeats} "
             f"runs per configuration, the four alternating (range in brackets); {stamp}", "",
             "| delivery | checkpoint interval | events/s | events per CPU-s | ratio events/s | ratio per CPU-s | peak RSS MiB (max of runs) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lo, hi = r["events_per_s_range"]
        clo, chi = r["events_per_cpu_s_range"]
        lines.append(f"| {r['delivery']} | {r['interval']} | {r['events_per_s']:,.0f} [{lo / 1e3:,.0f}k–{hi / 1e3:,.0f}k] | "
                     f"{r['events_per_cpu_s']:,.0f} [{clo / 1e3:,.0f}k–{chi / 1e3:,.0f}k] | "
                     f"{r['ratio_events_per_s']:.2f} | {r['ratio_events_per_cpu_s']:.2f} | {r['max_rss_mib']:,.0f} |")
    lines += ["", f"End-to-end latency, produce to read_committed consume, {rate:,} events/s for {seconds} s "
              "(after 5 s unmeasured), one run per configuration:", "",
              "| delivery | checkpoint interval | measured | missing | p50 ms | p99 ms | p99.9 ms | max ms | peak RSS MiB |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in latencies:
        lines.append(f"| {r['delivery']} | {r['interval']} | {r['measured']:,} | {r['missing']} | {r['p50_ms']:.1f} | "
                     f"{r['p99_ms']:.1f} | {r['p999_ms']:.1f} | {r['max_ms']:.1f} | {r['max_rss_mib']:,.0f} |")
    table = "\n".join(lines) + "\n"
    (results / f"delivery-{stamp}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
