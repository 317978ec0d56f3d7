#!/usr/bin/env python3
"""The service JAR (issue 13): pause -> running, apply -> first output, serve vs run, RSS.

Called by `benchmarks/run.sh service [RUNS]` after the broker is up and the JARs are built.
Everything runs through `java -jar engine/target/sluice.jar serve` and its HTTP API, as a user
runs it. A feeder writes ~2 000 JSON records/s into a 3-partition topic; a TopicWatcher follows
the output topics from outside.

1. resume: a kafka -> SQL -> kafka pipeline is paused (final checkpoint), left paused 1 s, then
   resumed; time from the resume request to the first new output record. RUNS times.
2. apply: a new pipeline (its own group, starting at the latest offsets) is applied; time from the
   apply request to its first output record; then it is deleted. RUNS times.
3. overhead: the same bounded generator -> SQL -> blackhole pipeline (20 M rows) under `run` and
   under `serve`, alternating, 5 rounds; rows/s from each one's own account of the run (the run
   summary's seconds; the service status's run_seconds, the same measure).
4. memory: RSS of a fresh service hosting 1, 5 and 20 pipelines, idle (a kafka source on a topic
   nobody writes) and busy (generators at 20 000 rows/s each), 10 s after the last apply.

Prints the tables and writes benchmarks/results/service-<time>.{json,md}.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from restart_bench import ROOT, Watcher, sh

JAR = "engine/target/sluice.jar"


class Service:
    """A `sluice serve` child process and its API."""

    def __init__(self, java, flags, work, name):
        self.log = work / f"{name}.log"
        self.proc = subprocess.Popen([java, *flags, "-jar", JAR, "serve", "--port", "0",
                                      "--state-dir", str(work / f"{name}-state"), "--base-dir", str(work)],
                                     cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        deadline = time.time() + 60
        while time.time() < deadline:
            text = self.log.read_text()
            found = re.search(r"listening on (http://\S+)", text)
            if found and "sluice service ready" in text:
                self.url = found.group(1)
                return
            if self.proc.poll() is not None:
                raise SystemExit(f"the service exited:\n{text}")
            time.sleep(0.05)
        raise SystemExit("the service did not start:\n" + self.log.read_text())

    def call(self, method, path, body=None):
        request = urllib.request.Request(self.url + path, method=method,
                                         data=None if body is None else body.encode())
        try:
            with urllib.request.urlopen(request, timeout=180) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            raise SystemExit(f"{method} {path}: {e.code} {e.read().decode()}")

    def await_state(self, name, state, timeout_s=300):
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            status = self.call("GET", f"/pipelines/{name}")
            if status["state"] == state:
                return status
            if status["state"] == "failed":
                raise SystemExit(f"{name} failed: {status['last_error']}")
            time.sleep(0.05)
        raise SystemExit(f"{name} never became {state}")

    def rss_mib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(120)


def copy_pipeline(name, servers, topic, out, group, starting="committed"):
    return f"""name: {name}
checkpoint: {{interval: 1s}}
sources:
  events:
    type: kafka
    topic: {topic}
    group_id: {group}
    starting_offsets: {starting}
    bootstrap_servers: "{servers}"
    schema: {{id: bigint, v: string}}
transforms:
  t: {{type: sql, from: events, sql: "SELECT id, upper(v) AS v FROM events"}}
sinks:
  out: {{type: kafka, from: t, topic: {out}, key: [id], bootstrap_servers: "{servers}"}}
"""


def generator_pipeline(name, count=None, rate=None):
    bounds = (f", count: {count}" if count else "") + (f", rate: {rate}" if rate else "")
    return f"""name: {name}
sources:
  bids: {{type: generator, entity: bid{bounds}}}
transforms:
  t: {{type: sql, from: bids, sql: "SELECT auction, price * 2 AS price2 FROM bids WHERE price > 10"}}
sinks:
  out: {{type: blackhole, from: t}}
"""


def summary(values):
    return min(values), statistics.median(values), max(values)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    servers = sh("bash", "ci/kafka.sh", "bootstrap").strip()
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    flags = os.environ.get("SLUICE_JVM_FLAGS", "").split()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="sluice-service-bench-"))
    topic = f"bench-service-{stamp.lower()}"
    out, applied_out, idle = topic + "-out", topic + "-applied", topic + "-idle"
    for t in (topic, out, applied_out, idle, idle + "-never"):
        sh("bash", "ci/kafka.sh", "topics", "create", t, "--partitions", "3")
    feeder = subprocess.Popen(["bash", "-c", """
        i=0; while :; do for j in $(seq 1 200); do i=$((i+1)); echo "{\\"id\\": $i, \\"v\\": \\"r$i\\"}"; done; sleep 0.1; done
        """], cwd=ROOT, stdout=subprocess.PIPE)
    producer = subprocess.Popen(["bash", "ci/kafka.sh", "produce", topic], cwd=ROOT, stdin=feeder.stdout,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {"runs": runs}
    watcher = Watcher(java, flags, servers, out)
    applied_watcher = Watcher(java, flags, servers, applied_out)
    service = Service(java, flags, work, "service")
    try:
        # 1. pause -> running
        service.call("PUT", "/pipelines/copy", copy_pipeline("copy", servers, topic, out, f"bench-svc-{stamp}"))
        watcher.first_after(0)
        resume_ms = []
        for _ in range(runs):
            service.call("POST", "/pipelines/copy/pause")
            time.sleep(1)
            before = watcher.quiet_count()
            started = time.time() * 1000
            service.call("POST", "/pipelines/copy/resume")
            first = watcher.first_after(before)
            resume_ms.append(None if first is None else first - started)
            time.sleep(2)
        results["resume_to_first_output_ms"] = resume_ms
        service.call("DELETE", "/pipelines/copy")

        # 2. apply -> first output
        apply_ms = []
        for i in range(runs):
            name = f"applied-{i}"
            before = applied_watcher.quiet_count()
            started = time.time() * 1000
            service.call("PUT", f"/pipelines/{name}",
                         copy_pipeline(name, servers, topic, applied_out, f"bench-svc-{stamp}-{i}", "latest"))
            first = applied_watcher.first_after(before)
            apply_ms.append(None if first is None else first - started)
            time.sleep(1)
            service.call("DELETE", f"/pipelines/{name}")
        results["apply_to_first_output_ms"] = apply_ms

        # 3. serve vs run, one bounded pipeline, alternating
        rows = 20_000_000
        gen_file = work / "gen.yaml"
        under_run, under_serve = [], []
        for round_ in range(5):
            gen_file.write_text(generator_pipeline("gen", count=rows))
            summary_file = work / f"summary-{round_}.json"
            subprocess.run([java, *flags, "-jar", JAR, "run", str(gen_file), "--state-dir", str(work / f"run-{round_}")],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "SLUICE_SUMMARY_JSON": str(summary_file)})
            ran = json.loads(summary_file.read_text())
            under_run.append(ran["records_in"] / ran["seconds"])
            name = f"gen-{round_}"
            service.call("PUT", f"/pipelines/{name}", generator_pipeline(name, count=rows))
            status = service.await_state(name, "completed")
            under_serve.append(status["records_in"] / status["run_seconds"])
            service.call("DELETE", f"/pipelines/{name}")
        results["run_rows_per_s"] = under_run
        results["serve_rows_per_s"] = under_serve
    finally:
        service.stop()
        watcher.close()
        applied_watcher.close()
        producer.terminate()
        feeder.terminate()

    # 4. memory, a fresh service per count
    memory = {}
    for kind in ("idle", "busy"):
        for count in (1, 5, 20):
            fresh = Service(java, flags, work, f"rss-{kind}-{count}")
            try:
                for i in range(count):
                    name = f"{kind}-{i}"
                    yaml = (copy_pipeline(name, servers, idle, idle + "-never", f"bench-svc-{stamp}-idle-{count}-{i}")
                            if kind == "idle" else generator_pipeline(name, rate=20_000))
                    fresh.call("PUT", f"/pipelines/{name}", yaml)
                time.sleep(10)
                states = {s["state"] for s in fresh.call("GET", "/pipelines")["pipelines"]}
                memory[f"{kind} {count}"] = {"rss_mib": fresh.rss_mib(), "states": sorted(states)}
            finally:
                fresh.stop()
    results["memory"] = memory

    cpu = sh("bash", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'").strip()
    jvm = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    ok = lambda values: [v for v in values if v is not None]
    lines = [f"Service benchmark ({cpu}, {os.cpu_count()} cores, {jvm}; `java -jar {JAR} serve`, "
             f"3 partitions, ~2 000 records/s in):", "",
             "| measure | runs | min | median | max |", "|---|---:|---:|---:|---:|"]
    for key, label in (("resume_to_first_output_ms", "resume → first output record (ms)"),
                       ("apply_to_first_output_ms", "apply (new pipeline) → first output record (ms)")):
        values = ok(results[key])
        lo, mid, hi = summary(values)
        missing = len(results[key]) - len(values)
        lines.append(f"| {label} | {len(values)}{f' ({missing} without output in 90 s)' if missing else ''} "
                     f"| {lo:,.0f} | {mid:,.0f} | {hi:,.0f} |")
    run_med, serve_med = statistics.median(results["run_rows_per_s"]), statistics.median(results["serve_rows_per_s"])
    lines += ["", "| 20 M generator rows → SQL → blackhole | rows/s per round | median |", "|---|---|---:|",
              f"| `run` | {' / '.join(f'{v:,.0f}' for v in results['run_rows_per_s'])} | {run_med:,.0f} |",
              f"| `serve` | {' / '.join(f'{v:,.0f}' for v in results['serve_rows_per_s'])} | {serve_med:,.0f} |",
              f"| ratio serve / run | | {serve_med / run_med:.3f} |",
              "", "| pipelines hosted | RSS MiB | states |", "|---|---:|---|"]
    for key, value in memory.items():
        lines.append(f"| {key} | {value['rss_mib']:,.0f} | {', '.join(value['states'])} |")
    text = "\n".join(lines)
    print(text)
    results_dir = ROOT / "benchmarks" / "results"
    results_dir.mkdir(exist_ok=True)
    (results_dir / f"service-{stamp}.json").write_text(json.dumps(results, indent=2))
    (results_dir / f"service-{stamp}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
