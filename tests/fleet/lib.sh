# lib.sh - helpers for the fleet tests: a private PostgreSQL (initdb in a temp dir, unix socket
# only, no TCP) run by an unprivileged user when we are root (initdb refuses root), boxes
# (`zkpipe up --fleet`) each with their own runtime dir, state dir and arena, and cleanup that
# leaves nothing running. Timeouts are safety nets only; nothing asserts on speed.
# Usage: . lib.sh; fl_init NAME ZKPIPE SOURCE_ROOT
set -u
fl_log() { echo "[$(date +%T.%N | cut -c1-12)] $*" >&2; }
fl_fail() { echo "FAIL: $*" >&2; fl_dump; exit 1; }
fl_skip() { echo "SKIP: $*" >&2; exit 77; }

fl_pgbin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

fl_init() {
  FL_NAME=$1; ZKPIPE=$2; FL_SRC=$3; FIX=$FL_SRC/tests/fixtures
  [ "${ZP_FLEET_BUILT:-1}" = 1 ] || fl_skip "this build has no fleet mode (libpq-dev was missing)"
  command -v jq >/dev/null || fl_skip "jq not installed"
  PGBIN=$(fl_pgbin) || fl_fail "PostgreSQL server binaries not found (scripts/deps installs postgresql)"
  FL_DIR=$(mktemp -d /tmp/zkpipe-fleet-$FL_NAME.XXXXXX)
  chmod 755 "$FL_DIR"
  FL_BOXES=()
  trap fl_cleanup EXIT
  FL_PGDATA=$FL_DIR/pg/data; FL_SOCK=$FL_DIR/pg/sock
  mkdir -p "$FL_DIR/pg/sock" "$FL_DIR/out"
  FL_AS=()
  if [ "$(id -u)" = 0 ]; then
    id nobody >/dev/null 2>&1 || fl_fail "running as root and there is no 'nobody' user for PostgreSQL"
    chown -R nobody "$FL_DIR/pg"
    FL_AS=(runuser -u nobody --)
  fi
  "${FL_AS[@]}" "$PGBIN/initdb" -D "$FL_PGDATA" -A trust -U postgres --no-sync -E UTF8 >"$FL_DIR/pg/initdb.log" 2>&1 ||
    { cat "$FL_DIR/pg/initdb.log" >&2; fl_fail "initdb"; }
  fl_pg_start
  "$PGBIN/createdb" -h "$FL_SOCK" -U postgres fleet || fl_fail "createdb"
  export ZP_FLEET="host=$FL_SOCK user=postgres dbname=fleet"
  FL_URL=$ZP_FLEET
  "$ZKPIPE" fleet init "$FL_URL" >/dev/null || fl_fail "zkpipe fleet init"
}

fl_pg_start() {
  "${FL_AS[@]}" "$PGBIN/pg_ctl" -D "$FL_PGDATA" -l "$FL_DIR/pg/server.log" -w -t 60 \
    -o "-c listen_addresses='' -k $FL_SOCK -c fsync=off -c max_connections=50" start >/dev/null ||
    { tail -20 "$FL_DIR/pg/server.log" >&2; fl_fail "pg_ctl start"; }
}
fl_pg_stop() { "${FL_AS[@]}" "$PGBIN/pg_ctl" -D "$FL_PGDATA" -m "${1:-fast}" -w -t 60 stop >/dev/null; }

fl_psql() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$FL_SOCK" -U postgres -d fleet -c "$1"; }

# fl_box NAME [up options...]: start a box (its own process group, runtime dir, state, arena)
fl_box() {
  local name=$1; shift
  local d=$FL_DIR/box-$name
  mkdir -p "$d/run" "$d/state"
  chmod 700 "$d/run"
  ZP_RUNTIME_DIR=$d/run ZP_STATE_DIR=$d/state setsid "$ZKPIPE" up --arena "fl-$FL_NAME-$name-$$" --fleet - \
    --box-name "$name" "$@" >"$d/up.log" 2>&1 &
  eval "FL_PID_$name=$!"
  FL_BOXES+=("$name")
}
fl_box_pid() { eval "echo \$FL_PID_$1"; }
fl_box_dir() { echo "$FL_DIR/box-$1"; }

# wait until the box's row is in the fleet (its heartbeat)
fl_wait_box() {
  local i
  for i in $(seq 1 600); do
    [ "$(fl_psql "SELECT count(*) FROM zkpipe.boxes WHERE name = '$1' AND heartbeat > clock_timestamp() - interval '10 s'")" = 1 ] &&
      [ "$(ZP_RUNTIME_DIR=$(fl_box_dir $1)/run "$ZKPIPE" status --runtime-dir "$(fl_box_dir $1)/run" --json 2>/dev/null |
          jq '[.workers[].role] | unique | length')" = 3 ] && return 0
    sleep 0.1
  done
  fl_fail "box $1 did not join the fleet"
}

# the process groups of a box: its children's (`zkpipe up` puts them in a group of their own)
# first, then up's own
fl_box_groups() {
  local pid; pid=$(fl_box_pid "$1")
  { ps -o pgid= --ppid "$pid" 2>/dev/null | tr -d ' ' | sort -u | grep -vx "$pid"; echo "$pid"; } | grep .
}
# signal every process of a box at once (STOP to freeze it, KILL to kill it)
fl_signal_box() {
  local g; for g in $(fl_box_groups "$1"); do kill "-$2" -- "-$g" 2>/dev/null || true; done
}
# kill -9 a whole box: its `zkpipe up` and every child, none of them warned (no clean hand-back)
fl_kill_box() {
  local pid; pid=$(fl_box_pid "$1")
  fl_signal_box "$1" KILL
  wait "$pid" 2>/dev/null || true
}

fl_stop_box() {
  local pid; pid=$(fl_box_pid "$1")
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid"
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fl_signal_box "$1" KILL
  wait "$pid" 2>/dev/null || true
}

# wait until SQL $1 prints "t" (safety timeout $2 s)
fl_wait_sql() {
  local i
  for i in $(seq 1 $((${2:-120} * 10))); do
    [ "$(fl_psql "$1" 2>/dev/null)" = t ] && return 0
    sleep 0.1
  done
  fl_fail "timed out waiting for: $1"
}

# stop every box and fail on any sanitizer report in their logs (ASan/UBSan builds)
fl_finish() {
  local b
  for b in "${FL_BOXES[@]}"; do fl_stop_box "$b"; done
  for b in "${FL_BOXES[@]}"; do
    if grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$(fl_box_dir "$b")/up.log"; then
      grep -E -A20 "ERROR: (Address|Leak)Sanitizer|runtime error:" "$(fl_box_dir "$b")/up.log" | head -60 >&2
      fl_fail "sanitizer report in box $b's log"
    fi
  done
}

fl_dump() {
  [ -n "${FL_DIR:-}" ] || return 0
  local b
  for b in "${FL_BOXES[@]}"; do
    echo "---- box $b up.log (last 40 lines)" >&2
    tail -40 "$(fl_box_dir "$b")/up.log" 2>/dev/null | sed 's/^/  /' >&2
  done
  echo "---- fleet status" >&2
  "$ZKPIPE" status --fleet "$FL_URL" 2>&1 | sed 's/^/  /' >&2 || true
  echo "---- postgres log (last 20 lines)" >&2
  tail -20 "$FL_DIR/pg/server.log" 2>/dev/null | sed 's/^/  /' >&2
}

fl_cleanup() {
  local b
  for b in "${FL_BOXES[@]}"; do fl_stop_box "$b"; done
  [ -n "${FL_PGDATA:-}" ] && [ -f "$FL_PGDATA/postmaster.pid" ] && fl_pg_stop immediate
  # a box killed -9 leaves its arena and key segments: ours all end in -$$ (the arena names)
  rm -f /dev/shm/zkpipe-*-fl-"${FL_NAME:-none}"-*-$$ /dev/shm/zkpipe-*-fl-"${FL_NAME:-none}"-*-$$-key-*
  if [ "${FL_KEEP:-0}" = 0 ] && [ -n "${FL_DIR:-}" ]; then rm -rf "$FL_DIR"; fi
}
