# lib.sh - helpers for the ipc tests: each test runs its own process group (`zkpipe up`) with
# its own runtime directory and arena name, so tests can run in parallel.
# Usage from a test: . lib.sh; ipc_init NAME ZKPIPE SOURCE_ROOT [up options...]
# Timeouts here are safety nets only; nothing asserts on speed.
set -u
ipc_fail() { echo "FAIL: $*" >&2; ipc_dump; exit 1; }
ipc_skip() { echo "SKIP: $*" >&2; exit 77; }
ipc_log() { echo "[$(date +%T.%N | cut -c1-12)] $*" >&2; }

ipc_init() {
  IPC_NAME=$1; ZKPIPE=$2; IPC_SRC=$3; FIX=$IPC_SRC/tests/fixtures; shift 3
  command -v jq >/dev/null || ipc_skip "jq not installed"
  [ -x "$ZKPIPE" ] || ipc_fail "no zkpipe binary at $ZKPIPE"
  IPC_DIR=$(mktemp -d /tmp/zkpipe-ipc-$IPC_NAME.XXXXXX)
  chmod 700 "$IPC_DIR"
  export ZP_RUNTIME_DIR=$IPC_DIR/run
  export ZP_TEST_HOLD_DIR=$IPC_DIR/hold
  export ZP_STATE_DIR=${ZP_STATE_DIR:-$IPC_DIR/state}   # the broker journal: per test, never in ~
  mkdir -p "$ZP_TEST_HOLD_DIR" "$IPC_DIR/out"
  IPC_ARENA=ipc-$IPC_NAME-$$
  trap ipc_cleanup EXIT
  "$ZKPIPE" up --arena "$IPC_ARENA" "$@" >"$IPC_DIR/up.log" 2>&1 &
  IPC_UP=$!
  ipc_wait_workers 1 1 1
}

ipc_cleanup() {
  if [ -n "${IPC_UP:-}" ] && kill -0 "$IPC_UP" 2>/dev/null; then
    kill -TERM "$IPC_UP"
    for _ in $(seq 1 150); do kill -0 "$IPC_UP" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$IPC_UP" 2>/dev/null && kill -KILL "$IPC_UP"
  fi
  # a group killed (-9 tests) leaves its arena and key store objects: this test's only
  [ -n "${IPC_ARENA:-}" ] && rm -f /dev/shm/zkpipe-"$(id -u)"-"$IPC_ARENA" /dev/shm/zkpipe-"$(id -u)"-"$IPC_ARENA"-key-*
  if [ "${IPC_KEEP:-0}" = 0 ] && [ -n "${IPC_DIR:-}" ]; then rm -rf "$IPC_DIR"; fi
}

ipc_dump() {
  [ -n "${IPC_DIR:-}" ] || return 0
  echo "---- status" >&2; "$ZKPIPE" status 2>&1 | sed 's/^/  /' >&2 || true
  echo "---- up.log (last 60 lines)" >&2; tail -60 "$IPC_DIR/up.log" | sed 's/^/  /' >&2 || true
}

ipc_status() { "$ZKPIPE" status --json; }
ipc_jq() { ipc_status | jq -r "$1"; }

# wait until jq expression $1 on the status JSON is "true" (safety timeout $2 s, default 120)
ipc_wait_for() {
  local expr=$1 limit=${2:-120} i
  for i in $(seq 1 $((limit * 20))); do
    [ "$(ipc_status 2>/dev/null | jq -r "$expr" 2>/dev/null)" = true ] && return 0
    sleep 0.05
  done
  ipc_fail "timed out waiting for: $expr"
}

ipc_wait_workers() {
  ipc_wait_for "([.workers[] | select(.role == \"synth\")] | length) >= $1 and
                ([.workers[] | select(.role == \"gpu\")] | length) >= $2 and
                ([.workers[] | select(.role == \"final\")] | length) >= $3" 60
}

ipc_worker_pid() { ipc_jq "[.workers[] | select(.role == \"$1\")][0].pid"; }
ipc_hold() { touch "$ZP_TEST_HOLD_DIR/hold-$1"; }
ipc_release() { rm -f "$ZP_TEST_HOLD_DIR/hold-$1"; }

# submit: prints the job id
ipc_submit() { "$ZKPIPE" submit "$@" || ipc_fail "submit $*"; }

# verify every proof-<i>.json in $1 against vk $2 with `zkpipe verify` (n = $3)
ipc_verify_all() {
  local dir=$1 vk=$2 n=$3 i
  for i in $(seq 0 $((n - 1))); do
    [ -f "$dir/proof-$i.json" ] || ipc_fail "missing $dir/proof-$i.json"
    "$ZKPIPE" verify "$vk" "$dir/public-$i.json" "$dir/proof-$i.json" >/dev/null ||
      ipc_fail "proof $i in $dir does not verify"
  done
}

# snarkjs oracle check of one proof when node is there (tests/oracle/ensure.sh installs the pinned
# snarkjs on first use, serialized by flock)
# (tests/oracle/verify.sh: in this repository, nothing from outside it)
ipc_oracle() {
  local vk=$1 pub=$2 proof=$3
  command -v node >/dev/null || return 0
  "$IPC_SRC/tests/oracle/ensure.sh" >/dev/null 2>&1 || { ipc_log "snarkjs oracle unavailable (npm ci failed)"; return 0; }
  ORACLE_ROOT=$IPC_SRC/tests/oracle bash "$IPC_SRC/tests/oracle/verify.sh" "$vk" "$pub" "$proof" >/dev/null 2>&1 ||
    ipc_fail "snarkjs rejects $proof"
  ipc_log "snarkjs accepts $proof"
}

ipc_all_free() {
  ipc_wait_for '.slots.FREE == .slots.total' 60
}
