# Sourced by ./sluice, ci/test.sh and benchmarks/run.sh: finds a JDK >= 22 and the JVM flags.
# Order: $JAVA_HOME if it is >= 22, then the newest JDK >= 22 under /usr/lib/jvm (or
# $SLUICE_JVM_DIR). Exports JAVA_HOME and PATH; defines SLUICE_JVM_FLAGS.

sluice_java_major() {
  # Prints the feature version of the java at $1/bin/java, or nothing.
  local release="$1/release"
  if [ -f "$release" ]; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release"
  elif [ -x "$1/bin/java" ]; then
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'
  fi
}

sluice_find_jdk() {
  local candidate major best="" best_major=0
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    major=$(sluice_java_major "$JAVA_HOME")
    if [ -n "$major" ] && [ "$major" -ge 22 ]; then
      echo "$JAVA_HOME"; return 0
    fi
  fi
  for candidate in "${SLUICE_JVM_DIR:-/usr/lib/jvm}"/*; do
    [ -x "$candidate/bin/javac" ] || continue
    major=$(sluice_java_major "$candidate")
    [ -n "$major" ] || continue
    if [ "$major" -ge 22 ] && [ "$major" -gt "$best_major" ]; then
      best=$candidate; best_major=$major
    fi
  done
  [ -n "$best" ] && { echo "$best"; return 0; }
  return 1
}

if ! SLUICE_JAVA_HOME=$(sluice_find_jdk); then
  echo "sluice: no JDK 22 or newer found (JAVA_HOME=${JAVA_HOME:-unset}, searched ${SLUICE_JVM_DIR:-/usr/lib/jvm})." >&2
  echo "sluice: install one (e.g. Temurin 25) and set JAVA_HOME to it." >&2
  exit 1
fi
export JAVA_HOME=$SLUICE_JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

# The flags Arrow Java and FFM need; --sun-misc-unsafe-memory-access exists from JDK 23 on.
SLUICE_JVM_FLAGS="--enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED"
if [ "$(sluice_java_major "$JAVA_HOME")" -ge 23 ]; then
  SLUICE_JVM_FLAGS="$SLUICE_JVM_FLAGS --sun-misc-unsafe-memory-access=allow"
  # Silences Maven's own Unsafe warning on JDK 23+.
  case "${MAVEN_OPTS:-}" in *sun-misc-unsafe*) ;; *) export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" ;; esac
fi
