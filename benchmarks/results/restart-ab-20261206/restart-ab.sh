#!/usr/bin/env bash
# ABBA restart bench: A = /tmp/wtB (3729e25, the session's start), B = /work/main (HEAD).
# Each checkout starts its own broker (target/kafka): stop it after its run.
set -u
for side in "$@"; do
  if [ $side = A ]; then dir=/tmp/wtB; else dir=/work/main; fi
  echo "=== $side $dir $(date -u +%H:%M:%S)"
  (cd $dir && . ci/lib/java.sh && export JAVA_HOME && CARGO_TARGET_DIR=$HOME/.cache/sluice/cargo-target benchmarks/run.sh restart 5 2>&1 | tail -12; bash ci/kafka.sh stop)
done
echo "=== done $(date -u +%H:%M:%S)"
