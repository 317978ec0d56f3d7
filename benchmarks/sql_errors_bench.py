#!/usr/bin/env python3
"""What setting rows aside costs a SQL transform (`on_error: skip`): `./sluice run` of a JSON-lines
file of ROWS rows (default 1 000 000) -> `SELECT id, CAST(amount AS BIGINT)` -> blackhole, where
no row, one row in 1 000, or one in 100 has an amount that is no number. Each failing batch is
pushed again in halves until every bad row stands alone, so the cost grows with the bad rows.
REPEATS rounds (default 5) run the three files in turn, so drift of the machine hits them alike.
Per run: process wall and CPU seconds (the child's rusage) and the engine's seconds (the run
summary). Prints min / median / max, the per-round ratio against the file without bad rows, and
the extra CPU per bad row.

    benchmarks/run.sh sql-errors [ROWS [REPEATS]]
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATES = {"none": 0, "1 in 1000": 1000, "1 in 100": 100}


def write_input(directory, name, rows, every):
    data = directory / f"{name}.jsonl"
    with data.open("w") as out:
        for i in range(rows):
            amount = "x" if every and i % every == 7 else str(i % 997)
            out.write(f'{{"id": {i}, "amount": "{amount}"}}\n')
    pipeline = directory / f"{name}.json"
    pipeline.write_text(json.dumps({
        "name": f"sql-errors-{name}",
        "sources": {"events": {"type": "file", "path": str(data), "schema": {"id": "bigint", "amount": "string"}}},
        "transforms": {"parsed": {"type": "sql", "sql": "SELECT id, CAST(amount AS BIGINT) AS amount FROM events",
                                  "on_error": "skip"}},
        "sinks": {"out": {"type": "blackhole", "from": "parsed"}}}))
    return pipeline


def run(pipeline, summary, state):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(["./sluice", "run", str(pipeline), "--state-dir", str(state)], cwd=ROOT,
                          env=dict(os.environ, SLUICE_SUMMARY_JSON=str(summary)),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"sql_errors_bench: the run failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "engine": json.loads(summary.read_text())["seconds"]}


def spread(values, digits=3):
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pipelines = {name: write_input(tmp, name.replace(" ", ""), rows, every) for name, every in RATES.items()}
        summary = tmp / "summary.json"
        print(f"sql_errors_bench: {rows:,} rows, file -> SQL CAST (on_error: skip) -> blackhole, "
              f"{repeats} rounds; seconds min / median / max")
        for name in RATES:  # one warm-up each (the launcher's start-up cache)
            run(pipelines[name], summary, tmp / "state")
        runs = {name: [] for name in RATES}
        for _ in range(repeats):
            for name in RATES:
                runs[name].append(run(pipelines[name], summary, tmp / "state"))
        for name in RATES:
            cells = ", ".join(f"{key} {spread([r[key] for r in runs[name]])}" for key in ("wall", "cpu", "engine"))
            print(f"bad rows {name:>9}: {cells}")
        for name, every in RATES.items():
            if not every:
                continue
            cpu = [r["cpu"] / n["cpu"] for r, n in zip(runs[name], runs["none"])]
            engine = [r["engine"] / n["engine"] for r, n in zip(runs[name], runs["none"])]
            bad = rows // every
            extra = [(r["cpu"] - n["cpu"]) / bad * 1e6 for r, n in zip(runs[name], runs["none"])]
            print(f"{name} / none per round: cpu {statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}), "
                  f"engine {statistics.median(engine):.2f} ({min(engine):.2f}-{max(engine):.2f}); "
                  f"extra CPU per bad row {spread(extra, 0)} us")


if __name__ == "__main__":
    main()
