#!/bin/bash
# Latency A/B of 2026-12-05: Sluice at-least-once alone at 10 % and 50 % of the maximum measured
# on 2026-12-03 (538 355 events/s), the source's defaults (fetches wait up to 10 ms for 64 KiB)
# against fetch.min.bytes=1 (a fetch returns as soon as any record is there), rounds in ABBA order.
cd /work/main
. ci/lib/java.sh; export JAVA_HOME SLUICE_JVM_FLAGS
out=benchmarks/results/fetch-min-bytes-20261205
for round in 1 2 3 4; do
  if (( round % 2 )); then order="defaults min1"; else order="min1 defaults"; fi
  for v in $order; do
    if [ $v = min1 ]; then props="fetch.min.bytes=1"; else props=""; fi
    echo "=== latency round $round $v $(date -u +%T)"
    LATENCY_SOURCE_PROPERTIES="$props" LATENCY_ENGINES="Sluice at-least-once" LATENCY_MAX_RATE=538355 \
      python3 benchmarks/latency_bench.py 20 0.1,0.5 2>&1 | grep -E "^\| *(10|50) %|failed|Error" | tail -4
    for f in benchmarks/results/latency-*; do git ls-files --error-unmatch "$f" >/dev/null 2>&1 || mv "$f" "$out/$v-r$round-$(basename "$f")"; done
  done
done
echo done
