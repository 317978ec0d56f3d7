#!/usr/bin/env bash
# kafka-ab.sh again, after warming the broker with one 1 M-event run of the bench (its result
# file is listed too): the first kafka-ab.sh run drifted with a freshly started broker.
set -u
cd "$(dirname "$0")/../../.."
SLUICE_BUILD=never KAFKA_BENCH_REPEATS=1 FIRST_RECORD_RUNS=1 \
  python3 benchmarks/kafka_bench.py 1000000 q0 > "${LOGS:-/tmp}/kafka-warmup-$(date +%s).log" 2>&1
echo "broker warm-up -> $(ls -t benchmarks/results/kafka-2*.json | head -n 1)"
"$(dirname "$0")/kafka-ab.sh"
