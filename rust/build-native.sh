#!/usr/bin/env bash
# Builds the native core (rust/core) and copies libsluice_core.so into the directory given.
# Called by the engine's Maven build; CARGO_TARGET_DIR (default ~/.cache/sluice/cargo-target)
# and SLUICE_CARGO_PROFILE (default release) choose where and how.
set -euo pipefail
out_dir=${1:?usage: build-native.sh OUTPUT_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
profile=${SLUICE_CARGO_PROFILE:-release}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sluice/cargo-target}
command -v cargo >/dev/null || { echo "build-native.sh: cargo not found on PATH; install Rust (rustup) first" >&2; exit 1; }
cargo build --quiet --manifest-path "$here/Cargo.toml" -p sluice-core --profile "$profile" --locked
lib="$CARGO_TARGET_DIR/$profile/libsluice_core.so"
[ -f "$lib" ] || { echo "build-native.sh: $lib was not built" >&2; exit 1; }
mkdir -p "$out_dir"
cp -p "$lib" "$out_dir/libsluice_core.so"
