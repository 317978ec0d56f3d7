# Sourced by ./sluice, ci/test.sh, ci/kafka.sh and benchmarks/run.sh: finds a Java >= 22 and the
# JVM flags. Order: $JAVA_HOME if it is >= 22, then the newest Java >= 22 under /usr/lib/jvm (or
# $SLUICE_JVM_DIR). SLUICE_JAVA_KIND=jdk (the default: the scripts build, so javac is needed) or
# jre (only bin/java: the launcher when the JAR needs no build). Exports JAVA_HOME and PATH;
# defines SLUICE_JVM_FLAGS and SLUICE_JAVA_MAJOR (the Java's feature version). The java on PATH
# is not used: it is often an older default.

sluice_java_major() {
  # Prints the feature version of the java at $1/bin/java, or nothing.
  local release="$1/release" line
  if [ -f "$release" ]; then
    # bash's own matching, not sed: the launcher runs this at every start.
    while IFS= read -r line || [ -n "$line" ]; do
      if [[ $line =~ ^JAVA_VERSION=\"([0-9]+) ]]; then
        echo "${BASH_REMATCH[1]}"
        return 0
      fi
    done < "$release"
  elif [ -x "$1/bin/java" ]; then
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'
  fi
}

sluice_find_java() {
  # Prints the home of a Java >= 22 of kind $1 (jdk: has bin/javac; jre: has bin/java), or fails.
  local tool=java candidate major best="" best_major=0
  [ "${1:-jdk}" = jdk ] && tool=javac
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/$tool" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    major=$(sluice_java_major "$JAVA_HOME")
    if [ -n "$major" ] && [ "$major" -ge 22 ]; then
      echo "$JAVA_HOME"; return 0
    fi
  fi
  for candidate in "${SLUICE_JVM_DIR:-/usr/lib/jvm}"/*; do
    [ -x "$candidate/bin/$tool" ] && [ -x "$candidate/bin/java" ] || continue
    major=$(sluice_java_major "$candidate")
    [ -n "$major" ] || continue
    if [ "$major" -ge 22 ] && [ "$major" -gt "$best_major" ]; then
      best=$candidate; best_major=$major
    fi
  done
  [ -n "$best" ] && { echo "$best"; return 0; }
  return 1
}

sluice_java_kind=${SLUICE_JAVA_KIND:-jdk}
if ! SLUICE_JAVA_HOME=$(sluice_find_java "$sluice_java_kind"); then
  if [ "$sluice_java_kind" = jdk ]; then
    echo "sluice: no JDK 22 or newer (with javac) found (JAVA_HOME=${JAVA_HOME:-unset}, searched ${SLUICE_JVM_DIR:-/usr/lib/jvm})." >&2
    echo "sluice: building needs one: install a JDK (e.g. Temurin 25) and set JAVA_HOME to it." >&2
  else
    echo "sluice: no Java 22 or newer found (JAVA_HOME=${JAVA_HOME:-unset}, searched ${SLUICE_JVM_DIR:-/usr/lib/jvm})." >&2
    echo "sluice: install a JRE or JDK 22+ (e.g. Temurin 25) and set JAVA_HOME to it." >&2
  fi
  exit 1
fi
export JAVA_HOME=$SLUICE_JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

# The flags Arrow Java and FFM need; --sun-misc-unsafe-memory-access exists from JDK 23 on.
SLUICE_JVM_FLAGS="--enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED"
SLUICE_JAVA_MAJOR=$(sluice_java_major "$JAVA_HOME")
if [ "$SLUICE_JAVA_MAJOR" -ge 23 ]; then
  SLUICE_JVM_FLAGS="$SLUICE_JVM_FLAGS --sun-misc-unsafe-memory-access=allow"
  # Silences Maven's own Unsafe warning on JDK 23+.
  case "${MAVEN_OPTS:-}" in *sun-misc-unsafe*) ;; *) export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" ;; esac
fi
