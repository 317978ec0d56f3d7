#!/usr/bin/env python3
"""Kafka JSON -> SQL -> Kafka on one machine, side by side with the I/O ceiling.

Called by `benchmarks/run.sh kafka [EVENTS]` after the broker is up and the JARs are built.
Loads EVENTS Nexmark bids (JSON, from Sluice's own generator) into a topic once, then for each
query runs (a) a plain kafka-clients consume->produce loop of the same records with the same
client settings and (b) `sluice run` of kafka source -> SQL -> kafka sink, bounded to the
topic's end, alternating the two KAFKA_BENCH_REPEATS times each (default 3). Reports the medians
of events/s, MB/s, process CPU seconds, events per CPU-second and the broker's CPU, and
Sluice/baseline ratios of the medians from the same run, whole-process (JVM start included) and
over the steady window (benchmarks/nexmark/measure.py: the middle 60 % of the bytes each process
read), with each process's peak RSS. The ceiling runs with the client settings Sluice starts from
(KafkaClientDefaults) and the JVM flags the launcher gives Sluice (JIT threshold, heap cap, a
start-up cache of its own recorded by an unmeasured first run); Sluice's command line gets
its cache the same way. Then measures resume-to-first-record on a
quiet 100-event topic, FIRST_RECORD_RUNS times (default 7) through the launcher's fast path for
`run` and through picocli. Writes JSON and Markdown to benchmarks/results/.
"""
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "nexmark"))
import measure  # noqa: E402

# The JVM flags ./sluice gives Sluice besides its start-up cache; the ceiling gets the same
# (checked against the launcher below, so the two cannot drift apart).
LAUNCHER_FLAGS = ["-XX:CompileThresholdScaling=5", "-Xmx256m"]
QUERIES = {
    "q0": "SELECT auction, bidder, price, dateTime, extra FROM bid",
    "q1": "SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q22": "SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, "
           "split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid",
}
BID_SCHEMA = ("{auction: bigint, bidder: bigint, price: bigint, channel: string, url: string, "
              "dateTime: timestamp(ms), extra: string}")


def sh(*args, env=None, capture=True):
    result = subprocess.run(args, cwd=ROOT, env=env, text=True, capture_output=capture)
    if result.returncode != 0:
        sys.stderr.write(result.stdout or "")
        sys.stderr.write(result.stderr or "")
        raise SystemExit(f"failed: {' '.join(args)}")
    return result.stdout


@contextlib.contextmanager
def scratch_topic(name, partitions=1):
    """A topic that lives for one block: a run's output (10 M records are ~0.6 GB on disk, and a
    benchmark writes dozens of them), or the input of one benchmark."""
    sh("bash", "ci/kafka.sh", "topics", "create", name, "--partitions", str(partitions))
    try:
        yield name
    finally:
        subprocess.run(["bash", "ci/kafka.sh", "topics", "delete", name], cwd=ROOT, capture_output=True)


def broker_cpu_seconds():
    pid = (ROOT / "target/kafka/broker.pid").read_text().strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def launcher_flags():
    launcher = (ROOT / "sluice").read_text()
    for flag in LAUNCHER_FLAGS:
        if flag not in launcher:
            raise SystemExit(f"kafka_bench.py: ./sluice no longer passes {flag}; update LAUNCHER_FLAGS")
    return LAUNCHER_FLAGS


def ceiling_command(java, work, servers, topic, out, count, settings=()):
    """The plain consume->produce loop as a JVM started the way ./sluice starts Sluice's, with a
    start-up cache of its own under `work` (the first run records it)."""
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    java_opts = os.environ.get("SLUICE_JAVA_OPTS", "").split()  # after the launcher's own, as ./sluice puts them
    return [java, *flags, *launcher_flags(), *startup_cache_flags(java, work / "ceiling"), *java_opts,
            "-cp", str(ROOT / "benchmarks/target/benchmarks.jar"),
            "dev.sluice.benchmarks.KafkaCopyBaseline", servers, topic, out, str(count), *settings]


def startup_cache_flags(java, stem: Path):
    """The start-up cache as ./sluice gives one to a `run`: on Java 25+ an AOT cache (written at the
    exit of the first run, then mapped with eager compilation), before that (or with SLUICE_CDS=cds) a dynamic
    class-data archive; none with SLUICE_CDS=off."""
    to_stderr = ["-XX:+DisplayVMOutputToStderr"]  # as ./sluice: the JVM's own output off stdout
    mode = os.environ.get("SLUICE_CDS", "on")
    if mode == "off":
        return to_stderr
    quiet = [*to_stderr, "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    release = Path(java).resolve().parent.parent / "release"
    major = next((int(l.split('"')[1].split(".")[0]) for l in release.read_text().splitlines()
                  if l.startswith("JAVA_VERSION=")), 0) if release.exists() else 0
    if major < 25 or mode == "cds":
        return [*quiet, "-XX:+AutoCreateSharedArchive", f"-XX:SharedArchiveFile={stem}.jsa"]
    cache = stem.with_suffix(".aot")
    if cache.exists():  # mapped, compiling what it has profiles for at once, as ./sluice does
        return [*quiet, "-Xlog:aot=off", f"-XX:AOTCache={cache}", "-XX:+UnlockExperimentalVMOptions",
                "-XX:+AOTCompileEagerly"]
    return [*quiet, "-Xlog:aot=off", f"-XX:AOTCacheOutput={cache}"]


def measured(command, log_prefix, env=None):
    """Runs one process measured from outside (whole process and steady window); exits on failure."""
    run = measure.run_measured(command, log_prefix, env=env, cwd=ROOT, sample=True)
    if run.error:
        raise SystemExit(f"failed: {' '.join(run.command)}: {run.error}")
    return run


def sluice(pipeline_yaml, workdir, state_arg=None):
    summary = workdir / "summary.json"
    env = dict(os.environ, SLUICE_SUMMARY_JSON=str(summary))
    state = workdir / "state"
    state_args = ["--state-dir", str(state)] if state_arg is None else [state_arg.format(state=state)]
    sh("./sluice", "run", str(pipeline_yaml), *state_args, env=env)
    return json.loads(summary.read_text())


def load_bids(servers, topic, events, work):
    """Writes about EVENTS Nexmark bids (JSON, seed 1) into `topic` with Sluice's own generator
    (46 of every 50 events are bids); returns how many were written."""
    load = work / "load.yaml"
    load.write_text(f"""name: bench-load
sources:
  bid: {{type: generator, entity: bid, count: {(events * 50 + 45) // 46}, seed: 1}}
transforms:
  bids: {{type: sql, sql: "SELECT * FROM bid"}}
sinks:
  out: {{type: kafka, from: bids, topic: {topic}, bootstrap_servers: "{servers}"}}
""")
    loaded = sluice(load, work)
    print(f"loaded {loaded['records_out']:,} bid events into {topic} in {loaded['seconds']:.1f} s", file=sys.stderr)
    return loaded["records_out"]


def yaml_properties(props):
    """A `properties:` line for a Kafka node (client settings by name), or nothing."""
    if not props:
        return ""
    return "\n    properties: {" + ", ".join(f'"{k}": "{v}"' for k, v in props.items()) + "}"


def query_pipeline(path, name, servers, topic, group, sql, out, settings="", consumer=None, producer=None):
    """Writes a bounded kafka source -> sql -> kafka sink pipeline to `path`; `settings` are more
    top-level lines (e.g. delivery and checkpoint); `consumer` and `producer` are client settings
    ({name: value}) for the source and the sink."""
    path.write_text(f"""name: {name}
{settings}sources:
  bid:
    type: kafka
    topic: {topic}
    group_id: {group}
    bootstrap_servers: "{servers}"
    schema: {BID_SCHEMA}
    bounded: true{yaml_properties(consumer)}
transforms:
  result: {{type: sql, sql: "{sql}"}}
sinks:
  out:
    type: kafka
    from: result
    topic: {out}
    bootstrap_servers: "{servers}"{yaml_properties(producer)}
""")
    return path


def small_topic(servers, work, stamp):
    """A quiet topic of about 100 bid events (for first records and warm-up runs); returns its name
    and how many events it holds."""
    topic = f"bench-small-{stamp.lower()}"
    sh("bash", "ci/kafka.sh", "topics", "create", topic, "--partitions", "1")
    load = work / "load-small.yaml"
    load.write_text(f"""name: bench-load-small
sources:
  bid: {{type: generator, entity: bid, count: 109, seed: 1}}
transforms:
  bids: {{type: sql, sql: "SELECT * FROM bid"}}
sinks:
  out: {{type: kafka, from: bids, topic: {topic}, bootstrap_servers: "{servers}"}}
""")
    return topic, sluice(load, work)["records_out"]


def first_record_series(servers, work, topic, stamp, runs):
    """Resume-to-first-record on the quiet 100-event `topic`: `runs` restarts of q0 with a fresh
    group (after one unmeasured first run), each through the launcher's fast path for `run` and
    through picocli (the `--state-dir=DIR` form), alternating, a second apart. Returns
    {path: [ms, ...]}."""
    out = f"{topic}-out"
    sh("bash", "ci/kafka.sh", "topics", "create", out, "--partitions", "1")
    times = {"launcher fast path": [], "picocli": []}
    # Run 0 of each path is the pipeline's first run: it records the launcher's start-up cache
    # for that command line (./sluice). Resuming means a restart, so runs 1..N are measured.
    for i in range(runs + 1):
        for path, state_arg in (("launcher fast path", None), ("picocli", "--state-dir={state}")):
            pipeline = query_pipeline(work / "first-record.yaml", "bench-first-record", servers, topic,
                                      f"bench-first-{stamp}-{i}-{path[0]}", QUERIES["q0"], out)
            shutil.rmtree(work / "state", ignore_errors=True)
            time.sleep(1)
            ms = sluice(pipeline, work, state_arg)["first_record_ms_after_jvm_start"]
            if i > 0:
                times[path].append(ms)
    return times


def ceiling_run(java, work, servers, topic, out, n, log_prefix, settings=()):
    """One measured run of the ceiling loop over `n` events of `topic`: its result line, whole-process
    CPU, steady window, peak RSS and the broker's CPU meanwhile."""
    before = broker_cpu_seconds()
    run = measured(ceiling_command(java, work, servers, topic, out, n, settings), log_prefix)
    return dict(run.result, events=n, broker_cpu_seconds=broker_cpu_seconds() - before, **outside(run, n))


def sluice_run(pipeline, work, n, log_prefix):
    """One measured `./sluice run` of `pipeline` over `n` events, from a fresh state directory."""
    shutil.rmtree(work / "state", ignore_errors=True)  # else the run resumes at the end
    summary = work / "summary.json"
    summary.unlink(missing_ok=True)
    env = dict(os.environ, SLUICE_SUMMARY_JSON=str(summary))
    before = broker_cpu_seconds()
    run = measured(["./sluice", "run", str(pipeline), "--state-dir", str(work / "state")], log_prefix, env)
    result = json.loads(summary.read_text())
    if result["records_in"] != n:
        raise SystemExit(f"{pipeline}: sluice read {result['records_in']} of {n} events")
    return dict(result, events=n, broker_cpu_seconds=broker_cpu_seconds() - before, **outside(run, n))


def outside(run, n):
    """What the kernel says about a finished run: whole-process CPU, wall, peak RSS, steady window."""
    steady = measure.steady_window(run, n) or {}
    return {"cpu_seconds": run.cpu_seconds, "wall_seconds": run.wall_seconds, "max_rss_mib": run.max_rss_mb,
            "steady_events_per_s": steady.get("events_per_s"), "steady_events_per_cpu_s": steady.get("events_per_cpu_s")}


def median_range(values):
    values = [v for v in values if v is not None]
    return (statistics.median(values), [min(values), max(values)]) if values else (None, None)


def summarize(query, engine, rs, total_bytes):
    """One table row from the runs of one engine: medians with min-max."""
    row = {"query": query, "engine": engine, "events": rs[0]["events"], "runs": len(rs), "seconds": [r["seconds"] for r in rs],
           "raw": rs}
    for key, values in (("events_per_s", [r["events"] / r["seconds"] for r in rs]),
                        ("events_per_cpu_s", [r["events"] / r["cpu_seconds"] for r in rs]),
                        ("steady_events_per_s", [r["steady_events_per_s"] for r in rs]),
                        ("steady_events_per_cpu_s", [r["steady_events_per_cpu_s"] for r in rs]),
                        ("max_rss_mib", [r["max_rss_mib"] for r in rs])):
        row[key], row[key + "_range"] = median_range(values)
    row["mb_per_s"] = total_bytes * row["events_per_s"] / rs[0]["events"] / 1e6
    row["cpu_seconds"] = statistics.median(r["cpu_seconds"] for r in rs)
    row["broker_cpu_seconds"] = statistics.median(r["broker_cpu_seconds"] for r in rs)
    return row


def ratios(row, base):
    """Sluice/ceiling ratios of the medians."""
    for key in ("events_per_s", "events_per_cpu_s", "steady_events_per_cpu_s"):
        if row[key] and base[key]:
            row["ratio_" + key] = row[key] / base[key]


def k(v):
    return "–" if v is None else f"{v / 1e3:,.0f}k"


def main():
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(QUERIES)
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-kafka-bench-"))
    with scratch_topic(f"bench-bids-{stamp.lower()}") as topic:
        measure_all(events, chosen, servers, java, stamp, work, topic)


def measure_all(events, chosen, servers, java, stamp, work, topic):
    n = load_bids(servers, topic, events, work)
    small, small_n = small_topic(servers, work, stamp)
    # The ceiling's start-up cache, recorded once by an unmeasured short run.
    sh("bash", "ci/kafka.sh", "topics", "create", f"{small}-warm", "--partitions", "1")
    measured(ceiling_command(java, work, servers, small, f"{small}-warm", small_n), work / "ceiling-warm")

    repeats = int(os.environ.get("KAFKA_BENCH_REPEATS", "3"))
    rows = []
    for name in chosen:
        sql = QUERIES[name]
        pipeline = work / f"{name}.yaml"
        # Sluice's start-up cache for this command line, recorded by an unmeasured run over the quiet topic.
        query_pipeline(pipeline, f"bench-{name}", servers, small, f"bench-{name}-{stamp}-warm", sql, f"{small}-warm")
        sluice_run(pipeline, work, small_n, work / f"{name}-warm")
        # The two engines alternate, `repeats` times each: on shared vCPUs a single pair of runs
        # can differ by 40 % for the same work, so medians are compared.
        runs = {"kafka-clients copy (ceiling)": [], "Sluice FFM": []}
        for rep in range(repeats):
            with scratch_topic(f"{topic}-{name}-baseline-{rep}") as out:
                base = ceiling_run(java, work, servers, topic, out, n, work / f"{name}-ceiling-{rep}")
            runs["kafka-clients copy (ceiling)"].append(base)
            total_bytes = base["bytes"]
            with scratch_topic(f"{topic}-{name}-sluice-{rep}") as out:
                query_pipeline(pipeline, f"bench-{name}", servers, topic, f"bench-{name}-{stamp}-{rep}", sql, out)
                runs["Sluice FFM"].append(sluice_run(pipeline, work, n, work / f"{name}-sluice-{rep}"))

        base_row, row = (summarize(name, engine, rs, total_bytes) for engine, rs in runs.items())
        ratios(row, base_row)
        rows += [base_row, row]
        print(f"{name}: sluice {row['events_per_s']:,.0f} ev/s vs ceiling {base_row['events_per_s']:,.0f} "
              f"({row['ratio_events_per_s']:.2f}x); per CPU-second {row['ratio_events_per_cpu_s']:.2f}x, "
              f"steady window {row.get('ratio_steady_events_per_cpu_s', float('nan')):.2f}x (medians of {repeats})",
              file=sys.stderr)

    first_records = first_record_series(servers, work, small, stamp, int(os.environ.get("FIRST_RECORD_RUNS", "7")))

    java_opts = os.environ.get("SLUICE_JAVA_OPTS", "")  # JVM options after the launcher flags, for both
    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"kafka-{stamp}.json").write_text(json.dumps(
        {"events": n, "topic_bytes": total_bytes, "sluice_java_opts": java_opts, "rows": rows,
         "first_record_ms_quiet": first_records}, indent=2))
    lines = [f"Kafka JSON -> SQL -> Kafka, {n:,} Nexmark bid events ({total_bytes / 1e6:,.0f} MB of JSON), "
             f"1 partition, 1 lane; medians of {repeats} alternating runs per engine (min–max in brackets); {stamp}"
             + (f"; both with SLUICE_JAVA_OPTS={java_opts}" if java_opts else ""), "",
             "Whole process: events/s by the engine's own clock, CPU of the whole process (JVM start included). "
             "Steady window: the middle 60 % of the bytes the process read, measured from /proc.", "",
             "| query | engine | events/s | MB/s | process CPU s | events per CPU-s | steady events/s | steady events per CPU-s "
             "| peak RSS MiB | broker CPU s | ratio events/s | ratio per CPU-s | ratio steady per CPU-s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['query']} | {r['engine']} | {r['events_per_s']:,.0f} [{k(r['events_per_s_range'][0])}–{k(r['events_per_s_range'][1])}] | "
            f"{r['mb_per_s']:,.1f} | {r['cpu_seconds']:.1f} | {k(r['events_per_cpu_s'])} [{k(r['events_per_cpu_s_range'][0])}–{k(r['events_per_cpu_s_range'][1])}] | "
            f"{k(r['steady_events_per_s'])} | {k(r['steady_events_per_cpu_s'])} "
            f"[{k((r['steady_events_per_cpu_s_range'] or [None, None])[0])}–{k((r['steady_events_per_cpu_s_range'] or [None, None])[1])}] | "
            f"{r['max_rss_mib']:.0f} | {r['broker_cpu_seconds']:.1f} | {r.get('ratio_events_per_s', 1.0):.2f} | "
            f"{r.get('ratio_events_per_cpu_s', 1.0):.2f} | {r.get('ratio_steady_events_per_cpu_s', 1.0):.2f} |")
    lines += ["", "Resume to first record on a quiet 100-event topic (q0, fresh group each run, ms after JVM start; "
              "restarts after the pipeline's first run):", "",
              "| path | runs | min | median | max |", "|---|---:|---:|---:|---:|"]
    for path, ms in first_records.items():
        lines.append(f"| {path} | {len(ms)} | {min(ms)} | {statistics.median(ms):.0f} | {max(ms)} |")
    table = "\n".join(lines) + "\n"
    (results / f"kafka-{stamp}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
