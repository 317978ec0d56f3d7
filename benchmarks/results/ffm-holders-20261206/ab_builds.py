#!/usr/bin/env python3
"""Paired A/B of two builds of Sluice on in-memory Nexmark runs: per query, ROUNDS rounds of
DataFusion alone, then `ROOT_A/sluice run` and `ROOT_B/sluice run` (each checkout's own built
JAR, SLUICE_BUILD=never) in alternating order. Each build keeps its start-up caches under its own
XDG_CACHE_HOME (the launcher deletes the caches of other builds of the JAR in its directory);
round 0 of each records its AOT cache, unmeasured. Appends one JSON line per run to OUT, in
ab.py's format with engine "sluice-a" / "sluice-b" (summarize.py in ../aot-cache-20261204 reads it).

    python3 ab_builds.py ROOT_A ROOT_B OUT [EVENTS [ROUNDS [QUERIES]]]

AB_B_ENV="NAME=VALUE ..." adds environment variables to B's runs only (ROOT_A may equal ROOT_B).
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "aot-cache-20261204"))
from ab import alone_row, build_alone, run_one, write_pipeline  # noqa: E402


def main():
    roots = {"a": Path(sys.argv[1]).resolve(), "b": Path(sys.argv[2]).resolve()}
    out_path = Path(sys.argv[3])
    events = int(sys.argv[4]) if len(sys.argv) > 4 else 10_000_000
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    queries = (sys.argv[6] if len(sys.argv) > 6 else "q0,q1,q2,q22").split(",")
    binary = build_alone()
    with tempfile.TemporaryDirectory() as tmp, out_path.open("a") as out:
        tmp = Path(tmp)
        for q in queries:
            pipeline = write_pipeline(tmp, q, events)

            def sluice(build, round_):
                state = tmp / f"state-{q}-{build}"
                shutil.rmtree(state, ignore_errors=True)
                summary = tmp / "summary.json"
                summary.unlink(missing_ok=True)
                env = dict(os.environ, SLUICE_BUILD="never", SLUICE_SUMMARY_JSON=str(summary),
                           XDG_CACHE_HOME=str(tmp / f"cache-{build}"))
                if build == "b":
                    env.update(item.split("=", 1) for item in os.environ.get("AB_B_ENV", "").split())
                row, _ = run_one([str(roots[build] / "sluice"), "run", str(pipeline), "--state-dir", str(state)], env)
                result = json.loads(summary.read_text())
                row.update(engine_seconds=result["seconds"], records_in=result.get("records_in"),
                           open_seconds=result.get("open_seconds"))
                return {"query": q, "engine": f"sluice-{build}", "round": round_, **row}

            for build in ("a", "b"):
                out.write(json.dumps(sluice(build, 0)) + "\n")  # round 0: writes the cache
            for r in range(1, rounds + 1):
                out.write(json.dumps(alone_row(q, events, r, binary)) + "\n")
                for build in (("a", "b") if r % 2 else ("b", "a")):
                    out.write(json.dumps(sluice(build, r)) + "\n")
                out.flush()
                print(f"{q} round {r} done", file=sys.stderr)


if __name__ == "__main__":
    main()
