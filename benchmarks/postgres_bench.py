#!/usr/bin/env python3
"""Rows/s into PostgreSQL: the postgres sink against a plain JDBC batched INSERT and a raw COPY of
the same rows, in the same run (issue 15).

Called by `benchmarks/run.sh postgres [ROWS [REPEATS]]` after the JAR is built and the project's
server (ci/postgres.sh) is up. ROWS (default 1 000 000) rows of (id bigint, name text, amount
double, at timestamp) are written to a CSV file once; for each batch size (1 000 and 10 000) and
round (REPEATS, default 3), each writer writes them into table sink_bench:

  insert   into an empty table (primary key id)
  upsert   the same keys again with other values, into the table the insert filled

  sluice   `java -jar engine/target/sluice.jar run`: a file source reading the CSV into the postgres
           sink (batch_size = the batch size, on_conflict: update, the default); rows/s is the
           engine's own summary (records over the run's elapsed time: reading and decoding the CSV
           included, JVM start not)
  jdbc     benchmarks/postgres/JdbcBaseline.java: PreparedStatement.addBatch, executeBatch every
           batch, reWriteBatchedInserts=true; plain INSERT for insert, ON CONFLICT (id) DO UPDATE
           for upsert; one transaction
  copy     the same program's COPY FROM STDIN (csv), one COPY per batch (insert only: COPY cannot
           upsert)

The baselines time themselves from the first line read to the commit. Ratios are of medians of
the same run. Every write is a JVM of its own, and its peak RSS is measured from outside
(benchmarks/nexmark/measure.py: ru_maxrss of the finished process, os.wait4); a row reports the
largest of its rounds. That is the writer's JVM only, not the server's. Both run `java` directly
with SLUICE_JVM_FLAGS, so with the JVM's default heap limit, not the ./sluice launcher's
-Xmx256m. JdbcBaseline.java is compiled once beforehand (javac), so the baselines' RSS holds no
in-memory compilation of the source file. Writes benchmarks/results/postgres-<time>.{json,md} and
prints the table.
"""
import glob
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
BASELINE = re.compile(r"rows/s (\d+)")
BATCHES = [1_000, 10_000]


def psql(sql):
    subprocess.run(["bash", str(ROOT / "ci/postgres.sh"), "psql", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql],
                   check=True, stdout=subprocess.DEVNULL)


def fresh_table():
    psql("DROP TABLE IF EXISTS sink_bench; "
         "CREATE TABLE sink_bench (id bigint PRIMARY KEY, name text, amount double precision, at timestamp)")


def count():
    out = subprocess.run(["bash", str(ROOT / "ci/postgres.sh"), "psql", "-At", "-c", "SELECT count(*) FROM sink_bench"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


def measured(command, log_prefix, cwd=None):
    """Runs one process to its end, measured from outside (measure.run_measured: os.wait4, so
    ru_maxrss is the JVM's own peak); returns the Run, its stdout and its stderr."""
    run = measure.run_measured(command, log_prefix, cwd=cwd)
    out = log_prefix.with_suffix(".out").read_text(errors="replace")
    err = log_prefix.with_suffix(".err").read_text(errors="replace")
    return run, out, err


def sluice(java, flags, tmp, csv, batch, url):
    file = tmp / "sink.yaml"
    file.write_text(f"""name: sinkbench
sources:
  rows: {{type: file, path: {csv}, header: false, schema: {{id: bigint, name: string, amount: double, at: timestamp}}}}
sinks:
  out: {{type: postgres, from: rows, url: '{url}', user: postgres, table: sink_bench, primary_key: [id],
         batch_size: {batch}, batch_flush_interval: 1h}}
""")
    run, _, err = measured([java, *flags, "-jar", str(ROOT / "engine/target/sluice.jar"), "run", str(file),
                            "--state-dir", str(tmp / f"state-{time.monotonic_ns()}")], tmp / "sluice", cwd=tmp)
    match = SUMMARY.search(err)
    if run.exit_code != 0 or not match:
        sys.exit(f"postgres_bench: the sluice run failed ({run.error}):\n{err}")
    return int(match.group(3).replace(",", "")), run.max_rss_mb


def baseline(java, classpath, tmp, mode, batch, csv, url):
    run, out, err = measured([java, "-cp", classpath, "JdbcBaseline", mode, str(batch), str(csv), url],
                             tmp / "baseline")
    match = BASELINE.search(out)
    if run.exit_code != 0 or not match:
        sys.exit(f"postgres_bench: JdbcBaseline {mode} failed ({run.error}):\n{out}{err}")
    return int(match.group(1)), run.max_rss_mb


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    url = os.environ["SLUICE_PG_URL"]
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    jars = sorted(glob.glob(os.path.expanduser("~/.m2/repository/org/postgresql/postgresql/*/postgresql-*.jar")))
    if not jars:
        sys.exit("postgres_bench: no PostgreSQL JDBC driver in ~/.m2 (the build downloads it)")
    jar = jars[-1]
    results = {}  # (batch, writer, phase) -> [rows/s]
    rss = {}  # (batch, writer, phase) -> [peak RSS MiB of each round's process]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # The baselines compiled once, so their JVMs run the class and their RSS is the program's.
        javac = os.path.join(os.environ["JAVA_HOME"], "bin", "javac")
        subprocess.run([javac, "-cp", jar, "-d", str(tmp / "classes"), str(ROOT / "benchmarks/postgres/JdbcBaseline.java")],
                       check=True)
        classpath = f"{jar}{os.pathsep}{tmp / 'classes'}"
        csvs = {}
        for phase, name in (("insert", "n"), ("upsert", "u")):
            csvs[phase] = tmp / f"{phase}.csv"
            with open(csvs[phase], "w") as f:
                for i in range(rows):
                    f.write(f"{i},{name}{i},{i / 4},2026-12-0{1 + i % 9}T{i % 24:02d}:{i % 60:02d}:00\n")
        for round_ in range(repeats):
            for batch in BATCHES:
                for writer in ("sluice", "jdbc", "copy"):
                    fresh_table()
                    for phase in ("insert", "upsert"):
                        if writer == "copy" and phase == "upsert":
                            continue
                        if writer == "sluice":
                            rate, peak = sluice(java, flags, tmp, csvs[phase], batch, url)
                        else:
                            mode = "copy" if writer == "copy" else phase
                            rate, peak = baseline(java, classpath, tmp, mode, batch, csvs[phase], url)
                        written = count()
                        if written != rows:
                            sys.exit(f"postgres_bench: {writer} {phase} left {written} rows, not {rows}")
                        results.setdefault((batch, writer, phase), []).append(rate)
                        rss.setdefault((batch, writer, phase), []).append(peak)
                        print(f"round {round_ + 1}: batch {batch:>6,} {writer:6s} {phase:6s} {rate:>10,} rows/s "
                              f"peak RSS {peak:,.0f} MiB", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in results.items()}
    jvm = subprocess.run([java, "-version"], text=True, capture_output=True).stderr.splitlines()[0]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    server = subprocess.run(["bash", str(ROOT / "ci/postgres.sh"), "psql", "-At", "-c", "SHOW server_version"],
                            capture_output=True, text=True).stdout.strip()
    lines = [f"JVM: {jvm}; CPU: {cpu} ({os.cpu_count()} cores); PostgreSQL {server} on the same machine", "",
             f"{rows:,} rows per write; {repeats} rounds; rows/s min / median / max; peak RSS of each write's JVM "
             "(ru_maxrss, the server not included), the largest of the rounds", "",
             "| batch | phase | writer | rows/s min | median | max | sluice ÷ this (medians) | peak RSS MiB (max of rounds) |",
             "|---:|---|---|---:|---:|---:|---:|---:|"]
    for batch in BATCHES:
        for phase in ("insert", "upsert"):
            for writer in ("sluice", "jdbc", "copy"):
                v = results.get((batch, writer, phase))
                if not v:
                    continue
                ratio = "" if writer == "sluice" else f"{med[(batch, 'sluice', phase)] / med[(batch, writer, phase)]:.2f}×"
                lines.append(f"| {batch:,} | {phase} | {writer} | {min(v):,} | {med[(batch, writer, phase)]:,.0f} | "
                             f"{max(v):,} | {ratio} | {max(rss[(batch, writer, phase)]):,.0f} |")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = ROOT / "benchmarks" / "results" / f"postgres-{stamp}"
    out.with_suffix(".json").write_text(json.dumps(
        {"rows": rows, "repeats": repeats, "server": server,
         "rows_per_s": {f"{b}/{w}/{p}": v for (b, w, p), v in results.items()},
         "max_rss_mib": {f"{b}/{w}/{p}": v for (b, w, p), v in rss.items()}}, indent=2))
    text = "\n".join(lines) + "\n"
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
