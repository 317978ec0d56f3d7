#!/usr/bin/env python3
"""Paired A/B of the launcher's start-up cache on in-memory Nexmark runs: per query, ROUNDS rounds
of DataFusion alone, then `./sluice run` with the AOT cache (SLUICE_CDS=on, Java 25+) and with the
dynamic CDS archive (SLUICE_CDS=cds) in alternating order. Each mode has its own command line,
whose first run (unmeasured) writes its cache. Appends one JSON line per run to OUT. AB_MODES=A,B
picks two other modes of MODES (e.g. aot,aot-scale1).

    python3 ab.py OUT [EVENTS [ROUNDS [QUERIES]]]     (from the repository root, JAR built;
                                                        defaults 10000000, 10, q0,q1,q2,q22)
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# mode -> (SLUICE_CDS, SLUICE_JAVA_OPTS, extra `run` arguments)
MODES = {
    "aot": ("on", "", []),
    "cds": ("cds", "", []),
    "aot-scale1": ("on", "-XX:CompileThresholdScaling=1", []),  # the JIT's default thresholds
    "aot-jni": ("on", "", ["--bridge=jni"]),
    "aot-nowarm": ("on", "-Dsluice.ffm.warmUpRounds=0", []),  # without FfmCoreBridge.warmUp
    # Sluice's own methods compiled at a fifth of the launcher's thresholds (the per-batch loop's
    # methods otherwise run interpreted until ~1 000 batches when the cache lacks their profiles)
    # method handles never customized (the JDK spins a LambdaForm class per handle invoked 127
    # times from code that does not see it as a constant)
    "aot-nocustomize": ("on", "-Djava.lang.invoke.MethodHandle.CUSTOMIZE_THRESHOLD=-1", []),
    "aot-sluicejit": ("on", "-XX:CompileCommand=quiet -XX:CompileCommand=CompileThresholdScaling,dev.sluice.*::*,0.2", []),
    # JDK 25's experimental eager compilation of what the cache has training profiles for
    "aot-eager": ("on", "-XX:+UnlockExperimentalVMOptions -XX:+AOTCompileEagerly", []),
    # the same turned off, once the launcher turns it on when it maps a cache
    "aot-noeager": ("on", "-XX:+UnlockExperimentalVMOptions -XX:-AOTCompileEagerly", []),
}
ALONE = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/sluice/cargo-target")) / "release/nexmark-alone"


def query_sql(q):
    text = (ROOT / "benchmarks/nexmark/queries" / f"{q}.sql").read_text()
    return " ".join(l for l in text.splitlines() if not l.startswith("--"))


def write_pipeline(directory, q, events):
    """Writes the in-memory pipeline of query q over `events` generated bids (seed 42, SQL into a
    blackhole) to directory/q.json and returns its path."""
    pipeline = directory / f"{q}.json"
    pipeline.write_text(json.dumps({
        "name": f"ab-{q}",
        "sources": {"bid": {"type": "generator", "entity": "bid", "count": events, "seed": 42}},
        "transforms": {"result": {"type": "sql", "sql": query_sql(q)}},
        "sinks": {"out": {"type": "blackhole", "from": "result"}}}))
    return pipeline


def build_alone():
    """Builds DataFusion alone from this checkout (cargo: a no-op when up to date) and returns the
    first 12 hex digits of the binary's SHA-256, which every DataFusion-alone row records. The
    cargo target directory is shared by every checkout and worktree, so without the build a run
    could measure a binary left there by another tree."""
    subprocess.run(["bash", str(ROOT / "benchmarks/peers/datafusion-alone/run.sh"), "--build"], cwd=ROOT, check=True)
    return digest(ALONE)


def digest(path):
    """SHA-256 prefix of a file, read in chunks: reading it whole would leave this process ~150 MiB
    larger, and every child forked after that would report that as its own peak RSS."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()[:12]


def alone_row(q, events, round_, binary):
    """Runs DataFusion alone (built by build_alone, whose digest is `binary`) on query q over the
    same bids; returns its row in ab.py's format."""
    row, text = run_one([str(ALONE), "--query-sql", query_sql(q), "--events", str(events), "--seed", "42"])
    if digest(ALONE) != binary:
        sys.exit(f"ab.py: {ALONE} changed during the run (another build?)")
    alone = json.loads(text.strip().splitlines()[-1])
    return {"query": q, "engine": "datafusion-alone", "round": round_, **row,
            "engine_seconds": alone["seconds"], "records_in": alone["rows_in"], "binary_sha256": binary}


def run_one(command, env=None):
    """Runs a command to its end; returns its wall s, user+sys CPU s and peak RSS (MiB) from
    wait4, and its stdout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"ab.py: {' '.join(command)} failed:\n{err.read()[-3000:]}")
        return {"wall_seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime,
                "peak_rss_mib": usage.ru_maxrss / 1024}, out.read()


def main():
    out_path = Path(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    queries = (sys.argv[4] if len(sys.argv) > 4 else "q0,q1,q2,q22").split(",")
    a, b = os.environ.get("AB_MODES", "aot,cds").split(",")
    binary = build_alone()
    with tempfile.TemporaryDirectory() as tmp, out_path.open("a") as out:
        tmp = Path(tmp)
        for q in queries:
            pipeline = write_pipeline(tmp, q, events)

            def sluice(mode, round_):
                state = tmp / f"state-{q}-{mode}"  # one command line per mode and query: one cache
                shutil.rmtree(state, ignore_errors=True)
                summary = tmp / "summary.json"
                summary.unlink(missing_ok=True)
                cds, java_opts, extra = MODES[mode]
                env = dict(os.environ, SLUICE_BUILD="never", SLUICE_SUMMARY_JSON=str(summary), SLUICE_CDS=cds,
                           SLUICE_JAVA_OPTS=java_opts)
                row, _ = run_one(["./sluice", "run", str(pipeline), "--state-dir", str(state), *extra], env)
                result = json.loads(summary.read_text())
                row.update(engine_seconds=result["seconds"], records_in=result.get("records_in"))
                return {"query": q, "engine": f"sluice-{mode}", "round": round_, **row}

            for mode in (a, b):
                out.write(json.dumps(sluice(mode, 0)) + "\n")  # round 0: writes the cache
            for r in range(1, rounds + 1):
                out.write(json.dumps(alone_row(q, events, r, binary)) + "\n")
                for mode in ((a, b) if r % 2 else (b, a)):
                    out.write(json.dumps(sluice(mode, r)) + "\n")
                out.flush()
                print(f"{q} round {r} done", file=sys.stderr)


if __name__ == "__main__":
    main()
