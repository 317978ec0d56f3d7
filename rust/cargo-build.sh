#!/usr/bin/env bash
# `cargo build` of this checkout's Rust workspace, safe in a target directory that other
# checkouts share (CARGO_TARGET_DIR, ~/.cache/sluice/cargo-target under the Maven build, so that
# worktrees and CI's clones compile DataFusion once).
#   cargo-build.sh PROFILE [cargo build arguments...]
# Cargo names a workspace member's artifacts the same in every checkout (a cdylib carries no hash
# at all: deps/libsluice_core.so), and can call this checkout's crate fresh after another checkout
# rebuilt it: the library this checkout then packaged was the other's (2026-12-06: a JAR took a
# worktree's core, of another ABI version). So when another checkout built this profile last, the
# workspace's artifacts are cleaned first; cargo then builds this checkout's. Build one checkout
# at a time in a shared target directory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
profile=${1:?usage: cargo-build.sh PROFILE [cargo build arguments...]}
shift
command -v cargo >/dev/null || { echo "cargo-build.sh: cargo not found on PATH; install Rust (rustup) first" >&2; exit 1; }
target_dir=$(cargo metadata --quiet --format-version 1 --no-deps --locked --manifest-path "$here/Cargo.toml" |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -n "$target_dir" ] || { echo "cargo-build.sh: cannot find Cargo's target directory" >&2; exit 1; }
profile_dir=$profile
[ "$profile" = dev ] && profile_dir=debug
stamp="$target_dir/$profile_dir/.sluice-workspace" # the workspace that built this profile last
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$here" ]; then
  cargo clean --quiet --manifest-path "$here/Cargo.toml" --workspace --profile "$profile" --locked
fi
cargo build --manifest-path "$here/Cargo.toml" --profile "$profile" --locked "$@"
mkdir -p "$target_dir/$profile_dir"
printf '%s\n' "$here" > "$stamp"
