#!/usr/bin/env python3
"""Where the CPU goes: the plain consume->produce loop (the ceiling) and Sluice, Kafka JSON -> SQL ->
Kafka, sampled by `perf` over whole runs and split by thread and by kind of code.

Called by `benchmarks/run.sh kafka-profile [EVENTS [REPEATS [QUERIES]]]` after the broker is up and
the JARs are built. Loads EVENTS Nexmark bids (JSON; default 3 000 000) into a 1-partition topic;
per query (default q0) runs each engine once unmeasured (it records the command line's start-up
cache, as in kafka_bench.py), then REPEATS rounds (default 3) of the ceiling and Sluice in turn,
each under `perf record -F 999` (cpu-clock: one sample per ~1 ms of CPU) with
`-XX:+DumpPerfMapAtExit` so that compiled Java is named. Every sample of the JVM's process counts,
start to exit. Prints and writes benchmarks/results/kafka-profile-<time>.{json,md}: CPU ms per
million records per thread and per kind of code, medians (min-max) over the rounds, and Sluice's
excess over the ceiling. A diagnosis, not a throughput benchmark: perf's own cost is in every run.
"""
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka_bench import QUERIES, ROOT, ceiling_command, load_bids, query_pipeline, scratch_topic, sh

PERF_JAVA_OPTS = "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"
HZ = 999

# Threads by name (Linux truncates names to 15 characters).
THREADS = (
    ("main (Sluice's lane / the loop)", lambda c: c == "java"),
    ("Sluice sink's sender", lambda c: c.startswith("sluice-kafka-si")),
    ("producer I/O", lambda c: c.startswith("kafka-producer")),
    ("JIT compilers", lambda c: c.startswith(("C1 Compiler", "C2 Compiler"))),
    ("GC", lambda c: c.startswith(("GC Thread", "G1 "))),
    ("other threads", lambda c: True),
)

# Code by where the sampled instruction lies.
KINDS = (
    ("Sluice core (native: JSON decode/encode, SQL)", lambda dso, sym: dso.endswith("libsluice_core.so")),
    ("lz4 (native)", lambda dso, sym: "liblz4" in dso),
    ("interpreter", lambda dso, sym: sym == "Interpreter"),
    ("compiled Java: Kafka clients", lambda dso, sym: "perf-" in dso and "org.apache.kafka" in sym),
    # Kafka code inlined into a dev.sluice method counts here (the loop's main is dev.sluice too).
    ("compiled Java: dev.sluice", lambda dso, sym: "perf-" in dso and "dev.sluice" in sym),
    ("compiled Java: JDK, stubs", lambda dso, sym: "perf-" in dso),
    ("JVM runtime (JIT, GC, ...)", lambda dso, sym: dso.endswith("libjvm.so")),
    ("libc", lambda dso, sym: "libc.so" in dso),
    ("kernel", lambda dso, sym: dso == "[kernel.kallsyms]"),
    ("other", lambda dso, sym: True),
)


def first(table, *args):
    return next(name for name, test in table if test(*args))


def parse_sample(line):
    """(comm, pid, sym, dso) of one `perf script -F comm,pid,ip,sym,dso` line, or None. The thread
    name and the symbol may hold spaces ("C2 CompilerThre", a Java signature); the pid is the first
    field of digits only, the address follows it, the library closes the line in parentheses."""
    head, _, dso = line.rpartition(" (")
    fields = head.split()
    pid_at = next((i for i, f in enumerate(fields) if f.isdigit()), None)
    if not dso.endswith(")") or pid_at is None or pid_at == 0 or pid_at + 1 >= len(fields):
        return None
    return " ".join(fields[:pid_at]), fields[pid_at], " ".join(fields[pid_at + 2:]), dso[:-1]


def profile(command, data, env=None):
    """Runs `command` under perf; returns {thread: ms}, {kind: ms} of the JVM's process (the one that
    left a perf map), and the wall seconds."""
    started = time.monotonic()
    result = subprocess.run(["perf", "record", "-q", "-F", str(HZ), "-o", str(data), "--", *command],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"failed under perf: {' '.join(command)}")
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,pid,ip,sym,dso"],
                            capture_output=True, text=True, check=True).stdout
    samples = [sample for sample in map(parse_sample, script.splitlines()) if sample]
    # The JVM is the process that left a perf map (the launcher's shell and its tools did not).
    pids = {pid for _, pid, _, dso in samples if dso.startswith("/tmp/perf-")}
    threads, kinds = collections.Counter(), collections.Counter()
    ms_per_sample = 1000 / HZ
    for comm, pid, sym, dso in samples:
        if pid in pids:
            threads[first(THREADS, comm)] += ms_per_sample
            kinds[first(KINDS, dso, sym)] += ms_per_sample
    for pid in pids:
        Path(f"/tmp/perf-{pid}.map").unlink(missing_ok=True)
    data.unlink(missing_ok=True)
    return dict(threads), dict(kinds), wall


def main():
    if shutil.which("perf") is None:
        raise SystemExit("kafka_profile_bench.py: needs perf (Debian: apt-get install linux-perf)")
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 3_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    chosen = sys.argv[3].split(",") if len(sys.argv) > 3 else ["q0"]
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-kafka-profile-"))
    env = dict(os.environ, SLUICE_JAVA_OPTS=(os.environ.get("SLUICE_JAVA_OPTS", "") + " " + PERF_JAVA_OPTS).strip())
    os.environ["SLUICE_JAVA_OPTS"] = env["SLUICE_JAVA_OPTS"]  # ceiling_command reads it from here
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), "?")
    jvm = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    report = {"events": None, "repeats": repeats, "hz": HZ, "java_opts": env["SLUICE_JAVA_OPTS"],
              "machine": f"{cpu} ({os.cpu_count()} cores); {jvm}", "queries": {}}
    with scratch_topic(f"bench-profile-bids-{stamp.lower()}") as topic:
        n = load_bids(servers, topic, events, work)
        report["events"] = n
        for name in chosen:
            runs = {"ceiling": [], "Sluice": []}
            pipeline = work / f"{name}.yaml"
            for i in range(repeats + 1):  # run 0 of each records its start-up cache and is not kept
                for engine in ("ceiling", "Sluice"):
                    with scratch_topic(f"bench-profile-out-{stamp.lower()}-{name}-{engine.lower()}-{i}") as out:
                        if engine == "ceiling":
                            command = ceiling_command(java, work, servers, topic, out, n)
                        else:
                            query_pipeline(pipeline, "bench-profile", servers, topic, f"bench-profile-{stamp}-{name}-{i}",
                                           QUERIES[name], out)
                            shutil.rmtree(work / "state", ignore_errors=True)
                            command = ["./sluice", "run", str(pipeline), "--state-dir", str(work / "state")]
                        threads, kinds, wall = profile(command, work / "perf.data", env)
                    if i > 0:
                        runs[engine].append({"threads": threads, "kinds": kinds, "wall_seconds": wall})
                    print(f"{name} {engine} run {i}: {sum(kinds.values()) / 1000:.2f} CPU-s sampled, {wall:.1f} s wall"
                          + ("" if i else " (records the start-up cache; not kept)"), file=sys.stderr)
            report["queries"][name] = runs
    out = ROOT / "benchmarks/results" / f"kafka-profile-{stamp}"
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    text = table(report)
    out.with_suffix(".md").write_text(text)
    print(text)


def cell(values, per):
    values = [v / per for v in values]
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"


def table(report):
    per = report["events"] / 1e6
    lines = [f"CPU ms per million records, sampled by perf at {report['hz']} Hz over whole runs (JVM start to exit), "
             f"{report['events']:,} bids, {report['repeats']} rounds, medians (min–max); SLUICE_JAVA_OPTS="
             f"`{report['java_opts']}` for both. {report.get('machine', '')}", ""]
    for query, runs in report["queries"].items():
        for part, names in (("threads", [t for t, _ in THREADS]), ("kinds", [k for k, _ in KINDS])):
            lines += [f"**{query}, by {'thread' if part == 'threads' else 'kind of code'}**", "",
                      "| | ceiling | Sluice | Sluice − ceiling (medians) |", "|---|---:|---:|---:|"]
            for name in [*names, "total"]:
                def values(engine):
                    return [sum(r[part].values()) if name == "total" else r[part].get(name, 0) for r in runs[engine]]
                c, s = values("ceiling"), values("Sluice")
                lines.append(f"| {name} | {cell(c, per)} | {cell(s, per)} | "
                             f"{(statistics.median(s) - statistics.median(c)) / per:+,.0f} |")
            lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
