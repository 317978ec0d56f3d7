#!/usr/bin/env python3
"""The native core's JSON codec, two commits against each other, in alternating runs.

    benchmarks/run.sh codec-ab REV_A REV_B [PAIRS [ROWS]]

Builds the `decode_timing` test binary of sluice-core at each commit (a git worktree under
target/codec-ab/, sharing the cargo target directory, so only the core is recompiled) with this
checkout's `rust/core/tests/decode_timing.rs` copied in: it uses only the core's public API, so one
file times older commits too. Then runs PAIRS pairs (default 8) of each binary, ABBA order, for
`encode_records` (JSON lines with record offsets, as the Kafka sink asks) and for the flat JSON
decoder (the Kafka source's path), over ROWS generated Nexmark bids (default 1 000 000), and takes
each run's best of 5 rounds in million records per second. Single runs on a shared 2-core machine
scatter by up to 2x, so only the per-pair ratios B / A are compared: their median (min-max) and in
how many pairs B was faster. Writes results/codec-ab-<UTC>.md and .json.
"""
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "codec-ab")
TIMING_TEST = os.path.join("rust", "core", "tests", "decode_timing.rs")
CASES = [
    # (name, test filter, line the test prints, extra environment)
    ("encode_records", "timing_record_encoder_over_bids", "encode_records:", {}),
    ("flat JSON decode", "timing_record_decoder_over_bids", "flat fast path:", {"SLUICE_TIMING_FLAT_ONLY": "1"}),
]
RATE = re.compile(r"max ([0-9.]+) M records/s")


def build(rev):
    """The path of the decode_timing test binary of `rev`, copied out of the target directory."""
    sha = subprocess.check_output(["git", "-C", ROOT, "rev-parse", "--short=10", rev], text=True).strip()
    tree = os.path.join(WORK, sha)
    if not os.path.isdir(tree):
        subprocess.check_call(["git", "-C", ROOT, "worktree", "add", "--detach", "-f", tree, sha], stdout=subprocess.DEVNULL)
    shutil.copy(os.path.join(ROOT, TIMING_TEST), os.path.join(tree, TIMING_TEST))
    # Both commits' sluice-core share one fingerprint in the shared target directory: without a
    # fresh mtime cargo may take the other commit's build as up to date and hand back its binary.
    for folder, _, files in os.walk(os.path.join(tree, "rust", "core", "src")):
        for name in files:
            os.utime(os.path.join(folder, name))
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", os.path.join(os.path.expanduser("~"), ".cache", "sluice", "cargo-target"))
    out = subprocess.check_output(
        ["cargo", "test", "--release", "-p", "sluice-core", "--test", "decode_timing", "--no-run", "--message-format=json"],
        cwd=os.path.join(tree, "rust"), env=env, text=True)
    executable = None
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["name"] == "decode_timing":
            executable = message["executable"]
    if not executable:
        sys.exit(f"codec_ab: no decode_timing binary built at {rev}")
    binary = os.path.join(WORK, f"decode_timing-{sha}")
    shutil.copy(executable, binary)
    return sha, binary


def run(binary, case, rows):
    name, test, line, extra = case
    env = dict(os.environ, SLUICE_TIMING_ROWS=str(rows), SLUICE_TIMING_ROUNDS="5", **extra)
    out = subprocess.run([binary, test, "--exact", "--ignored", "--nocapture"], env=env, text=True, capture_output=True, check=True).stdout
    for text in out.splitlines():
        if text.startswith(line):
            return float(RATE.search(text).group(1))
    raise RuntimeError(f"codec_ab: {binary} printed no '{line}' line:\n{out}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rev_a, rev_b = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
    os.makedirs(WORK, exist_ok=True)
    (sha_a, bin_a), (sha_b, bin_b) = build(rev_a), build(rev_b)
    results = {}
    for case in CASES:
        runs = []
        for i in range(pairs):
            order = [("A", bin_a), ("B", bin_b)] if i % 2 == 0 else [("B", bin_b), ("A", bin_a)]
            rates = {label: run(binary, case, rows) for label, binary in order}
            runs.append(rates)
            print(f"{case[0]} pair {i + 1}: A {rates['A']:.3f} B {rates['B']:.3f} M records/s", flush=True)
        ratios = [r["B"] / r["A"] for r in runs]
        results[case[0]] = {
            "A": [r["A"] for r in runs], "B": [r["B"] for r in runs], "ratios": ratios,
            "median_A": statistics.median(r["A"] for r in runs), "median_B": statistics.median(r["B"] for r in runs),
            "median_ratio": statistics.median(ratios), "min_ratio": min(ratios), "max_ratio": max(ratios),
            "b_faster": sum(r > 1 for r in ratios),
        }
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    lines = [
        f"A = {rev_a} ({sha_a}), B = {rev_b} ({sha_b}); {rows:,} Nexmark bids, {pairs} pairs in ABBA order, "
        f"each run the best of 5 rounds; {cpu}, {os.cpu_count()} cores.",
        "",
        "| codec path | A, M records/s (median) | B | B / A per pair, median (min–max) | B faster in |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['median_A']:.3f} | {r['median_B']:.3f} | {r['median_ratio']:.2f} "
                     f"({r['min_ratio']:.2f}–{r['max_ratio']:.2f}) | {r['b_faster']} of {pairs} |")
    report = "\n".join(lines) + "\n"
    print(report)
    base = os.path.join(ROOT, "benchmarks", "results", f"codec-ab-{stamp}")
    with open(base + ".md", "w") as f:
        f.write(report)
    with open(base + ".json", "w") as f:
        json.dump({"A": {"rev": rev_a, "sha": sha_a}, "B": {"rev": rev_b, "sha": sha_b}, "rows": rows, "pairs": pairs,
                   "cpu": cpu, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
