#!/usr/bin/env bash
# Kafka Streams peer of the Nexmark side-by-side benchmark. Builds target/kstreams-nexmark.jar
# when it is missing or older than the sources (quiet), then runs one query over the input
# topic's records present at start and exits:
#   run.sh --bootstrap HOST:PORT --query QNAME --input TOPIC --output TOPIC [--threads N] [--side-input FILE.csv] [--app-id ID]
# Last stdout line: {"engine":"kafka-streams","query":..,"threads":N,"seconds":..,...}.
# `run.sh --build` only builds (so a benchmark can build before it measures).
# Same JDK as Sluice (ci/lib/java.sh); extra JVM options in KSTREAMS_JAVA_OPTS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../../ci/lib/java.sh"
jar="$here/target/kstreams-nexmark.jar"
if [ ! -f "$jar" ] || [ -n "$(find "$here/pom.xml" "$here/src/main" -newer "$jar" -print -quit)" ]; then
  if ! log=$(cd "$here" && mvn -q -B -ntp -Dstyle.color=never package -DskipTests 2>&1); then
    echo "$log" >&2; echo "run.sh: building the Kafka Streams peer failed" >&2; exit 1
  fi
fi
[ "${1:-}" = "--build" ] && exit 0
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" ${KSTREAMS_JAVA_OPTS:-} -jar "$jar" "$@"
