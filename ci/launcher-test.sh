#!/usr/bin/env bash
# Tests of the launcher (./sluice) in a scratch copy of its files, with fake build tools and a
# PATH that holds only what the launcher needs: no command gives the usage and exit 2; a JRE
# (java without javac) runs an up-to-date JAR; a JAR older than a source is rebuilt (mvn is
# called) or, without the tools, run with a warning that names what is missing; no JAR and no
# tools is an error naming them; a run writes its start-up cache once, off stdout. Needs
# engine/target/sluice.jar (ci/test.sh runs this after mvn verify). Usage: bash ci/launcher-test.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
real_jar="$root/engine/target/sluice.jar"
[ -f "$real_jar" ] || { echo "launcher-test: build $real_jar first (mvn -DskipTests package)" >&2; exit 1; }
. "$root/ci/lib/java.sh" # a JDK: its java serves the fake JRE below
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "launcher-test: FAIL: $*" >&2
  exit 1
}
passed() { echo "launcher-test: ok: $*"; }

# The tree: the launcher and java.sh, one source per watched place (older than the JAR), the JAR.
tree=$work/tree
mkdir -p "$tree/ci/lib" "$tree/engine/target" "$tree/engine/src/main/java" "$tree/rust/core/src"
cp "$root/sluice" "$tree/sluice"
cp "$root/ci/lib/java.sh" "$tree/ci/lib/java.sh"
touch -d '-2 hours' "$tree/engine/src/main/java/Main.java" "$tree/rust/core/src/lib.rs"
cp "$real_jar" "$tree/engine/target/sluice.jar"
jar=$tree/engine/target/sluice.jar

# Javas: a JRE (bin/java only) and a JDK (the real one).
mkdir -p "$work/jre/jre25/bin" "$work/jdk"
ln -s "$JAVA_HOME/bin/java" "$work/jre/jre25/bin/java"
cp "$JAVA_HOME/release" "$work/jre/jre25/release"
ln -s "$JAVA_HOME" "$work/jdk/jdk"
# PATH: the utilities the launcher uses, and (in tools/) fake mvn and cargo.
mkdir -p "$work/path" "$work/tools"
for tool in bash env dirname find sed cksum cut stat mkdir ls tail head rm touch cat; do
  ln -s "$(command -v "$tool")" "$work/path/$tool"
done
cat > "$work/tools/mvn" <<EOF
#!$(command -v bash)
echo "\$*" >> "$work/mvn.log"
touch "$jar"
EOF
printf '#!%s\nexit 0\n' "$(command -v bash)" > "$work/tools/cargo"
chmod +x "$work/tools/mvn" "$work/tools/cargo"

# sluice JVMS PATH ARGS...: runs the launcher with only those Javas and that PATH.
sluice() {
  local jvms=$1 path=$2
  shift 2
  env -i HOME="$work/home" SLUICE_CDS=off SLUICE_JVM_DIR="$jvms" PATH="$path" "$tree/sluice" "$@" \
    > "$work/stdout" 2> "$work/stderr"
}
no_tools=$work/path
with_tools=$work/tools:$work/path

code=0
sluice "$work/jre" "$no_tools" || code=$?
[ "$code" = 2 ] || fail "no command exited $code, not 2"
grep -q "Usage: sluice" "$work/stderr" || fail "no command printed no usage: $(cat "$work/stderr")"
passed "no command: usage, exit 2"

sluice "$work/jre" "$no_tools" --version || fail "a JRE did not run the JAR: $(cat "$work/stderr")"
grep -q "^sluice " "$work/stdout" || fail "--version printed: $(cat "$work/stdout")"
[ ! -s "$work/stderr" ] || fail "an up-to-date JAR on a JRE printed: $(cat "$work/stderr")"
passed "a JRE runs an up-to-date JAR, without javac, mvn or cargo"

touch "$tree/engine/src/main/java/Main.java"
sluice "$work/jre" "$no_tools" --version || fail "a stale JAR without tools did not run: $(cat "$work/stderr")"
for expected in "is stale: engine/src/main/java/Main.java changed after it was built" "javac" "mvn" "cargo"; do
  grep -qF "$expected" "$work/stderr" || fail "the stale warning lacks '$expected': $(cat "$work/stderr")"
done
passed "a stale JAR without the build tools runs with a warning naming them"

sluice "$work/jdk" "$with_tools" --version || fail "the rebuild failed: $(cat "$work/stderr")"
grep -q "building .*sluice.jar: engine/src/main/java/Main.java changed" "$work/stderr" || fail "no rebuild: $(cat "$work/stderr")"
grep -q -- "-pl engine -am package" "$work/mvn.log" || fail "mvn was called with: $(cat "$work/mvn.log")"
sluice "$work/jdk" "$with_tools" --version || fail "the run after the rebuild failed: $(cat "$work/stderr")"
[ "$(wc -l < "$work/mvn.log")" = 1 ] || fail "rebuilt again though nothing changed: $(cat "$work/mvn.log")"
passed "a stale JAR is rebuilt once with the tools"

sleep 1 # mtimes in whole seconds on some file systems
touch "$tree/rust/core/src/lib.rs"
sluice "$work/jdk" "$with_tools" --version || fail "the rebuild failed: $(cat "$work/stderr")"
grep -q "rust/core/src/lib.rs changed" "$work/stderr" || fail "a native source change went unseen: $(cat "$work/stderr")"
passed "a change to the native core's sources is seen"

# The start-up cache: the first run of a command line writes it (an AOT cache on Java 25+), the
# second maps it; the JVM's messages about it stay off stdout, which carries a stdout sink's rows.
cat > "$tree/rows.yaml" <<'EOF'
name: rows
sources:
  bid: {type: generator, entity: bid, count: 2000, seed: 3}
sinks:
  out: {type: stdout, from: bid}
EOF
cached() {
  (cd "$tree" && env -i HOME="$work/home" SLUICE_JVM_DIR="$work/jdk" PATH="$no_tools" ./sluice run rows.yaml \
    > "$work/stdout" 2> "$work/stderr")
}
cds_dir=$work/home/.cache/sluice/cds
cached || fail "the first cached run failed: $(cat "$work/stderr")"
cache=$(ls "$cds_dir"/sluice-*.aot 2>/dev/null) || fail "the first run wrote no AOT cache: $(ls -la "$cds_dir")"
[ ! -e "$cache.partial" ] || fail "a run with records marked its cache partial"
rows=$(wc -l < "$work/stdout")
[ "$rows" -gt 1000 ] || fail "the first cached run printed $rows rows: $(cat "$work/stderr")"
! grep -v '^{' "$work/stdout" > "$work/not-rows" || fail "the first cached run's stdout holds more than rows: $(head -3 "$work/not-rows")"
cp "$work/stdout" "$work/first-stdout"
written=$(stat -c %Y-%i "$cache")
cached || fail "the second cached run failed: $(cat "$work/stderr")"
cmp -s "$work/stdout" "$work/first-stdout" || fail "the run that mapped the cache printed other rows"
[ "$(stat -c %Y-%i "$cache")" = "$written" ] || fail "the second run wrote the cache again"
[ ! -e "$cache.partial" ] || fail "the run that mapped the cache marked it partial: $(cat "$cache.partial")"
! grep "AOT" "$work/stderr" > "$work/aot-lines" || fail "the run that mapped the cache printed: $(cat "$work/aot-lines")"
passed "the first run of a command line writes its AOT cache (stdout: rows only), the second maps it"

# A cache cut short (a kill while the JVM wrote it) is ignored by the JVM: the run marks it
# partial, and the next run records it again.
head -c 1000000 "$cache" > "$work/cut" && mv "$work/cut" "$cache"
cached || fail "a run given a cut-short cache failed: $(cat "$work/stderr")"
cmp -s "$work/stdout" "$work/first-stdout" || fail "the run given a cut-short cache printed other rows"
[ -e "$cache.partial" ] || fail "a run given a cut-short cache did not mark it partial"
cached || fail "the run after a cut-short cache failed: $(cat "$work/stderr")"
[ ! -e "$cache.partial" ] && [ "$(stat -c %s "$cache")" -gt 1000000 ] \
  || fail "the cut-short cache was not recorded again: $(ls -la "$cds_dir")"
passed "a cache the JVM cannot map is recorded again by the next run"

# RocksDB's question "is the C library musl?" is answered for it when the answer is sure (this
# machine: glibc, no musl libc in /lib), so it starts no shell; a value the user set is kept.
mkdir -p "$work/envjre/jre25/bin"
cp "$JAVA_HOME/release" "$work/envjre/jre25/release"
printf '#!%s\necho "ROCKSDB_MUSL_LIBC=${ROCKSDB_MUSL_LIBC-unset}"\n' "$(command -v bash)" > "$work/envjre/jre25/bin/java"
chmod +x "$work/envjre/jre25/bin/java"
musl_libs=(/lib/libc.musl*)
if ldd --version 2>&1 | grep -q "GNU libc\|GLIBC" && [ ! -e "${musl_libs[0]}" ]; then
  sluice "$work/envjre" "$no_tools" --version || fail "the run with the env-printing java failed: $(cat "$work/stderr")"
  grep -qx "ROCKSDB_MUSL_LIBC=false" "$work/stdout" || fail "on glibc the JVM got $(cat "$work/stdout")"
  env -i HOME="$work/home" SLUICE_CDS=off SLUICE_JVM_DIR="$work/envjre" PATH="$no_tools" ROCKSDB_MUSL_LIBC=true \
    "$tree/sluice" --version > "$work/stdout" 2> "$work/stderr" || fail "the run with a set value failed: $(cat "$work/stderr")"
  grep -qx "ROCKSDB_MUSL_LIBC=true" "$work/stdout" || fail "a value the user set became $(cat "$work/stdout")"
  passed "ROCKSDB_MUSL_LIBC=false on glibc without musl in /lib; a value the user set is kept"
else
  echo "launcher-test: skipped: the ROCKSDB_MUSL_LIBC check (this machine's C library is not plain glibc)"
fi

rm "$jar"
code=0
sluice "$work/jre" "$no_tools" --version || code=$?
[ "$code" = 1 ] || fail "no JAR and no tools exited $code"
grep -q "must be built first, which needs tools that are missing: javac .*; mvn .*; cargo" "$work/stderr" \
  || fail "no JAR and no tools said: $(cat "$work/stderr")"
passed "no JAR and no tools: exit 1 naming javac, mvn and cargo"
echo "launcher-test: all passed"
