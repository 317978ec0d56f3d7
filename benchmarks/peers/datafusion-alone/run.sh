#!/usr/bin/env bash
# "DataFusion alone" peer: Sluice's Nexmark generator -> Sluice's SQL transform -> discard, in
# one Rust process (no JVM, no Kafka). Builds rust/nexmark-alone on first use (cargo is
# incremental: a no-op when nothing changed), then runs it with the arguments given:
#   run.sh --query-sql "SQL" --events N [--batch-size B] [--seed S] [--side-input FILE.csv [--side-table NAME]]
# `run.sh --build` only builds (so a benchmark can build before it measures).
# Prints one JSON line: {"engine":"datafusion-alone","events":..,"rows_out":..,"seconds":..}.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sluice/cargo-target}
"$root/rust/cargo-build.sh" release --quiet -p nexmark-alone
[ "${1:-}" = "--build" ] && exit 0
exec "$CARGO_TARGET_DIR/release/nexmark-alone" "$@"
