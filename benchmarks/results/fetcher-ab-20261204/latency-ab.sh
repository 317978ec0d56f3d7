#!/bin/bash
# The latency half of this A/B (2026-12-04), with the same two JARs as ab.sh: Sluice at-least-once
# alone at 50 % of the maximum measured on 2026-12-03 (538 355 events/s), pairs alternating.
# Rounds 1-3 ran in the order old, new; then the loop was edited to rounds 4-6 in the order new, old.
cd /work/main
. ci/lib/java.sh; export JAVA_HOME SLUICE_JVM_FLAGS
out=benchmarks/results/fetcher-ab-20261204
for round in 1 2 3; do
  for v in old new; do
    cp /tmp/jars/sluice-$v.jar engine/target/sluice.jar
    echo "=== latency round $round $v $(date -u +%T)"
    LATENCY_ENGINES="Sluice at-least-once" LATENCY_MAX_RATE=538355 python3 benchmarks/latency_bench.py 20 0.5 2>&1 | grep -E "p99|failed|Error|Sluice" | tail -3
    for f in benchmarks/results/latency-*; do git ls-files --error-unmatch "$f" >/dev/null 2>&1 || mv "$f" "$out/$v-r$round-$(basename "$f")"; done
  done
done
cp /tmp/jars/sluice-new.jar engine/target/sluice.jar
echo done
