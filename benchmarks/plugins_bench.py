#!/usr/bin/env python3
"""Whole pipelines with native plugin stages against their built-in equivalents (issue 12).

Called by `benchmarks/run.sh plugins [ROWS [REPEATS]]` after the JAR and the example plugins
are built. Each configuration is one `java -jar engine/target/sluice.jar run` of a bounded
pipeline into a blackhole; the configurations run in turn, REPEATS rounds (default 3), so that
machine noise spreads over all of them. Rows/s is the engine's own summary line (records in over
the run's elapsed time, after the JVM started), so JVM start is not part of it.

  generator          Nexmark bid generator (built-in, 7 columns) -> blackhole
  plugin_source      the `sequence` plugin source (2 columns: id, label) -> blackhole
  sql_upper          sequence -> SQL `upper(label)` -> blackhole
  plugin_upper       sequence -> the `uppercase` plugin transform -> blackhole

Ratios are against the built-in counterpart measured in the same rounds: plugin_source against
generator (different rows: the generator's are wider), plugin_upper against sql_upper.
Writes benchmarks/results/plugins-<time>.{json,md} and prints the table.
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
LIB = ROOT / "engine" / "target" / "plugins" / "libsluice_examples.so"
SUMMARY = re.compile(r"in ([\d,]+) \| out ([\d,]+) \| ([\d,]+) rec/s")


def pipeline(name, rows):
    seq = f"""sources:
  seq:
    type: plugin
    path: {LIB}
    component: sequence
    batch_size: 8192
    options: {{count: {rows}, rows_per_poll: 8192}}
"""
    allowed = f"plugins:\n  allowed_dirs: [{LIB.parent}]\n"
    if name == "generator":
        # ~92 % of Nexmark events are bids: scale the count so about `rows` bids come out.
        return f"""sources:
  bid: {{type: generator, entity: bid, count: {int(rows / 0.92)}}}
sinks:
  out: {{type: blackhole, from: bid}}
"""
    if name == "plugin_source":
        return allowed + seq + "sinks:\n  out: {type: blackhole, from: seq}\n"
    if name == "sql_upper":
        return allowed + seq + """transforms:
  up: {type: sql, sql: "SELECT id, upper(label) AS label FROM seq"}
sinks:
  out: {type: blackhole, from: up}
"""
    if name == "plugin_upper":
        return allowed + seq + f"""transforms:
  up: {{type: plugin, from: seq, path: {LIB}, component: uppercase, options: {{columns: [label]}}}}
sinks:
  out: {{type: blackhole, from: up}}
"""
    raise ValueError(name)


def run(java, flags, file, state):
    done = subprocess.run([java, *flags, "-jar", str(ROOT / "engine/target/sluice.jar"), "run", str(file),
                           "--state-dir", str(state)], cwd=ROOT, text=True, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"plugins_bench: {file.name} failed:\n{done.stderr}")
    match = SUMMARY.search(done.stderr)
    if not match:
        sys.exit(f"plugins_bench: no summary line in:\n{done.stderr}")
    return int(match.group(1).replace(",", "")), int(match.group(3).replace(",", ""))


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    names = ["generator", "plugin_source", "sql_upper", "plugin_upper"]
    results = {n: [] for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for round_ in range(repeats):
            for name in names:
                file = tmp / f"{name}.yaml"
                file.write_text(pipeline(name, rows))
                records, rate = run(java, flags, file, tmp / f"state-{name}-{round_}")
                results[name].append(rate)
                print(f"round {round_ + 1}: {name:14s} {records:>12,} rows  {rate:>12,} rows/s", file=sys.stderr)
    med = {n: statistics.median(v) for n, v in results.items()}
    baseline = {"generator": "generator", "plugin_source": "generator", "sql_upper": "sql_upper",
                "plugin_upper": "sql_upper"}
    jvm = subprocess.run([java, "-version"], text=True, capture_output=True).stderr.splitlines()[0]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines = [f"JVM: {jvm}; CPU: {cpu} ({os.cpu_count()} cores)", "",
             f"rows per run: {rows:,}; {repeats} rounds; rows/s from the engine's summary (min / median / max)", "",
             "| pipeline | rows/s min | median | max | ratio of medians |", "|---|---|---|---|---|"]
    for n in names:
        v = results[n]
        ratio = med[n] / med[baseline[n]]
        lines.append(f"| {n} | {min(v):,} | {med[n]:,.0f} | {max(v):,} | {ratio:.2f}× {baseline[n]} |")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = ROOT / "benchmarks" / "results" / f"plugins-{stamp}"
    out.with_suffix(".json").write_text(json.dumps({"rows": rows, "repeats": repeats, "rows_per_s": results}, indent=2))
    text = "\n".join(lines) + "\n"
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
