#!/usr/bin/env python3
"""Paired A/B of the FFM bridge's warm-up calls in runs that map an AOT cache, on in-memory
Nexmark runs: per query, one unmeasured run records the command line's cache (with the warm-up, as
the launcher's first run does), then ROUNDS rounds of DataFusion alone and of `./sluice run` on the
same command line, so both modes map that one cache, with the warm-up (`warm`) and without it
(`nowarm`: -Dsluice.ffm.warmUpRounds=0 through JAVA_TOOL_OPTIONS, which the launcher's cache key
leaves out), in alternating order. Adapted from results/aot-cache-20261204/ab.py. Appends one JSON
line per run to OUT; summarize with AB_MODES=nowarm,warm ../aot-cache-20261204/summarize.py OUT.

    python3 ab_mapped.py OUT [EVENTS [ROUNDS [QUERIES]]]   (from the repository root, JAR built;
                                                           defaults 10000000, 10, q0,q1,q2,q22)
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# mode -> JAVA_TOOL_OPTIONS (not part of the launcher's cache key: both modes map one cache); the
# first mode's name labels round 0, which records the cache with no options, as the launcher's first
# run of a command line does. AB_MAPPED_MODES="name=options;name=options" replaces them.
MODES = ({name: flags for name, _, flags in (m.partition("=") for m in os.environ["AB_MAPPED_MODES"].split(";"))}
         if os.environ.get("AB_MAPPED_MODES") else {"warm": "", "nowarm": "-Dsluice.ffm.warmUpRounds=0"})
# The pipeline, DataFusion alone's run and the run helper, from the driver this one was adapted from.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "aot-cache-20261204"))
from ab import alone_row, build_alone, run_one, write_pipeline  # noqa: E402


def main():
    out_path = Path(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    queries = (sys.argv[4] if len(sys.argv) > 4 else "q0,q1,q2,q22").split(",")
    a, b = MODES
    binary = build_alone()
    with tempfile.TemporaryDirectory() as tmp, out_path.open("a") as out:
        tmp = Path(tmp)
        for q in queries:
            pipeline = write_pipeline(tmp, q, events)

            def sluice(mode, round_):
                state = tmp / f"state-{q}"  # one command line per query for both modes: one cache
                shutil.rmtree(state, ignore_errors=True)
                summary = tmp / "summary.json"
                summary.unlink(missing_ok=True)
                env = dict(os.environ, SLUICE_BUILD="never", SLUICE_SUMMARY_JSON=str(summary), SLUICE_CDS="on",
                           SLUICE_JAVA_OPTS="")
                if MODES[mode] and round_ > 0:
                    env["JAVA_TOOL_OPTIONS"] = MODES[mode]
                else:
                    env.pop("JAVA_TOOL_OPTIONS", None)
                row, _ = run_one(["./sluice", "run", str(pipeline), "--state-dir", str(state)], env)
                result = json.loads(summary.read_text())
                row.update(engine_seconds=result["seconds"], records_in=result.get("records_in"))
                return {"query": q, "engine": f"sluice-{mode}", "round": round_, **row}

            out.write(json.dumps(sluice(a, 0)) + "\n")  # round 0: records the cache, without options
            for r in range(1, rounds + 1):
                out.write(json.dumps(alone_row(q, events, r, binary)) + "\n")
                for mode in ((a, b) if r % 2 else (b, a)):
                    out.write(json.dumps(sluice(mode, r)) + "\n")
                out.flush()
                print(f"{q} round {r} done", file=sys.stderr)


if __name__ == "__main__":
    main()
