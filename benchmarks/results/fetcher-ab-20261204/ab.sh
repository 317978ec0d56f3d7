#!/bin/bash
# The driver of this A/B, as run on 2026-12-04 (rounds 1-2 in the order old, new; then the two
# lines below were edited to rounds 3-4 in the order new, old). Both JARs are the shaded
# engine/target/sluice.jar of commit 91543bb ("new", the Kafka source's Fetcher thread); "old" is
# the same JAR with dev/sluice/connector/kafka/KafkaSource*.class and Fetcher*.class replaced by
# the classes compiled from 9d1b90d (`mvn -pl connectors -am compile` in a clone), the only
# files that differ. Results were moved to /tmp/ab-results and copied here; summarize.py reads them.
cd /work/main
. ci/lib/java.sh; export JAVA_HOME SLUICE_JVM_FLAGS
for round in 1 2; do
  for v in old new; do
    cp /tmp/jars/sluice-$v.jar engine/target/sluice.jar
    echo "=== round $round $v $(date -u +%T)"
    KAFKA_BENCH_REPEATS=3 FIRST_RECORD_RUNS=3 python3 benchmarks/kafka_bench.py 3000000 q0,q1 2>&1 | grep -E "^q[0-9]+:|failed|Error" 
    for f in benchmarks/results/kafka-*; do [ -e "$f" ] && git ls-files --error-unmatch "$f" >/dev/null 2>&1 || mv "$f" /tmp/ab-results/$v-r$round-$(basename $f); done
  done
done
cp /tmp/jars/sluice-new.jar engine/target/sluice.jar
echo done
