#!/usr/bin/env python3
"""What the escape hatches cost against SQL doing the same work: `./sluice run` of EVENTS Nexmark
events (default 2 000 000; 46 of 50 are bids) from the generator -> a transform that keeps
auction and bidder and doubles the price -> blackhole, where the transform is
  sql     SELECT auction, bidder, price * 2 AS price2 FROM bid
  script  the script transform: function process(b) { return {auction: b.auction, ...}; }
  http    the http transform against BidHandler (a JDK HttpServer in its own JVM, Jackson, 4
          threads; started once, on 127.0.0.1), batch_size 1000, max_in_flight 4.
REPEATS rounds (default 3) run the three in turn, after one unmeasured run each (the launcher's
start-up cache). Per run: the engine's seconds (the run summary: planning to the last batch),
process wall and CPU (the child's rusage) and, for http, the handler's CPU over the run (from
/proc). Prints min / median / max, rows per engine-second, CPU microseconds per row (engine
process, and with the handler's) and each per-round ratio against sql.

    benchmarks/run.sh transforms [EVENTS [REPEATS]]
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
SCRIPT = "function process(b) { return {auction: b.auction, bidder: b.bidder, price2: b.price * 2}; }"


def pipeline(directory, name, events, transform):
    path = directory / f"{name}.json"
    path.write_text(json.dumps({
        "name": f"transforms-{name}",
        "sources": {"bid": {"type": "generator", "entity": "bid", "count": events, "seed": 1}},
        "transforms": {"t": transform},
        "sinks": {"out": {"type": "blackhole", "from": "t"}}}))
    return path


def process_cpu(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(path, summary, handler_pid=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    handler_before = process_cpu(handler_pid) if handler_pid else 0.0
    started = time.monotonic()
    done = subprocess.run(["./sluice", "run", str(path)], cwd=ROOT,
                          env=dict(os.environ, SLUICE_SUMMARY_JSON=str(summary)),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"transforms_bench: {path.name} failed:\n{done.stderr}")
    result = json.loads(summary.read_text())
    return {"wall": wall, "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "engine": result["seconds"], "rows": result["records_in"],
            "handler_cpu": (process_cpu(handler_pid) - handler_before) if handler_pid else 0.0}


def spread(values, digits=3):
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    handler = subprocess.Popen([java, "-cp", str(ROOT / "benchmarks/target/benchmarks.jar"),
                                "dev.sluice.benchmarks.BidHandler", "4"], stdout=subprocess.PIPE, text=True)
    try:
        port = int(handler.stdout.readline())
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            variants = {
                "sql": pipeline(tmp, "sql", events, {
                    "type": "sql", "sql": "SELECT auction, bidder, price * 2 AS price2 FROM bid"}),
                "script": pipeline(tmp, "script", events, {
                    "type": "script", "from": "bid", "script": SCRIPT,
                    "schema": {"auction": "bigint", "bidder": "bigint", "price2": "bigint"}}),
                "http": pipeline(tmp, "http", events, {
                    "type": "http", "from": "bid", "url": f"http://127.0.0.1:{port}/bids", "batch_size": 1000,
                    "max_in_flight": 4, "schema": {"auction": "bigint", "bidder": "bigint", "price2": "bigint"}}),
            }
            summary = tmp / "summary.json"
            print(f"transforms_bench: {events:,} events (generator -> transform -> blackhole), {repeats} rounds; "
                  f"min / median / max")
            for name, path in variants.items():  # one warm-up each
                run(path, summary, handler.pid if name == "http" else None)
            runs = {name: [] for name in variants}
            for _ in range(repeats):
                for name, path in variants.items():
                    runs[name].append(run(path, summary, handler.pid if name == "http" else None))
            for name in variants:
                rs = runs[name]
                rate = [r["rows"] / r["engine"] for r in rs]
                cpu_us = [r["cpu"] / r["rows"] * 1e6 for r in rs]
                all_us = [(r["cpu"] + r["handler_cpu"]) / r["rows"] * 1e6 for r in rs]
                print(f"{name:>6}: rows {rs[0]['rows']:,}; engine s {spread([r['engine'] for r in rs])}; "
                      f"wall s {spread([r['wall'] for r in rs])}; rows per engine-s {spread(rate, 0)}; "
                      f"CPU us per row {spread(cpu_us, 2)} (with the handler's {spread(all_us, 2)})")
            for name in ("script", "http"):
                engine = [r["engine"] / s["engine"] for r, s in zip(runs[name], runs["sql"])]
                cpu = [(r["cpu"] + r["handler_cpu"]) / s["cpu"] for r, s in zip(runs[name], runs["sql"])]
                print(f"{name} / sql per round: engine time {statistics.median(engine):.1f}x "
                      f"({min(engine):.1f}-{max(engine):.1f}), CPU {statistics.median(cpu):.1f}x "
                      f"({min(cpu):.1f}-{max(cpu):.1f})")
    finally:
        handler.kill()
        handler.wait()


if __name__ == "__main__":
    main()
