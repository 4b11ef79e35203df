#!/usr/bin/env bash
# kill.sh ZKPIPE SOURCE_ROOT - kill -9 the GPU worker while it holds partitions, then the
# finalizer, then the synthesizer (each restarted by `zkpipe up`): the job still completes,
# every proof verifies, every slot is FREE, and the requeue counters say what happened.
# Test hook: ZP_TEST_HOLD_DIR/hold-<role> makes a worker wait before starting each task, so
# the kills land while the victim holds a slot, deterministically.
. "$(dirname "$0")/lib.sh"
ipc_init kill "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
F=$FIX/bn128_chain
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --priority normal --request-id kill-job $F/witness-{0..7}.wtns)

# 1. GPU worker holding (PROVING) slots
ipc_wait_for '.slots.PROVING >= 1 and ([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
G=$(ipc_worker_pid gpu)
ipc_log "kill -9 gpu worker $G"
kill -9 "$G"
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length == 1"
ipc_wait_for '.counters.requeued.gpu >= 1 and .counters.deaths.gpu >= 1'

# 2. finalizer holding a FINALIZING slot
ipc_hold final; ipc_hold synth; ipc_release gpu
ipc_wait_for '.slots.FINALIZING >= 1 and ([.workers[] | select(.role == "final" and .held >= 1)] | length) == 1'
FP=$(ipc_worker_pid final)
ipc_log "kill -9 finalizer $FP"
kill -9 "$FP"
ipc_wait_for "[.workers[] | select(.role == \"final\" and .pid != $FP)] | length == 1"
ipc_wait_for '.counters.requeued.final >= 1 and .counters.deaths.final >= 1'
ipc_release final

# 3. synthesizer holding a SYNTH slot (slots free up once partitions are finalized)
ipc_wait_for '.slots.SYNTH >= 1 and ([.workers[] | select(.role == "synth" and .held >= 1)] | length) == 1'
S=$(ipc_worker_pid synth)
ipc_log "kill -9 synth $S"
kill -9 "$S"
ipc_wait_for "[.workers[] | select(.role == \"synth\" and .pid != $S)] | length == 1"
ipc_wait_for '.counters.requeued.synth >= 1 and .counters.deaths.synth >= 1'
ipc_release synth

"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" || ipc_fail "await after kills"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 8
ipc_all_free
ipc_status | jq -c '{requeued: .counters.requeued, deaths: .counters.deaths, stale: .counters.stale}' >&2
[ "$(ipc_jq '.counters.parts_failed')" = 0 ] || ipc_fail "a partition failed"
echo "ipc kill: OK"
