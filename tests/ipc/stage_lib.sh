# stage_lib.sh - helpers for the stage-runtime tests (stage_*.sh): one stage process run
# directly (no `zkpipe up`), against the fake broker ipc_stage_peer ($ZP_STAGE_PEER) or none.
# Usage: . stage_lib.sh; stage_init NAME ZKPIPE SOURCE_ROOT. Timeouts are safety nets only.
set -u
st_fail() { echo "FAIL: $*" >&2; st_dump; exit 1; }
st_log() { echo "[$(date +%T.%N | cut -c1-12)] $*" >&2; }

stage_init() {
  ST_NAME=$1; ZKPIPE=$2; ST_SRC=$3; FIX=$ST_SRC/tests/fixtures
  local bin; bin=$(cd "$(dirname "$ZKPIPE")/.." && pwd)
  SYNTH=$bin/synth/zkpipe-synth; GPU=$bin/gpu-worker/zkpipe-gpu-worker; FINAL=$bin/finalizer/zkpipe-finalizer
  PEER=${ZP_STAGE_PEER:-$bin/tests/ipc_stage_peer}
  for b in "$SYNTH" "$GPU" "$FINAL" "$PEER"; do [ -x "$b" ] || st_fail "no binary $b"; done
  ST_DIR=$(mktemp -d /tmp/zkpipe-stage-$ST_NAME.XXXXXX)
  chmod 700 "$ST_DIR"
  mkdir -p "$ST_DIR/run" "$ST_DIR/hold"
  chmod 700 "$ST_DIR/run"
  ST_ARENA=stage-$ST_NAME-$$
  ST_PIDS=""
  trap st_cleanup EXIT
}

st_cleanup() {
  local p
  for p in $ST_PIDS; do kill -KILL "$p" 2>/dev/null; done
  # what a killed fake broker or stage left in /dev/shm (arenas, key store objects) of this test
  [ -n "${ST_ARENA:-}" ] && rm -f /dev/shm/zkpipe-"$(id -u)"-"$ST_ARENA"*
  [ "${ST_KEEP:-0}" = 0 ] && rm -rf "$ST_DIR"
}

st_dump() {
  local f
  [ -n "${ST_DIR:-}" ] || return 0
  for f in "$ST_DIR"/*.log; do [ -f "$f" ] && { echo "---- $f" >&2; tail -40 "$f" | sed 's/^/  /' >&2; }; done
}

# wait (safety timeout $2 s) until command $1 succeeds
st_wait() {
  local i
  for i in $(seq 1 $((${2:-60} * 20))); do eval "$1" && return 0; sleep 0.05; done
  return 1
}

# wait for pid $1 to exit (safety timeout $2 s); sets ST_RC to its status
st_wait_exit() {
  local i
  for i in $(seq 1 $((${2:-60} * 20))); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$1" 2>/dev/null && st_fail "pid $1 still running after ${2:-60} s"
  wait "$1"; ST_RC=$?
}

# is signal $2 (number) caught by pid $1 (SigCgt in /proc/PID/status)?
st_catches() {
  local mask; mask=$(awk '/^SigCgt:/ {print $2}' /proc/"$1"/status 2>/dev/null) || return 1
  [ -n "$mask" ] && (( (16#$mask >> ($2 - 1)) & 1 ))
}

# start the fake broker: st_peer LOG MODE ARGS... (sets PEERPID; waits for its socket)
st_peer() {
  local log=$1; shift
  rm -f "$ST_DIR/run/broker.sock"
  "$PEER" "$ST_DIR/run" "$@" >"$ST_DIR/$log" 2>&1 &
  PEERPID=$!; ST_PIDS="$PEERPID"
  st_wait "[ -S '$ST_DIR/run/broker.sock' ]" 30 || st_fail "the fake broker did not bind"
}

# start a stage against it: st_stage LOG BINARY ARGS... (sets SPID)
st_stage() {
  local log=$1 bin=$2; shift 2
  "$bin" --runtime-dir "$ST_DIR/run" --heartbeat-ms 100 --no-key-store "$@" >"$ST_DIR/$log" 2>&1 &
  SPID=$!; ST_PIDS="$PEERPID $SPID"
}
