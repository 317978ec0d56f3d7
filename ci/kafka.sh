#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft, broker+controller in one JVM) for tests, built only
# from Maven Central jars: no Docker, no Kafka download. See `ci/kafka.sh help`.
#
# Layout under $SLUICE_KAFKA_HOME (default <repo>/target/kafka):
#   libs/              the broker and tool jars (fetched once, see ci/kafka/pom.xml)
#   data/              log.dirs; meta.properties there holds the cluster id
#   server.properties  written on every start; broker.env: the ports it was started with
#   broker.pid, broker.log (broker.log.1: the run before)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pom="$root/ci/kafka/pom.xml"

usage() {
  cat <<'EOF'
Usage: ci/kafka.sh COMMAND [OPTIONS]

A single-node Apache Kafka broker (KRaft) on 127.0.0.1 for tests, from Maven Central jars.

Commands:
  start [--fresh]            fetch the jars if needed, format storage once, start the broker in the
                             background and wait until a client can reach it (--fresh: wipe data first)
  stop                       SIGTERM the broker, SIGKILL after 20 s; exit 0 if nothing was running
  status                     print running/stopped, PID and bootstrap address; exit 0 running, 3 stopped
  restart                    stop, then start keeping the data (simulates a broker restart)
  bootstrap                  print the bootstrap address, e.g. for
                             export SLUICE_KAFKA_BOOTSTRAP=$(ci/kafka.sh bootstrap)
  sasl-bootstrap             print the SASL listener's host:port. It takes SASL/PLAIN users
                             admin/admin-secret (super user) and alice/alice-secret (no ACLs),
                             so clients can test authorization errors; PLAINTEXT stays open
  topics create NAME [--partitions N] [--config K=V]...
  topics list | describe [NAME] | delete NAME
  produce TOPIC              send stdin lines as records ("key<TAB>value" lines with --keys)
  consume TOPIC [--max N] [--timeout-ms MS] [--keys]
                             print records from the beginning (default: stop after 10 s idle)
  tool CLASS [ARGS...]       run any Kafka tool class on the broker's classpath, e.g.
                             tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server 127.0.0.1:9092
  fetch                      only fetch the jars

Options (before or after the command):
  --port N                   client (PLAINTEXT) port, default 9092    [env SLUICE_KAFKA_PORT]
  --controller-port N        KRaft controller port, default 9093      [env SLUICE_KAFKA_CONTROLLER_PORT]
  --sasl-port N              SASL_PLAINTEXT port with ACLs, default client port + 2 [env SLUICE_KAFKA_SASL_PORT]
  --timeout S                start: seconds to wait for readiness, 60 [env SLUICE_KAFKA_START_TIMEOUT]

Environment:
  SLUICE_KAFKA_HOME          work dir, default <repo>/target/kafka
  SLUICE_KAFKA_HEAP          broker -Xmx, default 512m
  SLUICE_KAFKA_CACHE         shared jar cache, default ~/.cache/sluice/kafka-<version>; "none" disables
  SLUICE_KAFKA_EXTRA_CONFIG  a properties file appended to server.properties on start
EOF
}

say() { echo "kafka.sh: $*" >&2; }   # progress goes to stderr: stdout is for tool output
die() { echo "kafka.sh: error: $1" >&2; exit "${2:-1}"; }

# ---- arguments -------------------------------------------------------------------------------
cmd=""; args=(); fresh=0
port=${SLUICE_KAFKA_PORT:-}; cport=${SLUICE_KAFKA_CONTROLLER_PORT:-}; sport=${SLUICE_KAFKA_SASL_PORT:-}
start_timeout=${SLUICE_KAFKA_START_TIMEOUT:-60}
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || die "--port needs a value"; port=$2; shift 2 ;;
    --port=*) port=${1#*=}; shift ;;
    --controller-port) [ $# -ge 2 ] || die "--controller-port needs a value"; cport=$2; shift 2 ;;
    --controller-port=*) cport=${1#*=}; shift ;;
    --sasl-port) [ $# -ge 2 ] || die "--sasl-port needs a value"; sport=$2; shift 2 ;;
    --sasl-port=*) sport=${1#*=}; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; start_timeout=$2; shift 2 ;;
    --timeout=*) start_timeout=${1#*=}; shift ;;
    --fresh) fresh=1; shift ;;
    -h|--help|help) usage; exit 0 ;;
    *) if [ -z "$cmd" ]; then cmd=$1; else args+=("$1"); fi; shift
       if [ "$cmd" = tool ] && [ ${#args[@]} -ge 1 ]; then args+=("$@"); break; fi ;;  # verbatim
  esac
done
[ -n "$cmd" ] || { usage >&2; exit 2; }
for v in "${port:-1}" "${cport:-1}" "$start_timeout"; do
  case "$v" in ''|*[!0-9]*) die "not a number: '$v'" 2 ;; esac
done

home=${SLUICE_KAFKA_HOME:-$root/target/kafka}
case "$home" in /*) ;; *) home="$PWD/$home" ;; esac
libs="$home/libs"; data="$home/data"
pidfile="$home/broker.pid"; log="$home/broker.log"; props="$home/server.properties"
envfile="$home/broker.env"

# Ports: flags/env, else those of the broker this work dir last started, else 9092/9093.
if [ -f "$envfile" ]; then
  last_port=$(sed -n 's/^port=//p' "$envfile"); last_cport=$(sed -n 's/^controller_port=//p' "$envfile")
  last_sport=$(sed -n 's/^sasl_port=//p' "$envfile")
fi
port=${port:-${last_port:-9092}}; cport=${cport:-${last_cport:-9093}}
sport=${sport:-${last_sport:-$((port + 2))}}
[ "$port" != "$cport" ] || die "--port and --controller-port are both $port" 2
[ "$sport" != "$port" ] && [ "$sport" != "$cport" ] || die "--sasl-port $sport clashes with the other ports" 2
bootstrap="127.0.0.1:$port"

kafka_version=$(sed -n 's#.*<kafka.version>\(.*\)</kafka.version>.*#\1#p' "$pom" | head -n 1)
[ -n "$kafka_version" ] || die "cannot read <kafka.version> from $pom"
cache=${SLUICE_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice/kafka-$kafka_version}

# JDK >= 22 (Kafka itself needs 17+); defines SLUICE_JVM_FLAGS.
# shellcheck source-path=SCRIPTDIR source=lib/java.sh
. "$root/ci/lib/java.sh"

# ---- jars ------------------------------------------------------------------------------------
marker=.sluice-kafka-jars
stamp="kafka $kafka_version, pom $(sha256sum "$pom" | cut -c1-16)"

jars_complete() { # $1 = a libs dir: its marker has this stamp and every jar it lists is there.
  local dir=$1 jar
  [ -f "$dir/$marker" ] && [ "$(head -n 1 "$dir/$marker")" = "$stamp" ] || return 1
  while IFS= read -r jar; do [ -s "$dir/$jar" ] || return 1; done < <(tail -n +2 "$dir/$marker")
  return 0
}

install_dir() { # $1 = a complete dir, $2 = target: replace $2 by a copy of $1, atomically enough.
  local tmp="$2.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$(dirname "$2")"
  cp -R "$1" "$tmp"
  rm -rf "$2"; mv "$tmp" "$2"
}

ensure_jars() {
  jars_complete "$libs" && return 0
  mkdir -p "$home"
  if [ "$cache" != none ] && jars_complete "$cache/libs"; then
    say "copying Kafka $kafka_version jars from $cache/libs"
    install_dir "$cache/libs" "$libs"
    jars_complete "$libs" || die "copy of $cache/libs to $libs is incomplete"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found; install Maven 3.8+ to fetch the Kafka jars"
  say "fetching Kafka $kafka_version jars from Maven Central into $libs (first use only)"
  local tmp="$libs.fetch.$$" t0=$SECONDS
  rm -rf "$tmp"; mkdir -p "$tmp"
  if ! mvn -q -B -ntp -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" >"$home/fetch.log" 2>&1; then
    cat "$home/fetch.log" >&2; rm -rf "$tmp"
    die "mvn could not fetch the Kafka jars (log above, also in $home/fetch.log)"
  fi
  if [ ! -s "$tmp/kafka_2.13-$kafka_version.jar" ] || [ ! -s "$tmp/kafka-tools-$kafka_version.jar" ]; then
    rm -rf "$tmp"; die "mvn finished but the kafka_2.13/kafka-tools jars are missing"
  fi
  { echo "$stamp"; (cd "$tmp" && ls -1 -- *.jar); } > "$tmp/$marker"
  rm -rf "$libs"; mv "$tmp" "$libs"
  say "fetched $(($(wc -l < "$libs/$marker") - 1)) jars ($(du -sh "$libs" | cut -f1)) in $((SECONDS - t0)) s"
  if [ "$cache" != none ]; then
    if install_dir "$libs" "$cache/libs" 2>/dev/null; then say "cached them in $cache/libs"
    else say "warning: could not cache the jars in $cache/libs"; fi
  fi
}

# ---- processes -------------------------------------------------------------------------------
is_ours() { # $1 = PID: alive and a kafka.Kafka running this work dir's server.properties.
  local cmdline
  [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] || return 1
  cmdline=$(tr '\0' '\n' < "/proc/$1/cmdline" 2>/dev/null) || return 1
  grep -qx 'kafka.Kafka' <<<"$cmdline" && grep -qxF "$props" <<<"$cmdline"
}

our_pid() { # Prints the PID of this work dir's broker, or fails. Cleans up a stale PID file.
  local pid="" p
  [ -f "$pidfile" ] && pid=$(cat "$pidfile" 2>/dev/null || true)
  if is_ours "$pid"; then echo "$pid"; return 0; fi
  [ -z "$pid" ] || rm -f "$pidfile"
  # No live PID file (e.g. it was deleted): find the JVM by its exact server.properties path.
  for p in $(grep -lsF -- "$props" /proc/[0-9]*/cmdline 2>/dev/null || true); do
    p=${p#/proc/}; p=${p%/cmdline}
    if is_ours "$p"; then echo "$p" > "$pidfile"; echo "$p"; return 0; fi
  done
  return 1
}

port_open() { # $1 = port: something accepts TCP connections on 127.0.0.1:$1.
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

port_holder() { # Best effort: who listens on 127.0.0.1:$1.
  command -v ss >/dev/null || return 0
  ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:(\(.*\))$/\1/p' | head -n 1
}

tools_jvm=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto)
write_file() { # $1 = path, stdin = content: (re)written only when it differs, atomically.
  local tmp="$1.tmp.$$"
  cat > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

tool_log_config() {
  printf 'request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n' | write_file "$home/probe.properties"
  write_file "$home/tools-log4j2.properties" <<'EOF'
# Written by ci/kafka.sh: Kafka command-line tools log warnings to stderr.
status = warn
shutdownHook = disable
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = STDERR
EOF
}

run_tool() { # $1 = main class, rest = its arguments. Runs in the foreground.
  ensure_jars; tool_log_config
  local class=$1; shift
  # shellcheck disable=SC2086
  java "${tools_jvm[@]}" $SLUICE_JVM_FLAGS -Dlog4j2.configurationFile="$home/tools-log4j2.properties" \
    -cp "$libs/*" "$class" "$@"
}

# ---- start -----------------------------------------------------------------------------------
write_config() {
  write_file "$props" <<EOF
# Written by ci/kafka.sh on every start; edits are lost (use SLUICE_KAFKA_EXTRA_CONFIG instead).
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_PLAINTEXT://127.0.0.1:$sport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_PLAINTEXT://127.0.0.1:$sport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
# ACLs apply to the SASL listener's users; PLAINTEXT clients (tests, tools) and the controller are
# ANONYMOUS, a super user, so they work as without an authorizer.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS;User:admin
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";
log.dirs=$data
num.partitions=1
auto.create.topics.enable=true
# One node: internal topics with one replica (and one partition, so the first group starts fast).
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
# The cleaner's dedupe buffer defaults to 128 MiB of heap; 8 MiB is plenty for tests.
log.cleaner.dedupe.buffer.size=8388608
num.recovery.threads.per.data.dir=1
EOF
  if [ -n "${SLUICE_KAFKA_EXTRA_CONFIG:-}" ]; then
    [ -r "$SLUICE_KAFKA_EXTRA_CONFIG" ] || die "SLUICE_KAFKA_EXTRA_CONFIG=$SLUICE_KAFKA_EXTRA_CONFIG is not readable"
    { cat "$props"; echo "# From SLUICE_KAFKA_EXTRA_CONFIG=$SLUICE_KAFKA_EXTRA_CONFIG"; cat "$SLUICE_KAFKA_EXTRA_CONFIG"; } \
      | write_file "$props"
  fi
  write_file "$home/log4j2.properties" <<'EOF'
# Written by ci/kafka.sh: the broker logs INFO to stdout, which goes to broker.log.
status = warn
# Keep logging while Kafka's own shutdown hook runs (log4j2's hook would stop it first).
shutdownHook = disable
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = WARN
EOF
}

format_storage() {
  # Formatted once; the cluster id stays in $data/meta.properties. (Kafka 4.4 copes with the ports
  # changing between starts: the single voter's endpoint is updated when it becomes leader.)
  [ -f "$data/meta.properties" ] && return 0
  if [ -d "$data" ] && [ -n "$(ls -A "$data" 2>/dev/null)" ]; then
    die "$data is not empty but has no meta.properties; start --fresh wipes it"
  fi
  local id
  id=$(run_tool kafka.tools.StorageTool random-uuid)
  mkdir -p "$data"
  run_tool kafka.tools.StorageTool format --standalone -t "$id" -c "$props" >"$home/format.log" 2>&1 \
    || { cat "$home/format.log" >&2; die "formatting $data failed (log above)"; }
  say "formatted $data (cluster id $id)"
}

tail_log() {
  echo "kafka.sh: last 30 lines of $log:" >&2
  tail -n 30 "$log" >&2 2>/dev/null || true
}

wait_ready() { # $1 = PID. Ready once a client's metadata call lists this broker.
  local pid=$1 deadline=$((SECONDS + start_timeout)) left out
  while :; do
    is_ours "$pid" || { tail_log; rm -f "$pidfile"; die "the broker exited during startup"; }
    left=$((deadline - SECONDS))
    [ "$left" -gt 0 ] || { tail_log; die "the broker did not become ready within ${start_timeout} s (still running as PID $pid; ci/kafka.sh stop ends it)"; }
    if port_open "$port"; then
      # BrokerApiVersionsCommand describes the cluster through the Admin client: it prints
      # "127.0.0.1:PORT (id: 1 ...) -> (...)" only once the broker serves requests, with "isFenced: false".
      # shellcheck disable=SC2086
      out=$(timeout "$left" java "${tools_jvm[@]}" $SLUICE_JVM_FLAGS \
              -Dlog4j2.configurationFile="$home/tools-log4j2.properties" -cp "$libs/*" \
              org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$bootstrap" \
              --command-config "$home/probe.properties" 2>/dev/null || true)
      grep -q "(id: 1 .*isFenced: false" <<<"$out" && return 0
    fi
    sleep 0.5
  done
}

cmd_start() {
  local pid running_port
  mkdir -p "$home"
  if pid=$(our_pid); then
    [ "$fresh" = 0 ] || die "--fresh wipes the data, but the broker is running (PID $pid): use restart --fresh" 2
    running_port=$(sed -n 's/^port=//p' "$envfile" 2>/dev/null || true)
    if [ -n "$running_port" ] && [ "$running_port" != "$port" ]; then
      die "a broker from $home is already running on port $running_port (PID $pid), not $port; stop it first"
    fi
    if port_open "$port"; then
      say "already running (PID $pid, bootstrap $bootstrap)"; return 0
    fi
    say "PID $pid is starting; waiting for it"
    tool_log_config; wait_ready "$pid"
    say "ready (PID $pid, bootstrap $bootstrap)"; return 0
  fi
  local p holder
  for p in "$port" "$cport"; do
    if port_open "$p"; then
      holder=$(port_holder "$p")
      die "port $p on 127.0.0.1 is already in use${holder:+ by $holder}, not by a broker of $home; choose others with --port/--controller-port (or SLUICE_KAFKA_PORT/SLUICE_KAFKA_CONTROLLER_PORT)"
    fi
  done
  ensure_jars
  if [ "$fresh" = 1 ]; then
    say "--fresh: wiping $data"; rm -rf "$data"
  fi
  write_config; tool_log_config
  format_storage

  [ -f "$log" ] && mv -f "$log" "$log.1"
  local heap=${SLUICE_KAFKA_HEAP:-512m} launcher=()
  command -v setsid >/dev/null && launcher=(setsid)   # own session: survives the caller's job control
  say "starting Kafka $kafka_version (heap $heap, log $log)"
  # shellcheck disable=SC2086
  nohup "${launcher[@]}" java -Xmx"$heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    $SLUICE_JVM_FLAGS -Dlog4j2.configurationFile="$home/log4j2.properties" \
    -cp "$libs/*" kafka.Kafka "$props" </dev/null >"$log" 2>&1 9>&- &
  pid=$!
  echo "$pid" > "$pidfile"
  printf 'port=%s\ncontroller_port=%s\nsasl_port=%s\n' "$port" "$cport" "$sport" > "$envfile"
  local t0
  t0=$(date +%s%N)
  sleep 0.2
  wait_ready "$pid"
  local ds=$(( ($(date +%s%N) - t0) / 100000000 ))
  say "ready in $((ds / 10)).$((ds % 10)) s (PID $pid, bootstrap $bootstrap)"
}

# ---- stop / status ---------------------------------------------------------------------------
cmd_stop() {
  local pid i
  if ! pid=$(our_pid); then say "not running"; rm -f "$pidfile"; return 0; fi
  say "stopping PID $pid"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do
    is_ours "$pid" || break
    sleep 0.1
  done
  if is_ours "$pid"; then
    say "still running after 20 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do is_ours "$pid" || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
  is_ours "$pid" && die "PID $pid survived SIGKILL"
  say "stopped"
}

cmd_status() {
  local pid cid=""
  [ -f "$data/meta.properties" ] && cid=$(sed -n 's/^cluster.id=//p' "$data/meta.properties")
  if pid=$(our_pid); then
    if port_open "$port"; then
      echo "kafka.sh: running (PID $pid, bootstrap $bootstrap${cid:+, cluster id $cid})"
    else
      echo "kafka.sh: running (PID $pid) but $bootstrap is not accepting connections yet"
    fi
    return 0
  fi
  echo "kafka.sh: stopped (bootstrap would be $bootstrap; work dir $home)"
  return 3
}

# ---- client helpers --------------------------------------------------------------------------
cmd_topics() {
  [ ${#args[@]} -ge 1 ] || die "usage: topics create NAME [--partitions N] | list | describe [NAME] | delete NAME" 2
  local sub=${args[0]} rest=("${args[@]:1}")
  case "$sub" in
    create)
      [ ${#rest[@]} -ge 1 ] || die "usage: topics create NAME [--partitions N] [--config K=V]..." 2
      local name=${rest[0]}
      run_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --create \
        --if-not-exists --topic "$name" --replication-factor 1 "${rest[@]:1}" ;;
    list) run_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --list ;;
    describe)
      run_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --describe \
        ${rest[0]:+--topic "${rest[0]}"} ;;
    delete)
      [ ${#rest[@]} -ge 1 ] || die "usage: topics delete NAME" 2
      run_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --delete --topic "${rest[0]}" ;;
    *) die "unknown topics command '$sub' (create, list, describe, delete)" 2 ;;
  esac
}

cmd_produce() {
  [ ${#args[@]} -ge 1 ] || die "usage: produce TOPIC [--keys] < lines" 2
  local topic=${args[0]} extra=() a
  for a in "${args[@]:1}"; do
    case "$a" in
      --keys) extra+=(--reader-property parse.key=true --reader-property "key.separator=	") ;;
      *) extra+=("$a") ;;
    esac
  done
  run_tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" --topic "$topic" \
    "${extra[@]}"
}

cmd_consume() {
  [ ${#args[@]} -ge 1 ] || die "usage: consume TOPIC [--max N] [--timeout-ms MS] [--keys]" 2
  local topic=${args[0]} extra=() timeout_ms=10000 rest=("${args[@]:1}") i=0
  while [ $i -lt ${#rest[@]} ]; do
    case "${rest[$i]}" in
      --max) extra+=(--max-messages "${rest[$((i + 1))]}"); i=$((i + 2)) ;;
      --timeout-ms) timeout_ms=${rest[$((i + 1))]}; i=$((i + 2)) ;;
      --keys) extra+=(--formatter-property print.key=true --formatter-property "key.separator=	"); i=$((i + 1)) ;;
      *) extra+=("${rest[$i]}"); i=$((i + 1)) ;;
    esac
  done
  # On its idle timeout ConsoleConsumer logs an ERROR with a TimeoutException and exits 1: that is
  # the normal end here, so exit 1 with that exception counts as success and its lines are dropped.
  local rc=0 err
  err=$(mktemp)
  run_tool org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$bootstrap" \
    --topic "$topic" --from-beginning --timeout-ms "$timeout_ms" "${extra[@]}" 2>"$err" || rc=$?
  if [ "$rc" -eq 1 ] && grep -qx 'org.apache.kafka.common.errors.TimeoutException' "$err"; then rc=0; fi
  grep -vE '^(\[.*\] ERROR Error processing message, terminating consumer process|org\.apache\.kafka\.common\.errors\.TimeoutException$|The consumer rebalance protocol \(KIP-848\))' "$err" >&2 || true
  rm -f "$err"
  return "$rc"
}

# start/stop/restart of one work dir never overlap (e.g. parallel test suites both calling start).
lock() {
  mkdir -p "$home"
  command -v flock >/dev/null || return 0
  exec 9>"$home/.lock"
  flock -w 180 9 || die "another ci/kafka.sh holds $home/.lock"
}

need_broker() { # The client helpers fail fast rather than wait out the client's timeouts.
  port_open "$port" || die "no broker at $bootstrap (start one with ci/kafka.sh start, or pass --port)"
}

case "$cmd" in
  start) lock; cmd_start ;;
  stop) lock; cmd_stop ;;
  status) cmd_status ;;
  restart) lock; cmd_stop; cmd_start ;;
  topics) need_broker; cmd_topics ;;
  produce) need_broker; cmd_produce ;;
  consume) need_broker; cmd_consume ;;
  tool)
    [ ${#args[@]} -ge 1 ] || die "usage: tool CLASS [ARGS...]" 2
    run_tool "${args[@]}" ;;
  fetch) mkdir -p "$home"; ensure_jars; say "jars ready in $libs" ;;
  bootstrap) echo "$bootstrap" ;;
  sasl-bootstrap) echo "127.0.0.1:$sport" ;;
  *) die "unknown command '$cmd' (ci/kafka.sh help lists them)" 2 ;;
esac
