#!/usr/bin/env bash
# Side-by-side benchmark (NOT a test; nothing in `mvn verify` runs it): the upstream TypeScript reference load server
# (syncular 0.15.48, load/src/server.ts) on in-memory SQLite and on PostgreSQL, and our server (mvn -Prun: Payara
# Micro) on PostgreSQL, ONE AT A TIME, each started fresh (fresh PostgreSQL data directory, fresh server), all driven
# by the same SyncLoadDriver load (schema tasks, partition load, actor load-actor: the reference fixture's).
#
# PostgreSQL is an embedded zonky PostgreSQL 17 (BenchPostgres: fsync off, synchronous_commit off,
# pg_stat_statements), and with VIA_PROXY=1 (the default) the server reaches it through PgRoundTripProxy, which counts
# database round trips. The driver reports per run and a median per level: rounds/s, latency, failures, server CPU
# (the bun process / the Payara Micro java process), PostgreSQL CPU (postmaster and backends), transactions,
# statements and round trips per round. Output: target/bench/<server>.txt, logs in target/bench/logs/ (with the
# top pg_stat_statements of each PostgreSQL run in <server>-statements.txt), the summary
# table in target/bench/summary.txt (also printed).
#
# usage (from anywhere):   src/bench/side-by-side.sh
# on a machine shared with other builds, hold the CPU lock for the whole run:
#                          LOCK=/tmp/syncular-cpu.lock src/bench/side-by-side.sh
#   (or wrap it yourself: flock /tmp/syncular-cpu.lock src/bench/side-by-side.sh — not both)
#
# environment (defaults):
#   CLIENTS=10,50  BENCH_SECONDS=15  WARMUP=20  RUNS=3     the load: levels, seconds per measured run, warm-up
#                                                           seconds once per level, measured runs per level
#   PRIME=60                                                seconds of unmeasured load at the highest level before
#                                                           the first level (every server: a JVM measured warm)
#   SERVERS="ref-sqlite ref-pg ours"                        which servers, in this order; ours-wildfly: our WAR
#                                                           on a fresh WildFly 39 (WILDFLY_ZIP, the build's
#                                                           distribution) instead of Payara Micro
#   VIA_PROXY=1                                             0: servers talk to PostgreSQL directly (no rt/round)
#   BUILD=1                                                 0: reuse target/ (WAR, test classes, classpath file)
#   UPSTREAM=/work/upstream  BUN=/work/bunhome/node_modules/.bin/bun
#   OURS_PORT=8787 REF_PORT=8790 PG_PORT=55432 PROXY_PORT=55433 CONTROL_PORT=55434
#   LOCK=                                                   a flock(1) file held for the whole run
#   OURS_JVM_OPTIONS=                                       our server JVM's options instead of -Prun's default
#                                                           (e.g. add -XX:StartFlightRecording=… to profile)
#   OURS_MICRO_OPTIONS=                                     extra Payara Micro arguments (e.g. --postbootcommandfile F)
#   OURS_JAVA_HOME=                                         the JDK our server runs on (ours: Maven's -Prun and so
#                                                           Payara Micro; ours-wildfly: standalone.sh); default: the
#                                                           java on PATH. The driver always runs on $JAVA.
#   OURS_WAR=target/syncular.war                            the WAR ours and ours-wildfly deploy
#                                                           (src/bench/floor/build.sh makes the reconnect storm's
#                                                           floors, target/floor/...; the database floor on WildFly
#                                                           only)
#   DRIVER=SyncLoadDriver  DRIVER_ARGS=                     another driver of src/test/.../sync/bench instead of the
#                                                           push-pull load: ImageBootstrapBench, ReconnectStormBench,
#                                                           BootstrapStormBench, MixedSoakBench, e.g. DRIVER_ARGS=
#                                                           "--rows=100000 --runs=3" (it gets --url= and DRIVER_ARGS;
#                                                           the summary table is SyncLoadDriver's only). For every
#                                                           driver the result file also gets the server's CPU while
#                                                           driven and its peak RSS (VmHWM), and PostgreSQL's
#                                                           CPU while driven (postmaster, backends, workers).
set -euo pipefail

if [[ -n "${LOCK:-}" && -z "${SIDE_BY_SIDE_LOCKED:-}" ]]; then
  echo "waiting for the lock $LOCK ..."
  exec env SIDE_BY_SIDE_LOCKED=1 flock "$LOCK" "$0" "$@"
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
UPSTREAM=${UPSTREAM:-/work/upstream}
BUN=${BUN:-/work/bunhome/node_modules/.bin/bun}
CLIENTS=${CLIENTS:-10,50}
BENCH_SECONDS=${BENCH_SECONDS:-15}
WARMUP=${WARMUP:-20}
PRIME=${PRIME:-60}
RUNS=${RUNS:-3}
SERVERS=${SERVERS:-"ref-sqlite ref-pg ours"}
DRIVER=${DRIVER:-SyncLoadDriver}
DRIVER_ARGS=${DRIVER_ARGS:-}
VIA_PROXY=${VIA_PROXY:-1}
BUILD=${BUILD:-1}
OURS_PORT=${OURS_PORT:-8787}
REF_PORT=${REF_PORT:-8790}
PG_PORT=${PG_PORT:-55432}
PROXY_PORT=${PROXY_PORT:-55433}
CONTROL_PORT=${CONTROL_PORT:-55434}
WILDFLY_ZIP=${WILDFLY_ZIP:-$HOME/.m2/repository/org/wildfly/wildfly-dist/39.0.1.Final/wildfly-dist-39.0.1.Final.zip}
# -Prun's heap and collector (DevServer), for a like-for-like second container
WILDFLY_JVM_DEFAULT="-Xms1g -Xmx1g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError"

OUT=$ROOT/target/bench
LOGS=$OUT/logs
STAMP=$(date +%Y%m%d-%H%M%S)
WORK=$OUT/run-$STAMP
mkdir -p "$LOGS" "$WORK"
SUMMARY=$OUT/summary.txt

say() { echo "[side-by-side $(date +%H:%M:%S)] $*"; }
die() { say "ERROR: $*"; exit 1; }
loadavg() { uptime | sed 's/.*load average: //'; }
# CPU time of a process in clock ticks (utime + stime; fields after the parenthesised command name)
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}'; }
# PostgreSQL's CPU: the postmaster's own and its reaped children's, plus its live backends' and workers'
db_ticks() {
  local pm=$1 total child
  total=$(sed 's/^.*) //' "/proc/$pm/stat" 2>/dev/null | awk '{print $12 + $13 + $14 + $15}')
  [[ -n "$total" ]] || return 0
  for child in $(pgrep -P "$pm"); do total=$((total + $(cpu_ticks "$child" || echo 0))); done
  echo "$total"
}

# ---------------------------------------------------------------------------------------------------------------
# process groups: every component starts in its own session (setsid), so one kill reaches all it started
# ---------------------------------------------------------------------------------------------------------------
GROUPS_RUNNING=()

start_group() { # start_group LOG CMD...  -> sets STARTED (the pid = process group id)
  local log=$1; shift
  setsid "$@" >"$log" 2>&1 </dev/null &
  STARTED=$!
  local pgid
  # the child calls setsid(2) itself a moment after the fork: wait for it (up to 5 s)
  for _ in $(seq 1 50); do
    pgid=$(ps -o pgid= -p "$STARTED" | tr -d ' ' || true)
    [[ "$pgid" != "$STARTED" ]] || break
    sleep 0.1
  done
  [[ "$pgid" == "$STARTED" ]] || die "process $STARTED is not its own process group (pgid '$pgid')"
  GROUPS_RUNNING+=("$STARTED")
}

stop_group() { # stop_group PGID NAME
  local pgid=$1 name=$2
  if kill -0 -- "-$pgid" 2>/dev/null; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for _ in $(seq 1 120); do kill -0 -- "-$pgid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 -- "-$pgid" 2>/dev/null; then
      say "$name (group $pgid) ignored SIGTERM for 60 s: SIGKILL"
      kill -KILL -- "-$pgid" 2>/dev/null || true
      sleep 1
    fi
  fi
  local kept=()
  for g in "${GROUPS_RUNNING[@]}"; do [[ "$g" == "$pgid" ]] || kept+=("$g"); done
  GROUPS_RUNNING=("${kept[@]+"${kept[@]}"}")
}

POSTMASTER=""
stop_postmaster_if_left() { # zonky's pg_ctl puts the postmaster in a session of its own: make sure it went
  [[ -n "$POSTMASTER" ]] || return 0
  for _ in $(seq 1 60); do kill -0 "$POSTMASTER" 2>/dev/null || { POSTMASTER=""; return 0; }; sleep 0.5; done
  say "postmaster $POSTMASTER still running: SIGTERM"
  kill -TERM "$POSTMASTER" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$POSTMASTER" 2>/dev/null || { POSTMASTER=""; return 0; }; sleep 0.5; done
  kill -KILL "$POSTMASTER" 2>/dev/null || true
  POSTMASTER=""
}

cleanup() {
  local g
  for g in "${GROUPS_RUNNING[@]+"${GROUPS_RUNNING[@]}"}"; do stop_group "$g" "group $g"; done
  stop_postmaster_if_left
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_busy() { [[ -n "$(ss -ltnH "( sport = :$1 )" 2>/dev/null)" ]]; }

await_ports_free() {
  local p
  for p in "$@"; do
    for _ in $(seq 1 40); do port_busy "$p" || break; sleep 0.5; done
    if port_busy "$p"; then die "port $p is still in use: $(ss -ltnpH "( sport = :$p )")"; fi
  done
}

await_line() { # await_line LOG PATTERN PID TIMEOUT_S NAME
  local log=$1 pattern=$2 pid=$3 timeout=$4 name=$5
  for _ in $(seq 1 $((timeout * 2))); do
    grep -q "$pattern" "$log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { tail -30 "$log"; die "$name exited before '$pattern' (log: $log)"; }
    sleep 0.5
  done
  tail -30 "$log"; die "$name printed no '$pattern' within ${timeout}s (log: $log)"
}

# ---------------------------------------------------------------------------------------------------------------
# build: WAR + test classes + Payara Micro (-Prun's package) and the test classpath for plain java
# ---------------------------------------------------------------------------------------------------------------
CPFILE=$OUT/classpath.txt
if [[ "$BUILD" == 1 ]]; then
  say "building (mvn -o -q -Prun -DskipTests package dependency:build-classpath)"
  # the WAR is packed from this directory, which keeps a class whose source is gone: start it afresh
  rm -rf "$ROOT/target/syncular"
  (cd "$ROOT" && mvn -o -q -Prun -DskipTests package dependency:build-classpath -Dmdep.outputFile="$CPFILE") \
    >"$LOGS/build.log" 2>&1 || { tail -40 "$LOGS/build.log"; die "build failed (log: $LOGS/build.log)"; }
fi
for f in "$ROOT/target/syncular.war" "$ROOT/target/run/payara-micro.jar" "$CPFILE" \
         "$ROOT/target/test-classes/syncular/jakarta/sync/bench/SyncLoadDriver.class"; do
  [[ -e "$f" ]] || die "$f is missing: run with BUILD=1"
done
CP="$ROOT/target/test-classes:$ROOT/target/classes:$(cat "$CPFILE")"
JAVA=${JAVA:-java}
[[ -x "$BUN" ]] || [[ " $SERVERS " != *" ref-"* ]] || die "no bun at $BUN (set BUN=)"
[[ -f "$UPSTREAM/load/src/server.ts" ]] || [[ " $SERVERS " != *" ref-"* ]] || die "no $UPSTREAM/load/src/server.ts (set UPSTREAM=)"

# ---------------------------------------------------------------------------------------------------------------
# PostgreSQL (+ proxy) for one server run
# ---------------------------------------------------------------------------------------------------------------
PG_GROUP="" PROXY_GROUP="" PG_JDBC="" DB_URL_PORT=""

start_database() { # start_database NAME
  local name=$1
  await_ports_free "$PG_PORT" "$PROXY_PORT" "$CONTROL_PORT"
  local data=$WORK/$name/pg
  mkdir -p "$WORK/$name"
  say "$name: embedded PostgreSQL on $PG_PORT (data $data)"
  start_group "$LOGS/$name-postgres.log" "$JAVA" -cp "$CP" -Dot.epg.working-dir="$ROOT/target/embedded-pg" \
    syncular.jakarta.sync.bench.BenchPostgres --port="$PG_PORT" --data-dir="$data"
  PG_GROUP=$STARTED
  await_line "$LOGS/$name-postgres.log" '^BENCH_PG_READY' "$PG_GROUP" 180 "BenchPostgres"
  PG_JDBC=$(sed -n 's/^BENCH_PG_READY //p' "$LOGS/$name-postgres.log")
  POSTMASTER=$(head -1 "$data/postmaster.pid")
  grep -q '^BENCH_PG_STATEMENTS yes' "$LOGS/$name-postgres.log" \
    || say "$name: pg_stat_statements unavailable: no statements/round"
  DB_URL_PORT=$PG_PORT
  if [[ "$VIA_PROXY" == 1 ]]; then
    start_group "$LOGS/$name-proxy.log" "$JAVA" -cp "$CP" syncular.jakarta.sync.bench.PgRoundTripProxy \
      --listen="$PROXY_PORT" --target="127.0.0.1:$PG_PORT" --control="$CONTROL_PORT"
    PROXY_GROUP=$STARTED
    await_line "$LOGS/$name-proxy.log" '^PROXY_READY' "$PROXY_GROUP" 60 "PgRoundTripProxy"
    DB_URL_PORT=$PROXY_PORT
  fi
}

stop_database() {
  [[ -z "$PROXY_GROUP" ]] || stop_group "$PROXY_GROUP" "proxy"
  [[ -z "$PG_GROUP" ]] || stop_group "$PG_GROUP" "BenchPostgres"
  stop_postmaster_if_left
  PROXY_GROUP="" PG_GROUP="" PG_JDBC=""
  await_ports_free "$PG_PORT" "$PROXY_PORT" "$CONTROL_PORT"
}

# ---------------------------------------------------------------------------------------------------------------
# one server: start fresh, drive, stop
# ---------------------------------------------------------------------------------------------------------------
: >"$SUMMARY.tmp"

run_server() { # run_server NAME
  local name=$1 url srv_pid srv_group port db_args=()
  local result=$OUT/$name.txt
  local before after
  before=$(loadavg)
  say "$name: load average before: $before"
  case $name in
    ref-sqlite)
      port=$REF_PORT; await_ports_free "$port"
      start_group "$LOGS/$name-server.log" env -C "$UPSTREAM" SYNCULAR_LOAD_PORT="$port" "$BUN" load/src/server.ts
      srv_group=$STARTED
      await_line "$LOGS/$name-server.log" 'LOAD_SERVER_READY' "$srv_group" 120 "reference server"
      srv_pid=$srv_group
      url="http://127.0.0.1:$port/"
      ;;
    ref-pg)
      start_database "$name"
      port=$REF_PORT; await_ports_free "$port"
      start_group "$LOGS/$name-server.log" env -C "$UPSTREAM" SYNCULAR_LOAD_PORT="$port" \
        SYNCULAR_PG_URL="postgres://postgres:postgres@127.0.0.1:$DB_URL_PORT/postgres" "$BUN" load/src/server.ts
      srv_group=$STARTED
      await_line "$LOGS/$name-server.log" 'LOAD_SERVER_READY' "$srv_group" 120 "reference server"
      srv_pid=$srv_group
      url="http://127.0.0.1:$port/"
      ;;
    ours)
      start_database "$name"
      port=$OURS_PORT; await_ports_free "$port"
      mkdir -p "$WORK/$name/data"
      start_group "$LOGS/$name-server.log" env -C "$ROOT" ${OURS_JAVA_HOME:+JAVA_HOME="$OURS_JAVA_HOME"} mvn -o -Prun \
        org.codehaus.mojo:exec-maven-plugin:java@run-server \
        -Dsyncular.port="$port" -Dsyncular.data-dir="$WORK/$name/data" \
        -Dsyncular.dev.db-url="jdbc:postgresql://127.0.0.1:$DB_URL_PORT/postgres" \
        -Dsyncular.schema="$ROOT/src/bench/tasks.schema.json" \
        -Dsyncular.auth.mode=fixed -Dsyncular.auth.fixed.actor=load-actor -Dsyncular.auth.fixed.partition=load \
        '-Dsyncular.auth.fixed.allowed-scopes=project_id=*' \
        ${OURS_WAR:+"-Dsyncular.run.war=$(realpath "$OURS_WAR")"} \
        ${OURS_JVM_OPTIONS:+"-Dsyncular.dev.jvm-options=$OURS_JVM_OPTIONS"} \
        ${OURS_MICRO_OPTIONS:+"-Dsyncular.dev.micro-options=$OURS_MICRO_OPTIONS"}
      srv_group=$STARTED
      await_line "$LOGS/$name-server.log" 'Syncular is ready' "$srv_group" 300 "our server (mvn -Prun)"
      # the measured process is Payara Micro's java, a child of Maven's JVM in the same process group
      srv_pid=$(ps -e -o pid=,pgid=,args= | awk -v g="$srv_group" '$2 == g && /payara-micro/ && !/awk/ {print $1; exit}')
      [[ -n "$srv_pid" ]] || die "no Payara Micro process in group $srv_group"
      url="http://127.0.0.1:$port/syncular/"
      ;;
    ours-wildfly)
      # the same WAR on a fresh WildFly (the build's distribution from ~/.m2, users and the PostgreSQL module from
      # the ITs' prepare.sh), on the WAR's own datasource (jboss-web.xml), started by standalone.sh
      start_database "$name"
      port=$OURS_PORT; await_ports_free "$port" 9990
      local wf=$WORK/$name/wildfly pgjar
      pgjar=$(tr ':' '\n' <"$CPFILE" | grep '/postgresql-[0-9.]*\.jar$' | head -1)
      [[ -f "$WILDFLY_ZIP" ]] || die "no WildFly distribution at $WILDFLY_ZIP (the README's test command downloads it)"
      mkdir -p "$WORK/$name" && unzip -q "$WILDFLY_ZIP" -d "$WORK/$name" && mv "$WORK/$name"/wildfly-* "$wf"
      bash "$ROOT/src/test/servers/prepare.sh" /nonexistent-payara "$wf" "$pgjar" >/dev/null
      cp "${OURS_WAR:-$ROOT/target/syncular.war}" "$wf/standalone/deployments/syncular.war"
      start_group "$LOGS/$name-server.log" env SYNCULAR_DB_URL="jdbc:postgresql://127.0.0.1:$DB_URL_PORT/postgres" \
        SYNCULAR_DB_USER=postgres SYNCULAR_DB_PASSWORD=postgres ${OURS_JAVA_HOME:+JAVA_HOME="$OURS_JAVA_HOME"} \
        JAVA_OPTS="${OURS_JVM_OPTIONS:-$WILDFLY_JVM_DEFAULT} -Djava.net.preferIPv4Stack=true \
          -Djboss.modules.system.pkgs=org.jboss.byteman -Djava.awt.headless=true \
          -Dsyncular.schema=$ROOT/src/bench/tasks.schema.json \
          -Dsyncular.auth.mode=fixed -Dsyncular.auth.fixed.actor=load-actor -Dsyncular.auth.fixed.partition=load \
          -Dsyncular.auth.fixed.allowed-scopes=project_id=*" \
        "$wf/bin/standalone.sh" -Djboss.http.port="$port" -b 127.0.0.1
      srv_group=$STARTED
      await_line "$LOGS/$name-server.log" 'WFLYSRV0010: Deployed "syncular.war"' "$srv_group" 300 "our server (WildFly)"
      srv_pid=$(ps -e -o pid=,pgid=,args= | awk -v g="$srv_group" '$2 == g && /jboss-modules/ && !/awk/ {print $1; exit}')
      [[ -n "$srv_pid" ]] || die "no WildFly process in group $srv_group"
      url="http://127.0.0.1:$port/syncular/"
      for _ in $(seq 1 120); do
        [[ "$(curl -s -o /dev/null -w '%{http_code}' "${url}health/ready")" == 200 ]] && break
        sleep 0.5
      done
      ;;
    *) die "unknown server $name (known: ref-sqlite ref-pg ours ours-wildfly)" ;;
  esac
  if [[ -n "$PG_JDBC" ]]; then
    db_args+=("--pg=$PG_JDBC" "--db-pid=$POSTMASTER")
    [[ "$VIA_PROXY" != 1 ]] || db_args+=("--roundtrip-counter=127.0.0.1:$CONTROL_PORT")
  fi
  say "$name: ready at $url (server pid $srv_pid); driving: clients=$CLIENTS seconds=$BENCH_SECONDS" \
      "warmup=$WARMUP prime=$PRIME runs=$RUNS"
  {
    echo "# server: $name  url: $url  started: $(date -Is)  via-proxy: $VIA_PROXY"
    echo "# load average before the server started: $before"
  } >"$result"
  local rc=0 ticks_before driver_start db_before=""
  ticks_before=$(cpu_ticks "$srv_pid"); driver_start=$(date +%s.%N)
  [[ -z "$POSTMASTER" ]] || db_before=$(db_ticks "$POSTMASTER")
  if [[ "$DRIVER" == SyncLoadDriver ]]; then
    "$JAVA" -cp "$CP" syncular.jakarta.sync.bench.SyncLoadDriver --url="$url" --schema=tasks \
      --clients="$CLIENTS" --seconds="$BENCH_SECONDS" --warmup="$WARMUP" --prime="$PRIME" --runs="$RUNS" \
      --server-pid="$srv_pid" \
      "${db_args[@]+"${db_args[@]}"}" 2>"$LOGS/$name-driver.err" | tee -a "$result" || rc=$?
  else
    # shellcheck disable=SC2086 # DRIVER_ARGS is a list of --key=value words
    "$JAVA" -cp "$CP" "syncular.jakarta.sync.bench.$DRIVER" --url="$url" $DRIVER_ARGS \
      2>"$LOGS/$name-driver.err" | tee -a "$result" || rc=$?
  fi
  [[ $rc == 0 ]] || say "$name: the driver exited with $rc (2 = failed rounds; see $result and $LOGS/$name-driver.err)"
  # every driver: the server's CPU while it drove (seeding included) and its peak resident memory over its life
  local ticks_after hwm
  ticks_after=$(cpu_ticks "$srv_pid"); hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$srv_pid/status" 2>/dev/null)
  if [[ -n "$ticks_before" && -n "$ticks_after" && -n "$hwm" ]]; then
    awk -v b="$ticks_before" -v a="$ticks_after" -v hz="$(getconf CLK_TCK)" -v s="$driver_start" \
        -v e="$(date +%s.%N)" -v k="$hwm" 'BEGIN { cpu = (a - b) / hz; printf "# server (pid %s) while driven: %.1f s CPU over %.1f s = %.0f %% of one core; peak RSS %.0f MiB\n", "'"$srv_pid"'", cpu, e - s, 100 * cpu / (e - s), k / 1024 }' \
        | tee -a "$result"
  fi
  if [[ -n "$db_before" ]]; then
    awk -v b="$db_before" -v a="$(db_ticks "$POSTMASTER")" -v hz="$(getconf CLK_TCK)" -v s="$driver_start" \
        -v e="$(date +%s.%N)" 'BEGIN { cpu = (a - b) / hz; printf "# PostgreSQL while driven: %.1f s CPU over %.1f s = %.0f %% of one core\n", cpu, e - s, 100 * cpu / (e - s) }' \
        | tee -a "$result"
  fi
  if [[ -n "$PG_JDBC" ]] && command -v psql >/dev/null; then # what the statements were, for reading the counts
    PGPASSWORD=postgres psql -X -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "SELECT calls, rows,
        round(mean_exec_time::numeric, 3) AS mean_ms, plans, round(mean_plan_time::numeric, 3) AS plan_ms,
        left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query
        FROM pg_stat_statements ORDER BY calls DESC LIMIT 60" >"$LOGS/$name-statements.txt" 2>&1 || true
  fi
  say "$name: stopping"
  stop_group "$srv_group" "$name server"
  await_ports_free "$port"
  stop_database
  after=$(loadavg)
  echo "# load average after the server stopped: $after" >>"$result"
  say "$name: load average after: $after"
  printf '%s\t%s\t%s\n' "$name" "$before" "$after" >>"$SUMMARY.tmp"
}

say "results in $OUT; servers: $SERVERS; clients=$CLIENTS seconds=$BENCH_SECONDS warmup=$WARMUP runs=$RUNS via-proxy=$VIA_PROXY"
for s in $SERVERS; do run_server "$s"; done

# ---------------------------------------------------------------------------------------------------------------
# summary: the median line of each level (the run line when RUNS=1)
# ---------------------------------------------------------------------------------------------------------------
{
  echo "side-by-side $STAMP: clients=$CLIENTS seconds=$BENCH_SECONDS warmup=$WARMUP prime=$PRIME runs=$RUNS via-proxy=$VIA_PROXY ($(nproc) cores)"
  printf '%-11s %7s %9s %8s %8s %8s %8s %8s %7s %8s %10s %8s %8s\n' server clients rounds/s "p50 ms" "p95 ms" "p99 ms" \
    failures srv-cpu% db-cpu% tx/round stmt/round rt/round drv-cpu%
  for s in $SERVERS; do
    f=$OUT/$s.txt
    [[ -f "$f" ]] || continue
    want=median; [[ "$RUNS" -gt 1 ]] || want=1
    awk -v s="$s" -v want="$want" '$1 ~ /^[0-9]+$/ && $NF == want {
      printf "%-11s %7s %9s %8s %8s %8s %8s %8s %7s %8s %10s %8s %8s\n", s, $1, $3, $4, $5, $6, $8, $9, $10, $11, $12, $13, $14 }' "$f"
  done
  echo
  echo "load average (1/5/15 min) before each server started -> after it stopped:"
  awk -F'\t' '{ printf "  %-11s %s -> %s\n", $1, $2, $3 }' "$SUMMARY.tmp"
} >"$SUMMARY"
rm -f "$SUMMARY.tmp"
find "$WORK" -depth -type d -empty -delete 2>/dev/null || true
echo
cat "$SUMMARY"
