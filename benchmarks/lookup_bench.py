#!/usr/bin/env python3
"""Lookup joins against a 1 000 000-key table: a dynamic table (`tables:`) against the static side
table of the same rows, whole pipelines (issue 15).

Called by `benchmarks/run.sh lookup [BIDS [REPEATS [CHANGES]]]` after the JAR is built. Every
configuration is one `java -jar engine/target/sluice.jar run` of Nexmark bids (the generator)
LEFT JOINed on `bidder % KEYS = id` with a table of KEYS = 1 000 000 customers, into a blackhole.
The configurations run in turn, REPEATS rounds (default 3); rows/s is the engine's own summary
line (records in over the run's elapsed time), so JVM start is not part of it — but opening the
pipeline is, which for `dynamic` includes restoring the 1 M-row table; the time to the first
output record (also from the summary) shows that fixed cost apart from the per-batch rate.

  side_table        the rows as a static side table (a CSV file the core reads once when planning)
  dynamic           the rows as a dynamic table restored from the state DB (a previous run filled it
                    from the same CSV and checkpointed it; this run reads no changes)
  dynamic_changing  as dynamic, while a second source applies CHANGES one-row upserts (default 50),
                    one per poll round at the start of the run: each makes the next bid batch
                    rebuild the join's hash table over the whole table
  postgres          the rows in a PostgreSQL table (the server of ci/postgres.sh, SLUICE_PG_URL), the
                    dynamic table `backend: postgres` with a cache of max_rows = 1 000 000: each batch
                    loads the keys it lacks in one query, then keeps them
  postgres_1k       the same with a cache of 1 000 rows, smaller than the keys the bids use: the
                    oldest keys are evicted and loaded again
The postgres rows report the cache's hit rate (keys found held / keys asked) from the run's summary.
Every run is a JVM of its own, and its peak RSS is measured from outside (benchmarks/nexmark/
measure.py: ru_maxrss of the finished process, os.wait4); a row reports the largest of its rounds.
That is the engine's JVM only (not PostgreSQL's), run by `java` directly with SLUICE_JVM_FLAGS, so
with the JVM's default heap limit, not the ./sluice launcher's -Xmx256m.

Ratios are against side_table measured in the same rounds. The whole-run time of the runs that
fill and checkpoint the table (JVM start included) is reported too; the `dynamic` runs' whole
times, which include restoring the table, are in the JSON.
Writes benchmarks/results/lookup-<time>.{json,md} and prints the table.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "nexmark"))
import measure  # noqa: E402

SUMMARY = re.compile(r"in ([\d,]+) \| out ([\d,]+) \| ([\d,]+) rec/s")
FIRST = re.compile(r"first record ([\d,]+) ms after the JVM started")
LOOKUPS = re.compile(r"lookups ([\d,]+): ([\d,]+) held, ([\d,]+) loaded in ([\d,]+) round trips")
CACHE_ROWS = {"postgres": 1_000_000, "postgres_1k": 1_000}
KEYS = 1_000_000
SQL = ("SELECT B.auction, B.bidder, B.price, C.name FROM bid B "
       f"LEFT JOIN customers C ON B.bidder % {KEYS} = C.id")


def pipeline(name, bids, changes_file):
    bid = f"  bid: {{type: generator, entity: bid, count: {int(bids / 0.92)}}}\n"
    sink = "sinks:\n  out: {type: blackhole, from: enriched}\n"
    transform = f"transforms:\n  enriched:\n    type: sql\n    sql: \"{SQL}\"\n"
    if name == "side_table":
        return ("sources:\n" + bid + transform
                + "    tables:\n      customers: {path: customers.csv, header: false, schema: {id: bigint, name: string}}\n"
                + sink)
    if name in CACHE_ROWS:
        pg = os.environ["SLUICE_PG_URL"]
        table = ("tables:\n  customers:\n    type: dynamic\n    backend: postgres\n"
                 "    schema: {id: bigint, name: string}\n    key: id\n"
                 f"    max_rows: {CACHE_ROWS[name]}\n    max_bytes: 1GiB\n"
                 f"    postgres: {{url: '{pg}', user: postgres, table: lookup_customers, refresh_interval: 1h}}\n")
        return "name: lookup\nsources:\n" + bid + transform + table + sink
    source = "customers.csv" if name == "fill" else changes_file
    table = ("tables:\n  customers:\n    type: dynamic\n    from: changes\n"
             "    schema: {id: bigint, name: string}\n    key: id\n    max_bytes: 1GiB\n")
    changes = (f"  changes: {{type: file, path: {source}, header: false, schema: {{id: bigint, name: string}}, "
               f"batch_size: {8192 if name == 'fill' else 1}}}\n")
    if name == "fill":
        # Fills and checkpoints the table; the bids only keep the transform fed.
        return "name: lookup\nsources:\n" + changes + "  bid: {type: generator, entity: bid, count: 1}\n" + transform + table + sink
    return "name: lookup\nsources:\n" + changes + bid + transform + table + sink


def run(java, flags, file, state):
    """One `sluice run` to its end, measured from outside (measure.run_measured: wall time around
    the process, peak RSS by os.wait4): records in, rows/s, whole-run seconds, first record ms, the
    lookup counts, peak RSS MiB."""
    log = file.with_suffix("")
    done = measure.run_measured([java, *flags, "-jar", str(ROOT / "engine/target/sluice.jar"), "run", str(file),
                                 "--state-dir", str(state)], log, cwd=file.parent)
    stderr = log.with_suffix(".err").read_text(errors="replace")
    if done.exit_code != 0:
        sys.exit(f"lookup_bench: {file.name} failed ({done.error}):\n{stderr}")
    match = SUMMARY.search(stderr)
    if not match:
        sys.exit(f"lookup_bench: no summary line in:\n{stderr}")
    lookups = LOOKUPS.search(stderr)
    lookups = [int(g.replace(",", "")) for g in lookups.groups()] if lookups else None
    first = FIRST.search(stderr)
    first_ms = int(first.group(1).replace(",", "")) if first else None
    return (int(match.group(1).replace(",", "")), int(match.group(3).replace(",", "")), done.wall_seconds, first_ms,
            lookups, done.max_rss_mb)


def main():
    bids = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    n_changes = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    names = ["side_table", "dynamic", "dynamic_changing"]
    if os.environ.get("SLUICE_PG_URL"):
        names += list(CACHE_ROWS)
        # The same 1 000 000 customers in PostgreSQL, created once for every round.
        subprocess.run(["bash", str(ROOT / "ci/postgres.sh"), "psql", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                        "DROP TABLE IF EXISTS lookup_customers; "
                        "CREATE TABLE lookup_customers (id bigint PRIMARY KEY, name text); "
                        f"INSERT INTO lookup_customers SELECT g, 'customer-' || g FROM generate_series(0, {KEYS - 1}) g; "
                        "ANALYZE lookup_customers"], check=True)
    else:
        print("lookup_bench: SLUICE_PG_URL is not set; the postgres rows are left out", file=sys.stderr)
    lookups = {n: [] for n in CACHE_ROWS}
    results = {n: [] for n in names}
    firsts = {n: [] for n in names}
    rss = {n: [] for n in names}  # peak RSS MiB of each round's process
    fills, restores, fill_rss = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with open(tmp / "customers.csv", "w") as f:
            for k in range(KEYS):
                f.write(f"{k},customer-{k}\n")
        (tmp / "none.csv").write_text("")
        step = max(1, KEYS // max(1, n_changes))
        (tmp / "changes.csv").write_text("".join(f"{k * step},changed-{k}\n" for k in range(n_changes)))
        for round_ in range(repeats):
            for name in names:
                state = tmp / f"state-{name}-{round_}"
                if name in ("dynamic", "dynamic_changing"):
                    fill = tmp / "fill.yaml"
                    fill.write_text(pipeline("fill", bids, None))
                    _, _, seconds, _, _, peak = run(java, flags, fill, state)
                    fills.append(seconds)
                    fill_rss.append(peak)
                file = tmp / f"{name}.yaml"
                file.write_text(pipeline(name, bids, "changes.csv" if name == "dynamic_changing" else "none.csv"))
                records, rate, seconds, first_ms, counts, peak = run(java, flags, file, state)
                firsts[name].append(first_ms)
                rss[name].append(peak)
                if name == "dynamic":
                    restores.append(seconds)
                results[name].append(rate)
                hit = ""
                if name in CACHE_ROWS:
                    asked, held, loaded, trips = counts
                    lookups[name].append({"asked": asked, "held": held, "loaded": loaded, "round_trips": trips})
                    hit = f"  hit rate {100 * held / asked:.1f} % ({trips:,} round trips)"
                print(f"round {round_ + 1}: {name:17s} {records:>12,} rows  {rate:>12,} rows/s  {seconds:6.1f} s  "
                      f"first record {first_ms} ms  peak RSS {peak:,.0f} MiB{hit}", file=sys.stderr)
    med = {n: statistics.median(v) for n, v in results.items()}
    jvm = subprocess.run([java, "-version"], text=True, capture_output=True).stderr.splitlines()[0]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines = [f"JVM: {jvm}; CPU: {cpu} ({os.cpu_count()} cores)", "",
             f"bids per run: {bids:,}; table: {KEYS:,} keys; changes in dynamic_changing: {n_changes}; "
             f"{repeats} rounds; rows/s from the engine's summary (min / median / max); peak RSS of each run's "
             "JVM (ru_maxrss, PostgreSQL not included), the largest of the rounds", "",
             "| pipeline | rows/s min | median | max | ratio of medians | first record after JVM start, ms (median) "
             "| cache hit rate (min–max) | round trips to PostgreSQL (median) | peak RSS MiB (max of rounds) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        v = results[n]
        first = statistics.median(f for f in firsts[n] if f is not None)
        hits, trips = "", ""
        if n in CACHE_ROWS:
            rates = [100 * x["held"] / x["asked"] for x in lookups[n]]
            hits = f"{min(rates):.1f}–{max(rates):.1f} %"
            trips = f"{statistics.median(x['round_trips'] for x in lookups[n]):,.0f}"
        lines.append(f"| {n} | {min(v):,} | {med[n]:,.0f} | {max(v):,} | {med[n] / med['side_table']:.2f}× side_table "
                     f"| {first:,.0f} | {hits} | {trips} | {max(rss[n]):,.0f} |")
    lines += ["", f"Filling and checkpointing the 1 M-row table (whole run, JVM start included): "
              f"{min(fills):.1f}–{max(fills):.1f} s over {len(fills)} runs; peak RSS "
              f"{min(fill_rss):,.0f}–{max(fill_rss):,.0f} MiB."]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = ROOT / "benchmarks" / "results" / f"lookup-{stamp}"
    out.with_suffix(".json").write_text(json.dumps(
        {"bids": bids, "keys": KEYS, "changes": n_changes, "repeats": repeats, "rows_per_s": results,
         "fill_seconds": fills, "restore_run_seconds": restores, "first_record_ms": firsts,
         "postgres_lookups": lookups, "max_rss_mib": rss, "fill_max_rss_mib": fill_rss}, indent=2))
    text = "\n".join(lines) + "\n"
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
