"""Runs one engine process and measures it from the outside, the same way for every engine.

Wall time is taken around the process (start to exit); CPU time and peak RSS come from the
kernel's accounting of the terminated process (os.wait4: utime + stime, ru_maxrss), which covers
the process and any children it waited for. Every engine's launcher execs its JVM or binary,
so the measured process is the engine itself, JVM start included.
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

    def as_dict(self):
        return {k: v for k, v in self.__dict__.items()}


def run_measured(command, log_prefix: Path, env=None, cwd=None, timeout_seconds=3600.0) -> Run:
    """Runs `command` to its end (or kills its process group after `timeout_seconds`). The last
    stdout line that parses as a JSON object is the engine's own result line."""
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
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
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
