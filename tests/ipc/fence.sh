#!/usr/bin/env bash
# fence.sh ZKPIPE SOURCE_ROOT - a hung worker is fenced by its supervisor at the broker's
# request (issue 9 item 2): the GPU worker is stopped (SIGSTOP) while it holds a slot, so it
# goes silent; the broker declares it dead and asks `zkpipe up` over the supervisor channel;
# up kills it through its pidfd and restarts it; the job completes and every proof verifies.
. "$(dirname "$0")/lib.sh"
ipc_init fence "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 100 --liveness 5
F=$FIX/bn128_chain
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --request-id fence-job $F/witness-{0..3}.wtns)
ipc_wait_for '([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
G=$(ipc_worker_pid gpu)
ipc_log "SIGSTOP gpu worker $G"
kill -STOP "$G"
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length == 1" 60
for _ in $(seq 1 100); do kill -0 "$G" 2>/dev/null || break; sleep 0.1; done
kill -0 "$G" 2>/dev/null && ipc_fail "the stopped gpu worker $G is still there"
grep -q "gpu #0 (cpu backend) (pid $G): fenced at the broker's request (missed heartbeats" "$IPC_DIR/up.log" ||
  ipc_fail "up did not log fencing pid $G at the broker's request"
[ "$(ipc_jq .counters.fence_requests)" -ge 1 ] || ipc_fail "fence request not counted"
ipc_release gpu
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await after the fence"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 4
ipc_all_free
echo "ipc fence: OK"
