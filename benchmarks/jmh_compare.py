#!/usr/bin/env python3
"""Two JMH JSON results side by side: mean ± error of each benchmark in both, and after/before.

Usage: jmh_compare.py BEFORE.json AFTER.json [LABEL_BEFORE LABEL_AFTER]
Rows present in only one file are listed with a dash for the other. A ratio whose two error
intervals overlap is marked "within error".
"""
import json
import sys


def rows(path):
    out = {}
    for r in json.load(open(path)):
        params = ", ".join(f"{k}={v}" for k, v in sorted((r.get("params") or {}).items()))
        name = r["benchmark"].rsplit(".", 2)
        m = r["primaryMetric"]
        out[(f"{name[-2]}.{name[-1]}", params)] = (m["score"], m["scoreError"], m["scoreUnit"])
    return out


def main():
    before, after = rows(sys.argv[1]), rows(sys.argv[2])
    label_b, label_a = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else ("before", "after")
    print(f"| benchmark | params | {label_b} | {label_a} | {label_a} / {label_b} |")
    print("|---|---|---:|---:|---:|")
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        cell = lambda x: f"{x[0]:,.1f} ± {x[1]:,.1f} {x[2]}" if x else "–"
        ratio = "–"
        if a and b:
            overlap = abs(a[0] - b[0]) <= a[1] + b[1]
            ratio = f"{a[0] / b[0]:.2f}" + (" (within error)" if overlap else "")
        print(f"| {key[0]} | {key[1]} | {cell(b)} | {cell(a)} | {ratio} |")


if __name__ == "__main__":
    main()
