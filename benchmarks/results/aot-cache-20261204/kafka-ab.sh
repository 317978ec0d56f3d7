#!/usr/bin/env bash
# The Kafka bench under each start-up cache, alternating: AOT cache, CDS archive, CDS, AOT
# (SLUICE_CDS applies to Sluice and the ceiling loop alike). Needs the broker (ci/kafka.sh start),
# JAVA_HOME and SLUICE_JVM_FLAGS (. ci/lib/java.sh) and the built JARs. Prints which result file
# each run wrote; the runs' logs go to $LOGS (default /tmp).
set -u
cd "$(dirname "$0")/../../.."
for mode in on cds cds on; do
  SLUICE_BUILD=never SLUICE_CDS=$mode KAFKA_BENCH_REPEATS=3 FIRST_RECORD_RUNS=5 \
    python3 benchmarks/kafka_bench.py 3000000 q0,q1 > "${LOGS:-/tmp}/kafka-$mode-$(date +%s).log" 2>&1
  echo "SLUICE_CDS=$mode -> $(ls -t benchmarks/results/kafka-2*.json | head -n 1)"
done
