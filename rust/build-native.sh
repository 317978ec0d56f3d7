#!/usr/bin/env bash
# Builds a native library of the rust workspace and copies it into the directory given:
#   build-native.sh OUTPUT_DIR                 the production core, libsluice_core.so (bridge module,
#                                              into the JAR)
#   build-native.sh --test-exports OUTPUT_DIR  the core plus test-only exports (rust/debug-exports),
#                                              copied as libsluice_core.so (engine's test classes)
#   build-native.sh --bench OUTPUT_DIR         libsluice_bench.so, the call-shape functions of
#                                              rust/bench-abi (benchmarks module)
# Called by the Maven build; CARGO_TARGET_DIR (default ~/.cache/sluice/cargo-target) and
# SLUICE_CARGO_PROFILE (default release) choose where and how. The test-exports build reuses the
# production core's compiled crate (same features and profile) and only links it again.
set -euo pipefail
package=sluice-core built=libsluice_core.so name=libsluice_core.so
case "${1:-}" in
  --test-exports) package=sluice-debug-exports built=libsluice_debug_exports.so; shift ;;
  --bench) package=sluice-bench-abi built=libsluice_bench.so name=libsluice_bench.so; shift ;;
esac
out_dir=${1:?usage: build-native.sh [--test-exports|--bench] OUTPUT_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
profile=${SLUICE_CARGO_PROFILE:-release}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sluice/cargo-target}
"$here/cargo-build.sh" "$profile" --quiet -p "$package"
lib="$CARGO_TARGET_DIR/$profile/$built"
[ -f "$lib" ] || { echo "build-native.sh: $lib was not built" >&2; exit 1; }
mkdir -p "$out_dir"
cp -p "$lib" "$out_dir/$name"
