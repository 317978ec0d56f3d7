#!/usr/bin/env python3
"""Turns a JMH JSON result file into a Markdown table: benchmark, parameters, mean ± error."""
import json
import sys


def main(path: str) -> None:
    with open(path) as f:
        results = json.load(f)
    print("| benchmark | params | mean | ± error (99.9 %) | unit |")
    print("|---|---|---:|---:|---|")
    for r in results:
        name = r["benchmark"].rsplit(".", 2)[-2:]
        params = ", ".join(f"{k}={v}" for k, v in (r.get("params") or {}).items())
        m = r["primaryMetric"]
        error = m.get("scoreError")
        error_text = f"{error:,.1f}" if isinstance(error, (int, float)) and error == error else "n/a"
        print(f"| {'.'.join(name)} | {params} | {m['score']:,.1f} | {error_text} | {m['scoreUnit']} |")


if __name__ == "__main__":
    main(sys.argv[1])
