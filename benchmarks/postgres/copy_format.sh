#!/usr/bin/env bash
# Server-side cost of COPY's text and binary formats, without a client: ROWS rows of the postgres
# benchmark's shape (id bigint primary key, name text, amount double, at timestamp) written by the
# server to files in both formats, then read back into an empty table with its primary key,
# REPEATS rounds of each in turn; prints each COPY's time as psql's \timing reports it.
#   SLUICE_PG_PORT=... benchmarks/postgres/copy_format.sh [ROWS [REPEATS]]   (default 1000000 3)
# Why the postgres sink writes binary when the table's types allow (PostgresSink, CopyBinary).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rows=${1:-1000000}
repeats=${2:-3}
bash "$root/ci/postgres.sh" start >&2
psql() { bash "$root/ci/postgres.sh" psql -q -v ON_ERROR_STOP=1 "$@"; }
# The server writes the files, so they live where its user can write: a fresh directory under /tmp.
dir=$(mktemp -d /tmp/sluice-copy-format.XXXXXX)
chmod 777 "$dir"
trap 'rm -rf "$dir"' EXIT
psql -c "DROP TABLE IF EXISTS copy_format_src" \
  -c "CREATE TABLE copy_format_src AS SELECT g::bigint AS id, 'n' || g AS name, g / 4.0::double precision AS amount,
        timestamp '2026-12-01' + make_interval(days => g % 9, hours => g % 24, mins => g % 60) AS at
      FROM generate_series(0, $rows - 1) g" \
  -c "COPY copy_format_src TO '$dir/rows.txt'" \
  -c "COPY copy_format_src TO '$dir/rows.bin' (FORMAT binary)"
for round in $(seq 1 "$repeats"); do
  for format in text binary; do
    file=$dir/rows.txt options=""
    [ "$format" = binary ] && file=$dir/rows.bin options=" (FORMAT binary)"
    psql -c "DROP TABLE IF EXISTS copy_format_dst" \
      -c "CREATE TABLE copy_format_dst (id bigint PRIMARY KEY, name text, amount double precision, at timestamp)"
    time=$(psql -c '\timing on' -c "COPY copy_format_dst FROM '$file'$options" | grep -o 'Time: [0-9.]* ms')
    echo "round $round: $format ${time#Time: }"
  done
done
psql -c "DROP TABLE copy_format_src" -c "DROP TABLE copy_format_dst"
