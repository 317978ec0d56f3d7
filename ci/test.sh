#!/usr/bin/env bash
# The whole test suite: Rust unit tests, then the Maven build (which compiles the native core
# into the engine JAR) with every JUnit test, then the quick start through the launcher.
# Cargo's target directory defaults to ~/.cache/sluice/cargo-target so repeated runs and CI reuse it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. ci/lib/java.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sluice/cargo-target}
command -v cargo >/dev/null || { echo "ci/test.sh: cargo not found; install Rust (rustup) first" >&2; exit 1; }
command -v mvn >/dev/null || { echo "ci/test.sh: mvn not found; install Maven 3.8+ first" >&2; exit 1; }
echo "== JDK: $JAVA_HOME; cargo target: $CARGO_TARGET_DIR"

# clippy and rustfmt are rustup components that a minimal toolchain lacks.
if ! cargo clippy --version >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
  command -v rustup >/dev/null || { echo "ci/test.sh: needs cargo clippy and cargo fmt (rustup components clippy, rustfmt)" >&2; exit 1; }
  rustup component add clippy rustfmt
fi

echo "== Java: format (Spotless, palantir-java-format; mvn spotless:apply fixes it)"
mvn -B -ntp -q -Dstyle.color=never spotless:check

echo "== Rust: format (rust/rustfmt.toml) and clippy, warnings are errors"
cargo fmt --manifest-path rust/Cargo.toml --all -- --check
cargo clippy --release --locked --manifest-path rust/Cargo.toml --all-targets -- -D warnings

echo "== Rust: cargo test (release profile, no LTO: shares the build with the engine JAR)"
cargo test --release --locked --manifest-path rust/Cargo.toml

echo "== Rust: the native heap ends where it started after 1 M ABI cycles (counting allocator)"
cargo test --release --locked --manifest-path rust/Cargo.toml -p sluice-core --features alloc-stats --test native_memory

echo "== C header: rust/core/include/sluice.h matches what cbindgen generates"
cargo run --quiet --release --locked --manifest-path rust/header-check/Cargo.toml -- check
echo "== Bridges: CoreBridge, FfmCoreBridge, JniCoreBridge and jni_bridge.rs match sluice.h (bridge/generate.py)"
python3 bridge/generate.py --check

echo "== Benchmarks: the Nexmark parity normalization (numbers apart from strings, timestamps keep their zone), the steady window, perf samples read, the rounds' engine order"
(cd benchmarks/nexmark && python3 -m unittest -q test_normalize test_measure)
(cd benchmarks && python3 -m unittest -q test_kafka_profile test_nexmark_order)

echo "== Deploy: the Kubernetes manifests against the Kubernetes schemas (ci/check-manifests.sh)"
bash ci/check-manifests.sh

echo "== Kafka: a real single-node broker for the Kafka tests (ci/kafka.sh)"
bash ci/kafka.sh restart --fresh
# One EXIT trap stops both servers (a second trap would replace the first).
trap 'bash ci/kafka.sh stop || true; bash ci/postgres.sh stop' EXIT
SLUICE_KAFKA_BOOTSTRAP=$(bash ci/kafka.sh bootstrap)
SLUICE_KAFKA_SASL_BOOTSTRAP=$(bash ci/kafka.sh sasl-bootstrap)
export SLUICE_KAFKA_BOOTSTRAP SLUICE_KAFKA_SASL_BOOTSTRAP

echo "== PostgreSQL: a throwaway cluster for the PostgreSQL tests (ci/postgres.sh; installs the package if missing)"
bash ci/postgres.sh restart --fresh
SLUICE_PG_URL=$(bash ci/postgres.sh url)
export SLUICE_PG_URL

echo "== Browser and terminal for the inspect UI tests: Debian's chromium + chromium-driver, tmux (ci/ui-tools.sh)"
eval "$(bash ci/ui-tools.sh ensure)"
export SLUICE_CHROMIUM="$CHROMIUM" SLUICE_CHROMEDRIVER="$CHROMEDRIVER"
# Here a missing browser or tmux fails those tests instead of skipping them.
export SLUICE_UI_TESTS_REQUIRED=1

echo "== Java: mvn verify (builds the native core into the JAR, runs the JUnit suites)"
mvn -B -ntp verify

echo "== Quick start through the launcher"
out=$(mktemp -d)
./sluice run examples/quickstart.yaml > "$out/stdout.jsonl" 2> "$out/stderr.txt" || { cat "$out/stderr.txt" >&2; exit 1; }
rows=$(wc -l < "$out/stdout.jsonl")
[ "$rows" -gt 0 ] || { echo "quickstart printed no rows" >&2; cat "$out/stderr.txt" >&2; exit 1; }
head -n 3 "$out/stdout.jsonl"
tail -n 4 "$out/stderr.txt"
./sluice validate examples/quickstart.yaml
# The JAR finds every stage type through ServiceLoader: the shade plugin must merge META-INF/services.
./sluice config-docs | diff -u docs/configuration.md - || { echo "the JAR's stage types differ from docs/configuration.md" >&2; exit 1; }

echo "== Launcher: no command, a JRE, stale JARs, missing tools (ci/launcher-test.sh)"
bash ci/launcher-test.sh
echo "== all tests passed"
