#!/usr/bin/env python3
"""End-to-end latency at 10 %, 50 % and 90 % of the maximum rate: Sluice at-least-once, Sluice
exactly-once and Flink SQL, Kafka -> SELECT id, sent_us -> Kafka, each with its default settings,
over the floor of "Kafka alone" (the probe reading the topic it writes, no engine between).

Called by `benchmarks/run.sh latency [SECONDS [LOADS]]` after the broker is up and the JARs are
built. First the maximum rate, on this machine as a whole: Sluice at-least-once runs while the
probe asks for far more than it can carry (MAX_PROBE_RATE, default 1 500 000 events/s); the rate
records come out of the pipeline is the maximum (the probe, the broker and the engine share the
cores, as in every row after). Then, for each load (default 0.1,0.5,0.9 of it) and each
engine in turn: fresh topics, the engine started on them (reading from the start), and
`LatencyProbe` (benchmarks/src/.../LatencyProbe.java), a separate JVM, produces the records at the
load's rate for SECONDS (default 20) after LATENCY_WARMUP seconds unmeasured (default 15: an
engine that has just started compiles its hot code and catches up with what was sent meanwhile;
the question is its latency once running), stamping each with the wall clock, and
reads the output topic read_committed: p50 / p99 / p99.9 / max of receive minus send time, and
how many never arrived. The engine is then stopped (SIGTERM) and its peak RSS and CPU time read
(os.wait4; CPU per million events counts the whole process, start and warm-up included). All
processes share the machine's cores with the broker. Writes benchmarks/results/latency-<time>.*.

For A/B runs of client settings: LATENCY_ENGINES (a comma-separated subset of the engines),
LATENCY_MAX_RATE (events/s: skip measuring the maximum and use this one), LATENCY_SOURCE_PROPERTIES
and LATENCY_SINK_PROPERTIES ("key=value;key=value", given to Sluice's Kafka source and sink under
`properties:`), LATENCY_CHECKPOINT_INTERVAL (Sluice's checkpoint interval, e.g. 60s; default 10 s);
the report's header names them.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kafka_bench import ROOT, scratch_topic, sh

ENGINES = ("Kafka alone", "Sluice at-least-once", "Sluice exactly-once", "Flink SQL")
# The floor under every engine's row: the probe consumes the topic it produces to (the same broker,
# clients and machine, no engine between), so its latency is what Kafka and the probe add.
KAFKA_ALONE = "Kafka alone"
SQL = "SELECT id, sent_us FROM events"


def properties_block(env_name, indent):
    """`properties:` lines for a Sluice Kafka source or sink from the environment variable, or ''."""
    pairs = [kv.split("=", 1) for kv in os.environ.get(env_name, "").split(";") if kv.strip()]
    if not pairs:
        return ""
    pad = " " * indent
    return f"\n{pad}properties:\n" + "\n".join(f'{pad}  {k.strip()}: "{v.strip()}"' for k, v in pairs)


def pipeline(path, servers, topic, group, out, delivery, bounded):
    source_props = properties_block("LATENCY_SOURCE_PROPERTIES", 4)
    sink_props = properties_block("LATENCY_SINK_PROPERTIES", 4)
    interval = os.environ.get("LATENCY_CHECKPOINT_INTERVAL")
    checkpoint = f"checkpoint: {{interval: {interval}}}\n" if interval else ""
    path.write_text(f"""name: latency-bench
delivery: {delivery}
{checkpoint}sources:
  events:
    type: kafka
    topic: {topic}
    group_id: {group}
    bootstrap_servers: "{servers}"
    schema: {{id: bigint, sent_us: bigint}}
    starting_offsets: earliest
    bounded: {str(bounded).lower()}{source_props}
transforms:
  result: {{type: sql, sql: "{SQL}"}}
sinks:
  out:
    type: kafka
    from: result
    topic: {out}
    bootstrap_servers: "{servers}"{sink_props}
""")
    return path


def number(value, spec):
    return "–" if value is None else format(value, spec)


def max_rate(servers, java, flags, work, stamp):
    """The highest rate this machine carries through the probe, the broker and Sluice at-least-once
    at once: the probe asks for MAX_PROBE_RATE (default 1 500 000) events/s for 8 s and reports the
    rate records came out of the pipeline."""
    asked = int(os.environ.get("MAX_PROBE_RATE", "1500000"))
    tag = f"lat-{stamp.lower()}-max"
    with scratch_topic(tag + "-in") as topic, scratch_topic(tag + "-out") as out:
        process = start_engine("Sluice at-least-once", servers, topic, out, work, tag)
        try:
            probe = sh(java, *flags, "-cp", "benchmarks/target/benchmarks.jar", "dev.sluice.benchmarks.LatencyProbe",
                       servers, topic, out, str(asked), "6", "2")
        finally:
            stop(process)
    return json.loads(probe.strip().splitlines()[-1])


def start_engine(engine, servers, topic, out, work, tag):
    """Starts `engine` on `topic` -> `out`; returns the process once it is ready for records."""
    log = open(work / f"{tag}.log", "w")
    if engine == "Flink SQL":
        process = subprocess.Popen(["bash", str(ROOT / "benchmarks/peers/flink/run.sh"), "--bootstrap", servers,
                                    "--query", "probe", "--input", topic, "--output", out],
                                   cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)
        ready = threading.Event()

        def watch():
            for line in process.stdout:
                if '"running"' in line:
                    ready.set()

        threading.Thread(target=watch, daemon=True).start()
        if not ready.wait(120):
            process.kill()
            raise SystemExit(f"{engine} did not start; see {log.name}")
        time.sleep(3)  # the job's source is assigned after submission
    else:
        delivery = "exactly_once" if "exactly" in engine else "at_least_once"
        state = work / f"{tag}.state"
        yaml = pipeline(work / f"{tag}.yaml", servers, topic, f"{tag}-g", out, delivery, False)
        process = subprocess.Popen(["./sluice", "run", str(yaml), "--state-dir", str(state)],
                                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        time.sleep(5)  # joined its group and assigned
    process.log = log
    return process


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        _, _, usage = os.wait4(process.pid, 0)
    finally:
        process.log.close()
    process.returncode = 0
    return usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    loads = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0.1, 0.5, 0.9]
    warmup = int(os.environ.get("LATENCY_WARMUP", "15"))
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-latency-bench-"))
    sh("bash", "benchmarks/peers/flink/run.sh", "--build")

    engines = [e.strip() for e in os.environ["LATENCY_ENGINES"].split(",")] if os.environ.get("LATENCY_ENGINES") \
        else list(ENGINES)
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise SystemExit(f"LATENCY_ENGINES: unknown {sorted(unknown)}; known: {', '.join(ENGINES)}")
    if os.environ.get("LATENCY_MAX_RATE"):
        top = float(os.environ["LATENCY_MAX_RATE"])
        saturated = None
        max_note = f"maximum rate {top:,.0f} events/s given by LATENCY_MAX_RATE (not measured in this run)"
    else:
        saturated = max_rate(servers, java, flags, work, stamp)
        top = saturated["delivered_rate"]
        max_note = (f"maximum rate {top:,.0f} events/s (what came out of Sluice at-least-once with the probe asking "
                    f"for {saturated['rate']:,}/s and producing {saturated['achieved_rate']:,.0f}/s, all on this machine)")
    print(max_note, file=sys.stderr)
    settings = "; ".join(f"{name}={os.environ[name]}" for name in
                         ("LATENCY_SOURCE_PROPERTIES", "LATENCY_SINK_PROPERTIES", "LATENCY_CHECKPOINT_INTERVAL",
                          "SLUICE_JAVA_OPTS") if os.environ.get(name))
    rows = []
    for load in loads:
        rate = int(top * load)
        for i, engine in enumerate(engines):
            tag = f"lat-{stamp.lower()}-{int(load * 100)}-{i}"
            with scratch_topic(tag + "-in") as topic, scratch_topic(tag + "-out") as out:
                alone = engine == KAFKA_ALONE
                process = None if alone else start_engine(engine, servers, topic, out, work, tag)
                try:
                    probe = sh(java, *flags, "-cp", "benchmarks/target/benchmarks.jar",
                               "dev.sluice.benchmarks.LatencyProbe", servers, topic, topic if alone else out,
                               str(rate), str(seconds), str(warmup))
                finally:
                    rss, cpu_s = (None, None) if alone else stop(process)
            result = json.loads(probe.strip().splitlines()[-1])
            sent = rate * (seconds + warmup)
            result.update({"engine": engine, "load": load, "max_rss_mib": rss, "cpu_s": cpu_s,
                           "cpu_s_per_m_events": None if alone else cpu_s / sent * 1e6})
            rows.append(result)
            print(f"{int(load * 100)} % ({rate:,}/s) {engine}: p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
                  f"p99.9 {result['p999_ms']:.1f} ms, missing {result['missing']}", file=sys.stderr)

    results = ROOT / "benchmarks" / "results"
    (results / f"latency-{stamp}.json").write_text(json.dumps(
        {"max_rate": top, "max_rate_run": saturated, "seconds": seconds, "warmup_seconds": warmup,
         "sluice_settings": settings or "defaults", "rows": rows}, indent=2))
    lines = [f"End-to-end latency, produce to read_committed consume (LatencyProbe), Kafka -> `{SQL}` -> Kafka, "
             f"1 partition, {('Sluice with ' + settings) if settings else 'default settings'} (Sluice: checkpoint every "
             f"{os.environ.get('LATENCY_CHECKPOINT_INTERVAL', '10 s')}; Flink: checkpoint every 10 s, at-least-once); {max_note}; "
             f"{seconds} s measured per row after {warmup} s; CPU = the engine process's user + system time over "
             f"everything sent (start and warm-up included); {stamp}", "",
             "| load | engine | rate asked | rate produced | rate out | measured | missing | p50 ms | p99 ms | p99.9 ms | max ms "
             "| CPU s / M events | peak RSS MiB |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {int(r['load'] * 100)} % | {r['engine']} | {r['rate']:,} | {r['achieved_rate']:,.0f} | "
                     f"{r['delivered_rate']:,.0f} | "
                     f"{r['measured']:,} | {r['missing']:,} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
                     f"{r['p999_ms']:.1f} | {r['max_ms']:.1f} | {number(r['cpu_s_per_m_events'], '.2f')} | "
                     f"{number(r['max_rss_mib'], '.0f')} |")
    table = "\n".join(lines) + "\n"
    (results / f"latency-{stamp}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
