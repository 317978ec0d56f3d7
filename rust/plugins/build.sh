#!/usr/bin/env bash
# Builds the example native plugins and copies them into OUTPUT_DIR:
#   libsluice_examples.so   the Rust examples (rust/plugins/examples, with sluice-plugin-sdk)
#   libsluice_c_example.so  the plain C example (rust/plugins/c-example)
# --test also compiles and runs the C example's test harness (test_c_example.c).
# Honours CARGO_TARGET_DIR (and Cargo's own configuration) and CC (default: cc).
set -euo pipefail

usage() {
  echo "usage: rust/plugins/build.sh [--test] OUTPUT_DIR" >&2
  exit 2
}
die() {
  echo "build.sh: error: $*" >&2
  exit 1
}

run_tests=0
out=""
for arg in "$@"; do
  case "$arg" in
    --test) run_tests=1 ;;
    -h | --help) usage ;;
    -*) echo "build.sh: unknown option $arg" >&2; usage ;;
    *) [[ -z "$out" ]] || usage; out=$arg ;;
  esac
done
[[ -n "$out" ]] || usage

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace=$(dirname "$here")
cc=${CC:-cc}

command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH: install a Rust toolchain (rustup) to build the Rust examples"
command -v "$cc" >/dev/null 2>&1 || die "the C compiler '$cc' is not on PATH: install one (e.g. apt-get install gcc) or set CC"

case "$(uname -s)" in
  Darwin) ext=dylib ;;
  *) ext=so ;;
esac

# A relative CARGO_TARGET_DIR means relative to where this script was started.
if [[ -n "${CARGO_TARGET_DIR:-}" && "${CARGO_TARGET_DIR}" != /* ]]; then
  export CARGO_TARGET_DIR="$PWD/$CARGO_TARGET_DIR"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "build.sh: cargo build --release --locked -p sluice-plugin-examples" >&2
"$workspace/cargo-build.sh" release -p sluice-plugin-examples
target_dir=$(cd "$workspace" && cargo metadata --format-version 1 --no-deps --locked |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[[ -n "$target_dir" ]] || die "cannot find Cargo's target directory"
lib="$target_dir/release/libsluice_examples.$ext"
[[ -f "$lib" ]] || die "cargo built no $lib"
cp "$lib" "$out/libsluice_examples.$ext"

cflags=(-std=c11 -Wall -Wextra -Werror -O2)
echo "build.sh: $cc ${cflags[*]} -shared -fPIC c-example/sluice_c_example.c" >&2
"$cc" "${cflags[@]}" -shared -fPIC -o "$out/libsluice_c_example.$ext" "$here/c-example/sluice_c_example.c"

if [[ $run_tests == 1 ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$cc" "${cflags[@]}" -o "$tmp/test_c_example" "$here/c-example/test_c_example.c" "$here/c-example/sluice_c_example.c"
  "$tmp/test_c_example"
fi

echo "build.sh: wrote $out/libsluice_examples.$ext and $out/libsluice_c_example.$ext" >&2
