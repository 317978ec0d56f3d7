#!/usr/bin/env bash
# benchmarks/restart_bench.py under each start-up cache, alternating: AOT cache, CDS archive, CDS,
# AOT. Needs the broker (ci/kafka.sh start), JAVA_HOME and SLUICE_JVM_FLAGS (. ci/lib/java.sh) and
# the built JARs. Prints which result file each run wrote; logs go to $LOGS (default /tmp).
set -u
cd "$(dirname "$0")/../../.."
for mode in on cds cds on; do
  SLUICE_BUILD=never SLUICE_CDS=$mode python3 benchmarks/restart_bench.py 5 > "${LOGS:-/tmp}/restart-$mode-$(date +%s).log" 2>&1
  echo "SLUICE_CDS=$mode -> $(ls -t benchmarks/results/restart-*.json | head -n 1)"
done
