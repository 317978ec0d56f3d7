#!/bin/bash
# Latency A/B of 2026-12-05, evening: Sluice at-least-once alone at 10 % and 50 % of the maximum measured
# on 2026-12-03 (538 355 events/s), the new default group protocol (KIP-848 consumer, a34e011)
# against group.protocol=classic (the default before), rounds in ABBA order.
cd /work/main
. ci/lib/java.sh; export JAVA_HOME SLUICE_JVM_FLAGS
out=benchmarks/results/group-protocol-20261205
for round in ${ROUNDS:-1 2 3 4}; do
  if (( round % 2 )); then order="consumer classic"; else order="classic consumer"; fi
  for v in $order; do
    if [ $v = classic ]; then props="group.protocol=classic"; else props=""; fi
    echo "=== latency round $round $v $(date -u +%T)"
    LATENCY_SOURCE_PROPERTIES="$props" LATENCY_ENGINES="Sluice at-least-once" LATENCY_MAX_RATE=538355 \
      python3 benchmarks/latency_bench.py 20 0.1,0.5 2>&1 | grep -E "^\| *(10|50) %|failed|Error" | tail -4
    for f in benchmarks/results/latency-*; do git ls-files --error-unmatch "$f" >/dev/null 2>&1 || mv "$f" "$out/$v-r$round-$(basename "$f")"; done
  done
done
echo done
