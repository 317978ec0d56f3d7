#!/usr/bin/env python3
"""Summarizes ab.py's JSON lines: per query and engine the median (min-max) of each measure over
rounds 1..N, and per-round paired ratios. "x DataFusion alone" is DataFusion alone's engine
seconds over Sluice's (issue 16's measure: 1.0 = as fast). The two Sluice modes compared are
aot and cds unless AB_MODES=A,B names others (as ab.py's). Usage: summarize.py FILE.jsonl..."""
import json
import math
import os
import statistics
import sys
from collections import defaultdict


def cell(values, digits=3):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def sign_test(wins, n):
    """Two-sided binomial p of `wins` or a more lopsided split of n fair coin tosses."""
    k = min(wins, n - wins)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def main():
    a, b = (f"sluice-{m}" for m in os.environ.get("AB_MODES", "aot,cds").split(","))
    rows = [dict(json.loads(l), file=i) for i, f in enumerate(sys.argv[1:]) for l in open(f) if l.strip()]
    by = defaultdict(dict)  # (query, (file, round)) -> engine -> row
    for r in rows:
        by[(r["query"], (r["file"], r["round"]))][r["engine"]] = r
    queries = list(dict.fromkeys(r["query"] for r in rows))
    print("| query | engine | engine s | wall s | CPU s | peak RSS MiB | x DataFusion alone (engine s) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for q in queries:
        rounds = [v for (qq, n), v in sorted(by.items()) if qq == q and n[1] > 0 and len(v) == 3]
        for e in ("datafusion-alone", a, b):
            vs = {k: [r[e][k] for r in rounds] for k in ("engine_seconds", "wall_seconds", "cpu_seconds", "peak_rss_mib")}
            vs_alone = [r["datafusion-alone"]["engine_seconds"] / r[e]["engine_seconds"] for r in rounds]
            print(f"| {q} | {e} | {cell(vs['engine_seconds'])} | {cell(vs['wall_seconds'])} | {cell(vs['cpu_seconds'])} "
                  f"| {cell(vs['peak_rss_mib'], 0)} | {cell(vs_alone, 2) if e != 'datafusion-alone' else '1'} |")
    print()
    print(f"Paired per round, {a} / {b} (below 1: {a} is faster or cheaper):")
    print(f"| query | rounds | engine s | wall s | CPU s | rounds {a} faster (engine) |")
    print("|---|---:|---:|---:|---:|---:|")
    for q in queries:
        rounds = [v for (qq, n), v in sorted(by.items()) if qq == q and n[1] > 0 and len(v) == 3]
        ratio = {k: [r[a][k] / r[b][k] for r in rounds] for k in ("engine_seconds", "wall_seconds", "cpu_seconds")}
        faster = sum(x < 1 for x in ratio["engine_seconds"])
        print(f"| {q} | {len(rounds)} | {cell(ratio['engine_seconds'])} | {cell(ratio['wall_seconds'])} | {cell(ratio['cpu_seconds'])} | {faster} of {len(rounds)} |")
    pooled = [v for (_, n), v in sorted(by.items()) if n[1] > 0 and len(v) == 3]
    ratios = [r[a]["engine_seconds"] / r[b]["engine_seconds"] for r in pooled]
    wins = sum(x < 1 for x in ratios)
    print(f"| all | {len(pooled)} | {cell(ratios)} | | | {wins} of {len(pooled)} (two-sided sign test p = {sign_test(wins, len(pooled)):.3f}) |")
    cold = [r for r in rows if r["round"] == 0]
    print()
    print("First run of each command line (writes its cache; round 0): " + "; ".join(
        f"{r['query']} {r['engine']} wall {r['wall_seconds']:.2f} s, CPU {r['cpu_seconds']:.2f} s, peak RSS {r['peak_rss_mib']:.0f} MiB" for r in cold))


if __name__ == "__main__":
    main()
