#!/usr/bin/env bash
# The launcher's own cost at commit REV: its `sluice` and ci/lib/java.sh in a scratch tree, an
# empty JAR, a stand-in Java whose `java` exits at once; RUNS runs of `sluice run P --state-dir S`
# with SLUICE_BUILD=never (default 20), then once with SLUICE_BUILD=auto. Prints the mean ms per
# run of each, and the programs the never-run executes (strace, when installed).
#   bash launcher_time.sh REV [RUNS]      (from the repository)
set -euo pipefail
rev=$1 runs=${2:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree/ci/lib" "$work/tree/engine/target" "$work/java/bin" "$work/cache"
git show "$rev:sluice" > "$work/tree/sluice"
git show "$rev:ci/lib/java.sh" > "$work/tree/ci/lib/java.sh"
chmod +x "$work/tree/sluice"
: > "$work/tree/engine/target/sluice.jar"
printf 'JAVA_VERSION="25.0.3"\n' > "$work/java/release"
printf '#!/bin/sh\nexit 0\n' > "$work/java/bin/java"
chmod +x "$work/java/bin/java"
echo '{}' > "$work/p.json"
launch() { JAVA_HOME="$work/java" XDG_CACHE_HOME="$work/cache" SLUICE_BUILD=$1 "$work/tree/sluice" run "$work/p.json" --state-dir "$work/s"; }
for mode in never auto; do
  launch "$mode" # the cache directory exists from here on, as after a first run
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do launch "$mode"; done
  end=$(date +%s%N)
  echo "$rev SLUICE_BUILD=$mode: $(( (end - start) / runs / 1000 )) us per run (mean of $runs)"
done
if command -v strace >/dev/null; then
  strace -f -e trace=execve -o "$work/trace" env JAVA_HOME="$work/java" XDG_CACHE_HOME="$work/cache" \
    SLUICE_BUILD=never "$work/tree/sluice" run "$work/p.json" --state-dir "$work/s"
  echo "$rev programs started (SLUICE_BUILD=never): $(grep -v ENOENT "$work/trace" | grep -o 'execve("[^"]*"' \
    | sed 's/execve("//; s/"$//; s#.*/##' | sort | uniq -c | tr -s ' \n' ' ')"
fi
