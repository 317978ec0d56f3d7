#!/usr/bin/env bash
# The Flink SQL peer of the Nexmark comparison: one query over the bid topic in a local
# MiniCluster, on Java 17. Builds target/ on first use (or with --build alone), then runs:
#   run.sh --bootstrap HOST:PORT --query QNAME --input TOPIC --output TOPIC [--parallelism N] [--side-input FILE.csv]
# Prints one JSON line on stdout when the job has finished; logs (WARN and up) go to stderr.
# Env: FLINK_PEER_JAVA_HOME (a JDK 17; default /usr/lib/jvm/java-17-openjdk-amd64),
#      FLINK_PEER_HEAP (default 2g), FLINK_PEER_JAVA_OPTS (extra JVM options).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

java_home=${FLINK_PEER_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
release=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$java_home/release" 2>/dev/null || true)
if [ "$release" != 17 ] || [ ! -x "$java_home/bin/javac" ]; then
  echo "flink peer: no JDK 17 at $java_home (found version '${release:-none}'); set FLINK_PEER_JAVA_HOME" >&2
  exit 1
fi

jar="$here/target/flink-peer.jar"
build() {
  # Offline first (the usual case once the dependencies are in ~/.m2), then online.
  # Maven runs on the JDK 17: without the JDK 23+ flag ci/lib/java.sh puts in MAVEN_OPTS.
  maven_opts=${MAVEN_OPTS:-}
  maven_opts=${maven_opts//--sun-misc-unsafe-memory-access=allow/}
  (cd "$here" && { MAVEN_OPTS=$maven_opts JAVA_HOME=$java_home mvn -q -B -ntp -o package >/dev/null 2>&1 \
      || MAVEN_OPTS=$maven_opts JAVA_HOME=$java_home mvn -q -B -ntp package >&2; })
}
stale=$(find "$here/pom.xml" "$here/src" -newer "$jar" -print -quit 2>/dev/null || echo missing)
if [ ! -f "$jar" ] || [ ! -d "$here/target/lib" ] || [ -n "$stale" ]; then
  echo "flink peer: building $jar ..." >&2
  build
fi
if [ "${1:-}" = --build ] && [ $# -eq 1 ]; then
  exit 0
fi

# Flink's JVM options for Java 17: the `env.java.opts.all` list of Flink's config.yaml
# (flink-dist/src/main/resources/config.yaml), which bin/config.sh passes to every Flink JVM.
flink_java17_opts=(
  --add-exports=java.base/sun.net.util=ALL-UNNAMED
  --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED
)
# A fixed ceiling, not a fixed size: with -Xms equal to it, G1 touches the whole young
# generation and the RSS the orchestrator reads would be the heap size, not what the job needs.
heap=${FLINK_PEER_HEAP:-2g}

# Flink unpacks jars (its RPC system, the planner) and the MiniCluster's working files into
# java.io.tmpdir on every start and leaves some behind: give each run its own directory, named
# by this process id (the JVM's after exec), and remove those of runs that have ended.
tmp_root="$here/target/tmp"
mkdir -p "$tmp_root"
for dir in "$tmp_root"/*; do
  if [ -d "$dir" ] && ! kill -0 "${dir##*/}" 2>/dev/null; then rm -rf "$dir"; fi
done
run_tmp="$tmp_root/$$"
mkdir -p "$run_tmp"
# exec: the orchestrator reads this process's CPU and RSS from /proc, so it must be the JVM.
# shellcheck disable=SC2086
exec "$java_home/bin/java" "${flink_java17_opts[@]}" -Xmx"$heap" -Djava.io.tmpdir="$run_tmp" ${FLINK_PEER_JAVA_OPTS:-} \
  -cp "$jar:$here/target/lib/*" dev.sluice.peers.flink.FlinkNexmarkPeer "$@"
