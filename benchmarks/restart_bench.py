#!/usr/bin/env python3
"""Restart to first NEW output record, after kill -9 and after SIGTERM (issue 10, item 6).

Called by `benchmarks/run.sh restart [REPEATS]` after the broker is up and the JARs are built.
A feeder writes ~2 000 JSON records/s into a 3-partition topic; a streaming pipeline (kafka ->
SQL -> kafka, through ./sluice as a user runs it) copies them to an output topic that a
TopicWatcher follows from outside. For each mode, REPEATS times (default 5): let the pipeline
run 3 s, stop it (kill -9, or SIGTERM and wait for its exit), wait until the watcher has seen
everything it wrote, start it again, and time from that start to the first new record the
watcher sees. The first start of each mode is not measured and ends with SIGTERM, so the
launcher's start-up cache exists as for any pipeline stopped cleanly once; in the kill modes
the second start is not measured either (it follows that clean stop). Modes: kill -9 and SIGTERM with the defaults (static group membership), and
kill -9 with `group_instance_id: none` (dynamic membership, session.timeout.ms 6 s: the
behaviour before), and kill -9 under KIP-848's `group.protocol: consumer` (an opt-in: the successor
first removes the dead static member). Prints min / median / max per mode and writes JSON + Markdown to
benchmarks/results/restart-<time>.{json,md}.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sh(*args):
    return subprocess.run(args, cwd=ROOT, text=True, capture_output=True, check=True).stdout


class Watcher:
    """The TopicWatcher's output: (epoch ms, records so far) lines, read on a thread."""

    def __init__(self, java, flags, servers, topic):
        self.proc = subprocess.Popen([java, *flags, "-cp", "benchmarks/target/benchmarks.jar",
                                      "dev.sluice.benchmarks.TopicWatcher", servers, topic],
                                     cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.events = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        while not self.events:
            time.sleep(0.05)

    def _read(self):
        for line in self.proc.stdout:
            ms, seen = line.split()
            with self.lock:
                self.events.append((int(ms), int(seen)))

    def seen(self):
        with self.lock:
            return self.events[-1][1]

    def quiet_count(self, quiet_s=1.5):
        """The count once nothing arrived for quiet_s seconds: everything written is seen."""
        while True:
            with self.lock:
                last_ms = self.events[-1][0]
            if time.time() * 1000 - last_ms > quiet_s * 1000:
                return self.seen()
            time.sleep(0.1)

    def first_after(self, count, timeout_s=90):
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            with self.lock:
                for ms, seen in self.events:
                    if seen > count:
                        return ms
            time.sleep(0.01)
        return None

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-restart-bench-"))
    topic = f"bench-restart-{stamp.lower()}"
    out = topic + "-out"
    for t in (topic, out):
        sh("bash", "ci/kafka.sh", "topics", "create", t, "--partitions", "3")
    feeder = subprocess.Popen(["bash", "-c", f"""
        i=0; while :; do for j in $(seq 1 200); do i=$((i+1)); echo "{{\\"id\\": $i, \\"v\\": \\"r$i\\"}}"; done; sleep 0.1; done
        """], cwd=ROOT, stdout=subprocess.PIPE)
    producer = subprocess.Popen(["bash", "ci/kafka.sh", "produce", topic], cwd=ROOT, stdin=feeder.stdout,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    watcher = Watcher(java, flags, servers, out)
    modes = {
        "kill -9 (static membership, default)": ("kill", ""),
        "SIGTERM (static membership, default)": ("term", ""),
        "kill -9, group_instance_id: none (dynamic, session 6 s)": ("kill",
            "group_instance_id: none\n    properties: {session.timeout.ms: 6000, heartbeat.interval.ms: 1000}"),
        # KIP-848's protocol refuses the successor the dead member's instance id; the source
        # removes that member through the Admin API first (KafkaSource.takeOverInstanceId).
        "kill -9, group.protocol: consumer (static, stale member removed)": ("kill",
            "properties: {group.protocol: consumer}"),
    }
    results = {}
    try:
        for name, (how, extra) in modes.items():
            pipeline = work / "restart.yaml"
            pipeline.write_text(f"""name: bench-restart
checkpoint: {{interval: 1s}}
sources:
  events:
    type: kafka
    topic: {topic}
    group_id: bench-restart-{stamp}-{how}-{len(results)}
    bootstrap_servers: "{servers}"
    schema: {{id: bigint, v: string}}
    {extra}
transforms:
  t: {{type: sql, sql: "SELECT id, upper(v) AS v FROM events"}}
sinks:
  out: {{type: kafka, from: t, topic: {out}, key: [id], bootstrap_servers: "{servers}"}}
""")
            state = work / f"state-{len(results)}"
            times = []
            proc = None
            # Kill modes: one more unmeasured run, so that every measured start follows a kill.
            first_measured = 2 if how == "kill" else 1
            for rep in range(repeats + first_measured):
                before = watcher.quiet_count() if proc is not None else watcher.seen()
                started = time.time() * 1000
                proc = subprocess.Popen(["./sluice", "run", str(pipeline), "--state-dir", str(state)], cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=open(work / "run.log", "a"))
                first = watcher.first_after(before)
                if rep >= first_measured:  # run 0 is the first start; in kill modes run 1 follows a clean stop
                    times.append(None if first is None else first - started)
                time.sleep(3)
                # The first, unmeasured run stops cleanly in every mode: the launcher's class-data
                # archive is written at JVM exit, which a kill -9 never reaches (a pipeline never
                # stopped cleanly starts ~1 s slower, whatever the group does).
                if how == "kill" and rep > 0:
                    proc.send_signal(signal.SIGKILL)
                else:
                    proc.send_signal(signal.SIGTERM)
                proc.wait(60)
            results[name] = times
            ok = [t for t in times if t is not None]
            print(f"{name}: " + " / ".join(f"{t:,.0f}" for t in (min(ok), statistics.median(ok), max(ok)))
                  + f" ms (min / median / max of {len(ok)}; {len(times) - len(ok)} without output in 90 s)",
                  file=sys.stderr)
    finally:
        watcher.close()
        producer.terminate()
        feeder.terminate()
    cpu = sh("bash", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'").strip()
    lines = [f"Restart to first new output record ({repeats} restarts per mode; {cpu}, {os.cpu_count()} cores; "
             f"launcher ./sluice, 3 partitions, ~2 000 records/s):", "",
             "| mode | min ms | median ms | max ms |", "|---|---:|---:|---:|"]
    for name, times in results.items():
        ok = [t for t in times if t is not None]
        lines.append(f"| {name} | {min(ok):,.0f} | {statistics.median(ok):,.0f} | {max(ok):,.0f} |")
    text = "\n".join(lines)
    print(text)
    results_dir = ROOT / "benchmarks" / "results"
    results_dir.mkdir(exist_ok=True)
    (results_dir / f"restart-{stamp}.json").write_text(json.dumps(results, indent=2))
    (results_dir / f"restart-{stamp}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
