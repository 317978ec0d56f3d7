#!/usr/bin/env bash
# A real, throwaway PostgreSQL server for tests: Debian's `postgresql` package (installed when
# missing), one cluster under the build tree, on 127.0.0.1 and a port that is not 5432. No Docker,
# no embedded stand-in. See `ci/postgres.sh help`.
#
# Layout under $SLUICE_PG_HOME (default <repo>/target/postgres; owned by the postgres user when run
# as root, because the server refuses to run as root):
#   data/           the cluster (initdb once; --fresh wipes it)
#   server.log      the server's log (server.log.1: the run before)
#   server.env      the port it was started with
#   postmaster.pid lives in data/ (the server writes it); its first line is the PID
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  cat <<'EOF'
Usage: ci/postgres.sh COMMAND [OPTIONS]

A throwaway PostgreSQL cluster on 127.0.0.1 for tests, from Debian's postgresql package.

Commands:
  start [--fresh]    install postgresql if missing (apt-get), initdb once, start the server in the
                     background and wait until it accepts connections (--fresh: wipe the cluster first)
  stop               stop the server by its PID (SIGINT: fast shutdown; SIGKILL after 30 s);
                     exit 0 if nothing was running
  status             print running/stopped, PID and JDBC URL; exit 0 running, 3 stopped
  restart            stop, then start keeping the data (simulates a database restart)
  url                print the JDBC URL, e.g. for export SLUICE_PG_URL=$(ci/postgres.sh url)
  psql [ARGS...]     run psql against the server as user postgres (database postgres)

Options (before or after the command):
  --port N           port, default 55432 (never 5432, a user's own server)   [env SLUICE_PG_PORT]
  --timeout S        start: seconds to wait for readiness, 60                [env SLUICE_PG_START_TIMEOUT]

Environment:
  SLUICE_PG_HOME     work dir, default <repo>/target/postgres
  SLUICE_PG_BIN      the server's bin directory, default the newest /usr/lib/postgresql/*/bin
EOF
}

say() { echo "postgres.sh: $*" >&2; }   # progress goes to stderr: stdout is for tool output
die() { echo "postgres.sh: error: $1" >&2; exit "${2:-1}"; }

cmd=""; args=(); fresh=0
port=${SLUICE_PG_PORT:-}; start_timeout=${SLUICE_PG_START_TIMEOUT:-60}
while [ $# -gt 0 ]; do
  if [ "$cmd" = psql ]; then args+=("$@"); break; fi   # psql's own arguments, verbatim
  case "$1" in
    --port) [ $# -ge 2 ] || die "--port needs a value"; port=$2; shift 2 ;;
    --port=*) port=${1#*=}; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; start_timeout=$2; shift 2 ;;
    --timeout=*) start_timeout=${1#*=}; shift ;;
    --fresh) fresh=1; shift ;;
    -h|--help|help) usage; exit 0 ;;
    *) if [ -z "$cmd" ]; then cmd=$1; else die "unexpected argument '$1'" 2; fi; shift ;;
  esac
done
[ -n "$cmd" ] || { usage >&2; exit 2; }
for v in "${port:-1}" "$start_timeout"; do
  case "$v" in ''|*[!0-9]*) die "not a number: '$v'" 2 ;; esac
done

home=${SLUICE_PG_HOME:-$root/target/postgres}
case "$home" in /*) ;; *) home="$PWD/$home" ;; esac
data="$home/data"; log="$home/server.log"; envfile="$home/server.env"

# Port: flag/env, else the one this work dir last started with, else 55432.
last_port=""
[ -f "$envfile" ] && last_port=$(sed -n 's/^port=//p' "$envfile")
port=${port:-${last_port:-55432}}
[ "$port" != 5432 ] || die "port 5432 is left to a user's own server; choose another with --port" 2
url="jdbc:postgresql://127.0.0.1:$port/postgres"

# ---- the package and who runs the server -----------------------------------------------------
bindir() { # The server's bin directory (Debian keeps initdb and pg_ctl off PATH).
  if [ -n "${SLUICE_PG_BIN:-}" ]; then echo "$SLUICE_PG_BIN"; return 0; fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && echo "$d"
}

ensure_installed() {
  bin=$(bindir || true)
  if [ -z "$bin" ]; then
    [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and installing it needs root: apt-get install -y postgresql"
    command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get; install the server (initdb, pg_ctl) and set SLUICE_PG_BIN"
    say "installing Debian's postgresql package (first use only)"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >"$home/apt.log" 2>&1 \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >>"$home/apt.log" 2>&1 \
      || { tail -n 30 "$home/apt.log" >&2; die "apt-get could not install postgresql (log above, also in $home/apt.log)"; }
    bin=$(bindir || true)
    [ -n "$bin" ] || die "postgresql installed, but no /usr/lib/postgresql/*/bin/initdb was found"
  fi
}

# The server refuses to run as root: as root, the cluster belongs to the postgres user.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    getent passwd postgres >/dev/null || die "running as root but there is no postgres user (the package creates it)"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

prepare_home() {
  mkdir -p "$home"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$home"
    # The server must reach its directory: every parent needs search permission for "others".
    local d=$home
    while [ "$d" != / ]; do
      d=$(dirname "$d")
      if [ -n "$(find "$d" -maxdepth 0 ! -perm -o+x 2>/dev/null)" ]; then
        die "$d is not searchable by other users, so the postgres user cannot reach $home; set SLUICE_PG_HOME elsewhere"
      fi
    done
  fi
}

# ---- processes -------------------------------------------------------------------------------
our_pid() { # Prints the postmaster's PID from data/postmaster.pid if it is alive and ours.
  local pid exe
  [ -r "$data/postmaster.pid" ] || return 1
  pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  [ -r "/proc/$pid/cmdline" ] || return 1
  # Ours: a postgres process started with -D this data directory.
  tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | grep -qxF "$data" || return 1
  exe=$(tr '\0' '\n' < "/proc/$pid/cmdline" | head -n 1)
  case "$exe" in */postgres|postgres) ;; *) return 1 ;; esac
  echo "$pid"
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

ready() { # The server answers queries (pg_isready would also say yes while it is starting up).
  as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -XqAt -c 'select 1' >/dev/null 2>&1
}

cmd_start() {
  ensure_installed
  prepare_home
  local pid running_port
  if pid=$(our_pid); then
    [ "$fresh" = 0 ] || die "--fresh wipes the cluster, but the server is running (PID $pid): use restart --fresh" 2
    running_port=$(sed -n 's/^port=//p' "$envfile" 2>/dev/null || true)
    if [ -n "$running_port" ] && [ "$running_port" != "$port" ]; then
      die "a server of $home is already running on port $running_port (PID $pid), not $port; stop it first"
    fi
    say "already running (PID $pid, $url)"; return 0
  fi
  if port_open "$port"; then
    die "port $port on 127.0.0.1 is already in use, not by a server of $home; choose another with --port (or SLUICE_PG_PORT)"
  fi
  if [ "$fresh" = 1 ] && [ -d "$data" ]; then say "--fresh: wiping $data"; rm -rf "$data"; fi
  if [ ! -f "$data/PG_VERSION" ]; then
    if [ -d "$data" ] && [ -n "$(ls -A "$data" 2>/dev/null)" ]; then
      die "$data is not empty but holds no cluster; start --fresh wipes it"
    fi
    as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$home/initdb.log" 2>&1 \
      || { cat "$home/initdb.log" >&2; die "initdb failed (log above)"; }
    say "initialized a cluster in $data"
  fi
  [ -f "$log" ] && mv -f "$log" "$log.1"
  printf 'port=%s\n' "$port" > "$envfile"
  local t0; t0=$(date +%s%N)
  # Small settings for tests; fsync stays on (a kill -9 test relies on committed rows surviving).
  as_owner "$bin/pg_ctl" -D "$data" -l "$log" -w -t "$start_timeout" -s \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$data -c max_connections=200 -c shared_buffers=64MB" \
    start 9>&- || { tail -n 30 "$log" >&2 2>/dev/null; die "the server did not start (log above, in $log)"; }
  local deadline=$((SECONDS + start_timeout))
  until ready; do
    [ $SECONDS -lt $deadline ] || { tail -n 30 "$log" >&2; die "the server did not accept queries within $start_timeout s"; }
    sleep 0.2
  done
  pid=$(our_pid) || die "the server started but $data/postmaster.pid names no live server"
  local ds=$(( ($(date +%s%N) - t0) / 100000000 ))
  say "ready in $((ds / 10)).$((ds % 10)) s (PID $pid, $url, user postgres, no password)"
}

cmd_stop() {
  local pid i
  if ! pid=$(our_pid); then say "not running"; return 0; fi
  say "stopping PID $pid"
  kill -INT "$pid" 2>/dev/null || true   # fast shutdown: rolls back open transactions, checkpoints
  for ((i = 0; i < 300; i++)); do
    [ -d "/proc/$pid" ] || break
    sleep 0.1
  done
  if [ -d "/proc/$pid" ]; then
    say "still running after 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  fi
  [ -d "/proc/$pid" ] && die "PID $pid survived SIGKILL"
  say "stopped"
}

cmd_status() {
  local pid
  if pid=$(our_pid); then
    if port_open "$port"; then
      echo "postgres.sh: running (PID $pid, $url, data $data)"
    else
      echo "postgres.sh: running (PID $pid) but 127.0.0.1:$port is not accepting connections yet"
    fi
    return 0
  fi
  echo "postgres.sh: stopped (URL would be $url; work dir $home)"
  return 3
}

cmd_psql() {
  bin=$(bindir || true)
  local psql=${bin:+$bin/psql}
  [ -n "$psql" ] || psql=$(command -v psql) || die "psql not found (ci/postgres.sh start installs it)"
  port_open "$port" || die "no server on 127.0.0.1:$port (start one with ci/postgres.sh start, or pass --port)"
  exec "$psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres "${args[@]}"
}

lock() { # start/stop/restart of one work dir never overlap.
  mkdir -p "$home"
  command -v flock >/dev/null || return 0
  exec 9>"$home/.lock"
  flock -w 120 9 || die "another ci/postgres.sh holds $home/.lock"
}

case "$cmd" in
  start) lock; cmd_start ;;
  stop) lock; cmd_stop ;;
  status) cmd_status ;;
  restart) lock; cmd_stop; cmd_start ;;
  url) echo "$url" ;;
  psql) cmd_psql ;;
  *) die "unknown command '$cmd' (ci/postgres.sh help lists them)" 2 ;;
esac
