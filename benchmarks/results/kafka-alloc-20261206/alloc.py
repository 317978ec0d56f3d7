#!/usr/bin/env python3
"""Where a Kafka -> SQL -> Kafka run allocates on the Java heap: loads EVENTS bids into a fresh
topic, runs QUERY (q0) over them once under a JFR recording (`settings=profile`, whose
jdk.ObjectAllocationSample events weigh each sampled allocation by the bytes it stands for), and
prints JDK's `jfr view` allocation-by-class and allocation-by-site tables, the sampled bytes by
allocated class and its six innermost frames, and the run summary.
Start-up caches are off (SLUICE_CDS=off) so the recording starts with the JVM.

    python3 benchmarks/results/kafka-alloc-20261206/alloc.py OUT_DIR [EVENTS [QUERY]]
        (from the repository root, broker up: bash ci/kafka.sh start; JAR built)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from kafka_bench import QUERIES, load_bids, query_pipeline, scratch_topic, sh  # noqa: E402


def main():
    out_dir = Path(sys.argv[1]).resolve()
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    query = sys.argv[3] if len(sys.argv) > 3 else "q0"
    out_dir.mkdir(parents=True, exist_ok=True)
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    stamp = time.strftime("%Y%m%dt%H%M%Sz", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-kafka-alloc-"))
    jfr = out_dir / f"{query}.jfr"
    with scratch_topic(f"alloc-bids-{stamp}") as topic, scratch_topic(f"alloc-out-{stamp}") as out:
        n = load_bids(servers, topic, events, work)
        pipeline = query_pipeline(work / f"{query}.yaml", f"alloc-{query}", servers, topic, f"alloc-{stamp}",
                                  QUERIES[query], out)
        summary = work / "summary.json"
        env = dict(os.environ, SLUICE_CDS="off", SLUICE_SUMMARY_JSON=str(summary),
                   SLUICE_JAVA_OPTS=f"-XX:StartFlightRecording=filename={jfr},settings=profile")
        sh("./sluice", "run", str(pipeline), "--state-dir", str(work / "state"), env=env)
        result = json.loads(summary.read_text())
    java_bin = Path(os.environ["JAVA_HOME"]) / "bin"
    report = [f"{query} over {n:,} bids: {json.dumps(result)}", ""]
    for view in ("allocation-by-class", "allocation-by-site", "gc"):
        text = subprocess.run([str(java_bin / "jfr"), "view", "--width", "200", view, str(jfr)],
                              capture_output=True, text=True, check=True).stdout
        report += [text, ""]
    report += [by_stack(java_bin, jfr)]
    (out_dir / f"{query}.txt").write_text("\n".join(report))
    print("\n".join(report))


def by_stack(java_bin, jfr, depth=6, rows=25):
    """Share of the sampled allocation weight per (class, innermost `depth` frames)."""
    text = subprocess.run([str(java_bin / "jfr"), "print", "--json", "--stack-depth", str(depth), "--events",
                           "jdk.ObjectAllocationSample", str(jfr)], capture_output=True, text=True, check=True).stdout
    events = json.loads(text)["recording"]["events"]
    weights = {}
    for event in events:
        values = event["values"]
        frames = (values.get("stackTrace") or {}).get("frames", [])
        site = " < ".join(f"{f['method']['type']['name'].split('/')[-1]}.{f['method']['name']}" for f in frames)
        key = (values["objectClass"]["name"].split("/")[-1], site)
        weights[key] = weights.get(key, 0) + values["weight"]
    total = sum(weights.values())
    lines = [f"Sampled allocation by class and stack ({depth} innermost frames): {total / 1e6:,.0f} MB "
             f"stood for by {len(events)} samples", ""]
    for (cls, site), weight in sorted(weights.items(), key=lambda kv: -kv[1])[:rows]:
        lines.append(f"{100 * weight / total:5.1f}%  {cls}  {site}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
