#!/usr/bin/env python3
"""Where a short run's time goes: `./sluice run` of generator -> q0 -> blackhole over EVENTS events
(default 10 000, where the run itself is nothing; 10 000 000 shows a long run's share), with each
of the launcher's start-up caches: `aot` (the default on Java 25+: an AOT cache), `cds` (a dynamic
class-data archive, SLUICE_CDS=cds; the default before Java 25, where `aot` is one too) and `off`
(SLUICE_CDS=off). Each mode has a command line of its own; its first run writes the cache at exit
(reported as "cold"), then RUNS rounds (default 10) run every mode once, in turn, so drift of the
machine hits them alike. Per run: process wall seconds (measured here), and from the run summary
(SLUICE_SUMMARY_JSON) the engine's seconds, the part of them spent opening the pipeline
(open_seconds), and when the engine started after the JVM did. Prints min / median / max, and
the median of the per-round ratios against `cds`.

    benchmarks/run.sh startup [EVENTS [RUNS]]

To compare builds, run it on each (e.g. a checkout of the commit before a change).
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


def run(pipeline, state, summary, env):
    shutil.rmtree(state, ignore_errors=True)
    started = time.monotonic()
    done = subprocess.run(["./sluice", "run", str(pipeline), "--state-dir", str(state)], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"startup_bench: the run failed:\n{done.stderr}")
    result = json.loads(summary.read_text())
    return {"wall": wall, "engine": result["seconds"], "open": result["open_seconds"],
            "jvm_to_engine": result["started_ms_after_jvm_start"] / 1000}


def show(name, runs):
    cells = []
    for key in ("wall", "engine", "open", "jvm_to_engine"):
        values = [r[key] for r in runs]
        cells.append(f"{key} {min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}")
    print(f"{name:>9} ({len(runs)} runs): " + ", ".join(cells))


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pipeline = tmp / "q0.json"
        pipeline.write_text(json.dumps({
            "name": "startup-q0",
            "sources": {"bid": {"type": "generator", "entity": "bid", "count": events, "seed": 42}},
            "transforms": {"result": {"type": "sql", "sql": "SELECT auction, bidder, price, dateTime, extra FROM bid"}},
            "sinks": {"out": {"type": "blackhole", "from": "result"}}}))
        summary = tmp / "summary.json"
        print(f"startup_bench: q0 over {events:,} events; seconds min / median / max")
        modes = {"aot": "on", "cds": "cds", "off": "off"}  # name -> SLUICE_CDS
        envs = {m: dict(os.environ, SLUICE_SUMMARY_JSON=str(summary), SLUICE_CDS=v) for m, v in modes.items()}
        states = {m: tmp / f"state-{m}" for m in modes}  # one command line per mode: one cache each
        cold = {m: run(pipeline, states[m], summary, envs[m]) for m in ("aot", "cds")}
        runs = {m: [] for m in modes}
        for _ in range(repeats):
            for m in modes:
                runs[m].append(run(pipeline, states[m], summary, envs[m]))
        for m in ("aot", "cds"):
            show(f"{m} cold", [cold[m]])
        for m in modes:
            show(m, runs[m])
        for m in ("aot", "off"):
            ratios = [a["wall"] / c["wall"] for a, c in zip(runs[m], runs["cds"])]
            engine = [a["engine"] / c["engine"] for a, c in zip(runs[m], runs["cds"])]
            print(f"{m} / cds per round: wall {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), "
                  f"engine {statistics.median(engine):.3f} ({min(engine):.3f}-{max(engine):.3f})")

if __name__ == "__main__":
    main()
