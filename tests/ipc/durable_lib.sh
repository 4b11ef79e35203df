# durable_lib.sh - helpers for the durability tests (tests/ipc/durable_*.sh), on top of lib.sh:
# a private journal directory (ZP_STATE_DIR) per test, and killing / waiting for the broker.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DUR_STATE=$(mktemp -d /tmp/zkpipe-ipc-state.XXXXXX)
export ZP_STATE_DIR=$DUR_STATE
dur_init() {
  ipc_init "$@"
  trap 'ipc_cleanup; [ "${IPC_KEEP:-0}" = 0 ] && rm -rf "$DUR_STATE"' EXIT
}
dur_broker_pid() { ipc_jq .pid; }
# kill -9 the broker; `zkpipe up` restarts it; wait until the new one serves with all workers back
dur_kill_broker() {
  local old
  old=$(dur_broker_pid) || ipc_fail "no broker pid"
  ipc_log "kill -9 broker $old"
  kill -9 "$old"
  ipc_wait_for ".pid != $old" 60
  ipc_wait_workers 1 1 1
  ipc_log "broker restarted as $(dur_broker_pid)"
}
# stop the whole group cleanly (SIGTERM to `zkpipe up`)
dur_stop_group() {
  kill -TERM "$IPC_UP"
  for _ in $(seq 1 150); do kill -0 "$IPC_UP" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$IPC_UP" 2>/dev/null && ipc_fail "zkpipe up did not stop"
  wait "$IPC_UP" 2>/dev/null
  IPC_UP=
}
dur_start_group() {
  "$ZKPIPE" up --arena "$IPC_ARENA" "$@" >>"$IPC_DIR/up.log" 2>&1 &
  IPC_UP=$!
  ipc_wait_workers 1 1 1
}
