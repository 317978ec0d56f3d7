#!/usr/bin/env bash
# Runs the benchmark suites and writes their raw results under benchmarks/results/.
#   benchmarks/run.sh jmh [JMH args...]   JMH suites (default: all; e.g. TransformPushBenchmark -p rows=1024)
#   benchmarks/run.sh kafka [EVENTS [QUERIES]]  Kafka JSON -> SQL (q0,q1,q2,q22) -> Kafka vs a plain
#                                         consume->produce loop (default 1 000 000 events, all queries)
# Results: benchmarks/results/jmh-<UTC time>.json (raw JMH) and a Markdown table on stdout
# (also benchmarks/results/jmh-<UTC time>.md), with the JVM and CPU it ran on.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. ci/lib/java.sh
mode=${1:-jmh}
shift || true
case "$mode" in
  jmh)
    mvn -q -B -ntp -DskipTests package -pl benchmarks -am
    stamp=$(date -u +%Y%m%dT%H%M%SZ)
    json="benchmarks/results/jmh-$stamp.json"
    # shellcheck disable=SC2086
    "$JAVA_HOME/bin/java" $SLUICE_JVM_FLAGS -jar benchmarks/target/benchmarks.jar \
      -jvmArgsAppend "$SLUICE_JVM_FLAGS" -rf json -rff "$json" "$@"
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      echo
      python3 benchmarks/jmh_table.py "$json"
    } | tee "benchmarks/results/jmh-$stamp.md"
    ;;
  kafka)
    mvn -q -B -ntp -DskipTests package -pl benchmarks -am
    bash ci/kafka.sh start
    export SLUICE_JVM_FLAGS
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      echo
      python3 benchmarks/kafka_bench.py "$@"
    }
    ;;
  nexmark)
    echo "benchmarks/run.sh nexmark: the side-by-side Nexmark runs come with the benchmark-suite issue; not built yet" >&2
    exit 2
    ;;
  *)
    echo "usage: benchmarks/run.sh jmh [JMH args...] | kafka [EVENTS]" >&2
    exit 2
    ;;
esac
