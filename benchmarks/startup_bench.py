#!/usr/bin/env python3
"""Where a short run's time goes: `./sluice run` of generator -> q0 -> blackhole over EVENTS events
(default 10 000, where the run itself is nothing; 10 000 000 shows a long run's share), RUNS times
(default 10) with class data sharing as the launcher does it, then RUNS times without it
(SLUICE_CDS=off). The first run of a command line writes its class archive at exit (reported as
"cold"); the later ones map it. Per run: process wall seconds (measured here), and from the run
summary (SLUICE_SUMMARY_JSON) the engine's seconds, the part of them spent opening the pipeline
(open_seconds), and when the engine started after the JVM did. Prints min / median / max.

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
    print(f"{name:>8} ({len(runs)} runs): " + ", ".join(cells))


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
        for cds in ("on", "off"):
            env = dict(os.environ, SLUICE_SUMMARY_JSON=str(summary), SLUICE_CDS=cds)
            state = tmp / f"state-{cds}"  # one command line per series: one class archive
            first = run(pipeline, state, summary, env)
            rest = [run(pipeline, state, summary, env) for _ in range(repeats)]
            if cds == "on":
                show("cold", [first])
                show("cds", rest)
            else:
                show("no cds", [first, *rest])


if __name__ == "__main__":
    main()
