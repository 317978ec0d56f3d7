#!/usr/bin/env python3
"""What live inspection's row sampling costs, Kafka -> SQL -> Kafka (the Nexmark Kafka benchmark).

Called by `benchmarks/run.sh inspect [EVENTS [REPEATS [QUERIES]]]` after the broker is up and the JAR
is built. EVENTS Nexmark bids (JSON, Sluice's own generator) are loaded once into a 1-partition topic;
then `sluice run` of kafka source (bounded to the topic's end) -> query -> kafka sink, per query in
three configurations, alternating within each round, REPEATS rounds (default 5):

- off:      `inspect: {sample_rows: 0}` — no row is sampled (the per-batch check still runs)
- defaults: no `inspect:` block — 15 rows per node per 30 s, the shipped default
- heavy:    `inspect: {sample_rows: 1000, sample_window: 1s}` — the most the settings allow, every second

Reports medians of events/s and events per CPU-second with min–max, and each configuration's ratio
to `off` (medians). Writes JSON and Markdown to benchmarks/results/inspect-<UTC time>.*.
"""
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kafka_bench import QUERIES, ROOT, load_bids, query_pipeline, sh, sluice

CONFIGS = {
    "off": "inspect: {sample_rows: 0}\n",
    "defaults": "",
    "heavy": "inspect: {sample_rows: 1000, sample_window: 1s}\n",
}


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    queries = sys.argv[3].split(",") if len(sys.argv) > 3 else ["q0", "q1", "q22"]
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-inspect-bench-"))
    topic = f"inspect-bids-{stamp.lower()}"
    sh("bash", "ci/kafka.sh", "topics", "create", topic, "--partitions", "1")
    n = load_bids(servers, topic, events, work)

    runs = {(q, c): [] for q in queries for c in CONFIGS}
    for rep in range(repeats):
        for query in queries:
            for config, settings in CONFIGS.items():
                out = f"{topic}-{query}-{config}-{rep}"
                sh("bash", "ci/kafka.sh", "topics", "create", out, "--partitions", "1")
                pipeline = query_pipeline(work / "pipeline.yaml", "inspect-bench", servers, topic,
                                          f"inspect-{stamp}-{query}-{config}-{rep}", QUERIES[query], out, settings)
                shutil.rmtree(work / "state", ignore_errors=True)
                run = sluice(pipeline, work)
                if run["records_in"] != n:
                    raise SystemExit(f"{query} {config}: read {run['records_in']} of {n} events")
                runs[(query, config)].append(run)
                print(f"{query} {config} #{rep + 1}: {n / run['seconds']:,.0f} ev/s, "
                      f"{run['cpu_seconds']:.1f} CPU s", file=sys.stderr)

    rows = []
    for (query, config), rs in runs.items():
        rates = [n / r["seconds"] for r in rs]
        per_cpu = [n / r["cpu_seconds"] for r in rs]
        rows.append({"query": query, "config": config, "runs": len(rs),
                     "events_per_s": statistics.median(rates), "events_per_s_range": [min(rates), max(rates)],
                     "events_per_cpu_s": statistics.median(per_cpu),
                     "events_per_cpu_s_range": [min(per_cpu), max(per_cpu)],
                     "seconds": [r["seconds"] for r in rs], "cpu_seconds": [r["cpu_seconds"] for r in rs]})
    for row in rows:
        base = next(r for r in rows if r["query"] == row["query"] and r["config"] == "off")
        row["ratio_events_per_s"] = row["events_per_s"] / base["events_per_s"]
        row["ratio_events_per_cpu_s"] = row["events_per_cpu_s"] / base["events_per_cpu_s"]

    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"inspect-{stamp}.json").write_text(json.dumps(
        {"events": n, "repeats": repeats, "configs": CONFIGS, "rows": rows}, indent=2))
    lines = [f"Kafka JSON -> query -> Kafka, {n:,} Nexmark bid events, 1 partition, 1 lane; medians of {repeats} "
             f"runs per configuration, alternating within each round (range in brackets); ratios are to "
             f"`off` (no row sampled); {stamp}", "",
             "| query | inspect | events/s | events per CPU-s | ratio events/s | ratio per CPU-s |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lo, hi = r["events_per_s_range"]
        clo, chi = r["events_per_cpu_s_range"]
        lines.append(f"| {r['query']} | {r['config']} | {r['events_per_s']:,.0f} [{lo / 1e3:,.0f}k–{hi / 1e3:,.0f}k] | "
                     f"{r['events_per_cpu_s']:,.0f} [{clo / 1e3:,.0f}k–{chi / 1e3:,.0f}k] | "
                     f"{r['ratio_events_per_s']:.3f} | {r['ratio_events_per_cpu_s']:.3f} |")
    table = "\n".join(lines) + "\n"
    (results / f"inspect-{stamp}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
