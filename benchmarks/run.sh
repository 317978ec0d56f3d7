#!/usr/bin/env bash
# Runs the benchmark suites and writes their raw results under benchmarks/results/.
#   benchmarks/run.sh                     jmh, then nexmark (both with their defaults)
#   benchmarks/run.sh jmh [JMH args...]   JMH suites (default: all; e.g. TransformPushBenchmark -p rows=1024)
#   benchmarks/run.sh kafka [EVENTS [QUERIES]]  Kafka JSON -> SQL (q0,q1,q2,q22) -> Kafka vs a plain
#                                         consume->produce loop (default 1 000 000 events, all queries)
#   benchmarks/run.sh kafka-settings [EVENTS [REPEATS [SETS]]]  which Kafka client settings matter: the
#                                         loop and Sluice q0 under sets of settings (default 3 000 000
#                                         events, 3 rounds, every set; kafka_settings_bench.py)
#   benchmarks/run.sh kafka-profile [EVENTS [REPEATS [QUERIES]]]  where the CPU goes: the loop and Sluice
#                                         under perf, CPU per record by thread and by kind of code (default
#                                         3 000 000 events, 3 rounds, q0; kafka_profile_bench.py; needs perf)
#   benchmarks/run.sh plugins [ROWS [REPEATS]]  native plugin source and transform vs the generator and
#                                         SQL, whole pipelines (default 20 000 000 rows, 3 rounds)
#   benchmarks/run.sh lookup [BIDS [REPEATS [CHANGES]]]  bids LEFT JOIN a 1 000 000-key table: static side
#                                         table vs dynamic table, still and changing, and a PostgreSQL-backed
#                                         cache of 1 000 000 and 1 000 rows (default 10 000 000 bids,
#                                         3 rounds, 50 changes; lookup_bench.py)
#   benchmarks/run.sh startup [EVENTS [RUNS]]    where a short run's time goes: process wall, engine time,
#                                         opening, JVM start; with the AOT cache, the CDS archive, neither
#                                         (startup_bench.py)
#   benchmarks/run.sh postgres [ROWS [REPEATS]]  rows/s into PostgreSQL: the postgres sink vs a plain JDBC
#                                         batched INSERT and a raw COPY, inserts and upserts at batch sizes
#                                         1 000 and 10 000 (default 1 000 000 rows, 3 rounds; postgres_bench.py)
#   benchmarks/run.sh codec-ab REV_A REV_B [PAIRS [ROWS]]  the native core's JSON encode and decode at two
#                                         commits, alternating runs in process (default 8 pairs, 1 000 000
#                                         bids; codec_ab.py)
#   benchmarks/run.sh sql-errors [ROWS [REPEATS]]  what a SQL transform's on_error costs: no bad row, one in
#                                         1 000, one in 100, set aside (default 1 000 000 rows, 5 rounds;
#                                         sql_errors_bench.py)
#   benchmarks/run.sh transforms [EVENTS [REPEATS]]  the script and http transforms against SQL doing the
#                                         same work (default 2 000 000 events, 3 rounds; transforms_bench.py)
#   benchmarks/run.sh restart [REPEATS]  restart to first new output record after kill -9 and SIGTERM
#                                         (default 5 restarts per mode; see restart_bench.py)
#   benchmarks/run.sh service [RUNS]     the service JAR: resume and apply to first output record, serve vs run
#                                         throughput, RSS with 1/5/20 pipelines (default 10 runs; service_bench.py)
#   benchmarks/run.sh delivery [EVENTS [REPEATS]]  exactly-once vs at-least-once, Kafka -> q0 -> Kafka, at
#                                         checkpoint intervals 1s and 10s: throughput (default 2 000 000
#                                         events, 3 rounds) and end-to-end latency (delivery_bench.py)
#   benchmarks/run.sh latency [SECONDS [LOADS]]  end-to-end latency p50/p99/p99.9 at 10/50/90 % of the
#                                         maximum rate: Sluice at-least-once and exactly-once, Flink SQL
#                                         (default 20 s per row; latency_bench.py)
#   benchmarks/run.sh inspect [EVENTS [REPEATS [QUERIES]]]  what live inspection's row sampling costs:
#                                         Kafka -> q0,q1,q22 -> Kafka with sampling off, at its defaults and
#                                         at its heaviest (default 2 000 000 events, 5 rounds; inspect_bench.py)
#   benchmarks/run.sh nexmark [EVENTS [QUERIES]] [--partitions P] [--parallelism N] [--series kafka,memory]
#                                         [--engines 'Sluice FFM,Flink SQL'] [--no-parity] [--keep-topics] [--repeats N]
#                                         Nexmark side by side: Sluice FFM/JNI, Flink SQL, Kafka Streams over
#                                         Kafka, and Sluice/DataFusion alone in memory (default 1 000 000 bids,
#                                         queries q0,q1,q2,q13,q14,q21,q22); see benchmarks/README.md
# Results: benchmarks/results/<suite>-<UTC time>.json (raw) and .md (tables, also printed), with the
# JVM and CPU they ran on; nexmark also draws a .png chart.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. ci/lib/java.sh
mode=${1:-all}
shift || true

# The orchestrator's Python packages, in a venv under target/ (reinstalled when the list changes).
nexmark_python() {
  local venv=target/nexmark-venv req=benchmarks/nexmark/requirements.txt
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || { echo "run.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  fi
  if ! cmp -s "$req" "$venv/requirements.installed"; then
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
    cp "$req" "$venv/requirements.installed"
  fi
  echo "$venv/bin/python"
}

run_nexmark() {
  # The Sluice JAR (with the native core); the peers build themselves before they are measured.
  mvn -q -B -ntp -Dstyle.color=never -DskipTests install -pl engine -am >&2
  # The broker only for the Kafka series (the default runs both).
  local series=kafka,memory prev=""
  for arg in "$@"; do
    case "$arg" in --series=*) series=${arg#--series=} ;; esac
    [ "$prev" = --series ] && series=$arg
    prev=$arg
  done
  case "$series" in *kafka*) bash ci/kafka.sh start >&2 ;; esac
  local python
  python=$(nexmark_python)
  export JAVA_HOME SLUICE_JVM_FLAGS
  "$python" benchmarks/nexmark.py "$@"
}

case "$mode" in
  all)
    "$root/benchmarks/run.sh" jmh
    "$root/benchmarks/run.sh" nexmark
    ;;
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
  codec-ab)
    python3 benchmarks/codec_ab.py "$@"
    ;;
  kafka|kafka-settings|kafka-profile)
    mvn -q -B -ntp -DskipTests package -pl benchmarks -am
    bash ci/kafka.sh start
    export SLUICE_JVM_FLAGS
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      echo
      python3 "benchmarks/${mode//-/_}_bench.py" "$@"
    }
    ;;
  plugins)
    # The engine JAR and its test build, which writes the example plugins to engine/target/plugins.
    mvn -q -B -ntp -Dstyle.color=never -DskipTests install -pl engine -am >&2
    bash rust/plugins/build.sh engine/target/plugins >&2
    export JAVA_HOME SLUICE_JVM_FLAGS
    python3 benchmarks/plugins_bench.py "$@"
    ;;
  lookup|postgres)
    mvn -q -B -ntp -Dstyle.color=never -DskipTests package -pl engine -am >&2
    # Against the project's own PostgreSQL (started here when it is not running).
    bash ci/postgres.sh start >&2
    SLUICE_PG_URL=$(bash ci/postgres.sh url)
    export JAVA_HOME SLUICE_JVM_FLAGS SLUICE_PG_URL
    python3 "benchmarks/${mode}_bench.py" "$@"
    ;;
  startup)
    mvn -q -B -ntp -Dstyle.color=never -DskipTests package -pl engine -am >&2
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)${SLUICE_JAVA_OPTS:+; SLUICE_JAVA_OPTS=$SLUICE_JAVA_OPTS}"
      python3 benchmarks/startup_bench.py "$@"
    } | tee "benchmarks/results/startup-$(date -u +%Y%m%dT%H%M%SZ).txt"
    ;;
  sql-errors)
    mvn -q -B -ntp -Dstyle.color=never -DskipTests package -pl engine -am >&2
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      python3 benchmarks/sql_errors_bench.py "$@"
    } | tee "benchmarks/results/sql-errors-$(date -u +%Y%m%dT%H%M%SZ).txt"
    ;;
  transforms)
    mvn -q -B -ntp -Dstyle.color=never -DskipTests package -pl benchmarks -am >&2
    export JAVA_HOME SLUICE_JVM_FLAGS
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      python3 benchmarks/transforms_bench.py "$@"
    } | tee "benchmarks/results/transforms-$(date -u +%Y%m%dT%H%M%SZ).txt"
    ;;
  restart)
    mvn -q -B -ntp -DskipTests package -pl benchmarks -am
    bash ci/kafka.sh start
    export SLUICE_JVM_FLAGS
    python3 benchmarks/restart_bench.py "$@"
    ;;
  service)
    mvn -q -B -ntp -DskipTests package -pl benchmarks -am
    bash ci/kafka.sh start
    export SLUICE_JVM_FLAGS
    python3 benchmarks/service_bench.py "$@"
    ;;
  latency|delivery)
    mvn -q -B -ntp -DskipTests package -pl benchmarks -am
    bash ci/kafka.sh start
    export SLUICE_JVM_FLAGS
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      echo
      python3 "benchmarks/${mode}_bench.py" "$@"
    }
    ;;
  inspect)
    mvn -q -B -ntp -DskipTests package -pl engine -am
    bash ci/kafka.sh start
    {
      echo "JVM: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
      echo
      python3 benchmarks/inspect_bench.py "$@"
    }
    ;;
  nexmark)
    run_nexmark "$@"
    ;;
  *)
    echo "usage: benchmarks/run.sh [jmh [JMH args...] | kafka [EVENTS [QUERIES]] | restart [REPEATS] | service [RUNS] | delivery [EVENTS [REPEATS]] | nexmark [EVENTS [QUERIES]] [options]]" >&2
    exit 2
    ;;
esac
