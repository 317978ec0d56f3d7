"""Runs one engine process and measures it from the outside, the same way for every engine.

Wall time is taken around the process (start to exit); CPU time and peak RSS come from the
kernel's accounting of the terminated process (os.wait4: utime + stime, ru_maxrss), which covers
the process and any children it waited for. Every engine's launcher execs its JVM or binary,
so the measured process is the engine itself, JVM start included.

With `sample=True` the process's CPU time and the bytes it has read (rchar: every read() of a
socket or file, so a Kafka consumer's fetches) are read from /proc every 100 ms, and
`steady_window` gives the rate between two fractions of the bytes read: a steady window that
leaves out the JVM's start and the run's end, the same way for every engine.
"""
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Run:
    """One measured process. `error` is None when it exited 0 and printed its result line."""
    command: list
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    user_seconds: float = 0.0
    system_seconds: float = 0.0
    max_rss_mb: float = 0.0
    exit_code: int | None = None
    result: dict = field(default_factory=dict)
    error: str | None = None
    log: str = ""
    samples: list = field(default_factory=list)  # [seconds since start, cpu seconds, bytes read]

    def as_dict(self):
        return {k: v for k, v in self.__dict__.items()}


def run_measured(command, log_prefix: Path, env=None, cwd=None, timeout_seconds=3600.0, sample=False) -> Run:
    """Runs `command` to its end (or kills its process group after `timeout_seconds`). The last
    stdout line that parses as a JSON object is the engine's own result line. `sample`: fill
    `samples` from /proc while it runs (see steady_window)."""
    out_path, err_path = log_prefix.with_suffix(".out"), log_prefix.with_suffix(".err")
    run = Run(command=[str(c) for c in command], log=str(err_path))
    with open(out_path, "w") as out, open(err_path, "w") as err:
        started = time.monotonic()
        # A session of its own, so a timeout ends the engine and anything it started, nothing else.
        proc = subprocess.Popen(run.command, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout_seconds, kill)
        timer.start()
        done = threading.Event()
        sampler = threading.Thread(target=sample_proc, args=(proc.pid, started, run.samples, done), daemon=True)
        if sample:
            sampler.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            done.set()
            if sample:
                sampler.join()
        run.wall_seconds = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    run.exit_code = proc.returncode
    run.user_seconds, run.system_seconds = usage.ru_utime, usage.ru_stime
    run.cpu_seconds = usage.ru_utime + usage.ru_stime
    run.max_rss_mb = usage.ru_maxrss / 1024.0  # Linux reports KiB
    for line in reversed(out_path.read_text(errors="replace").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                run.result = json.loads(line)
                break
            except json.JSONDecodeError:
                continue
    if timed_out.is_set():
        run.error = f"killed after {timeout_seconds:.0f} s without finishing"
    elif run.exit_code != 0:
        run.error = f"exit {run.exit_code}: {last_lines(err_path)}"
    return run


def sample_proc(pid, started, samples, done, every=0.1):
    """Appends [seconds since start, cpu seconds, bytes read] of a running process until `done`
    (or the process is gone). Read before the process is reaped, so the last sample is close to
    its end."""
    ticks = os.sysconf("SC_CLK_TCK")
    while not done.is_set():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            io = Path(f"/proc/{pid}/io").read_text()
        except (OSError, IndexError):
            return
        if fields[0] == "Z":
            return
        rchar = int(next(l for l in io.splitlines() if l.startswith("rchar:")).split()[1])
        samples.append([time.monotonic() - started, (int(fields[11]) + int(fields[12])) / ticks, rchar])
        done.wait(every)


def steady_window(run: Run, events: int, low=0.2, high=0.8):
    """Events per second and per CPU-second while the process read bytes `low`..`high` of all it
    read, assuming records arrive in proportion to bytes (the same topic for every engine).
    None when there are too few samples."""
    samples = run.samples
    if len(samples) < 10:
        return None
    total = samples[-1][2]
    first = next(s for s in samples if s[2] >= low * total)
    last = next(s for s in samples if s[2] >= high * total)
    share = (last[2] - first[2]) / total
    seconds, cpu = last[0] - first[0], last[1] - first[1]
    if seconds <= 0 or cpu <= 0 or share <= 0:
        return None
    return {"events_per_s": events * share / seconds, "events_per_cpu_s": events * share / cpu,
            "seconds": seconds, "cpu_seconds": cpu, "share": share}


def last_lines(path: Path, count=3, width=400) -> str:
    """The last non-empty lines of a log, joined, for a one-line reason."""
    try:
        lines = [l.strip() for l in path.read_text(errors="replace").splitlines() if l.strip()]
    except OSError:
        return "(no log)"
    text = " | ".join(lines[-count:]) or "(no output)"
    return text if len(text) <= width else "…" + text[-width:]


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a running process (e.g. the broker), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
