#!/usr/bin/env bash
# prio_takeback.sh ZKPIPE SOURCE_ROOT - every slot full of LOW work, then a CRITICAL job: it is
# served without waiting for the LOW partitions to finish (issue 10 item 6). The GPU worker is
# held (ZP_TEST_HOLD) with one LOW partition, so no LOW partition can finish; the others sit
# READY in their slots (not started on a GPU). The CRITICAL partitions must still be
# synthesized: the broker takes slots back from the READY LOW ones (they go back to synthesis).
# Shown by ordering: both CRITICAL partitions are READY while no partition has finished and the
# GPU is still held; after the release they finish before every LOW partition but the one the
# GPU already held; every LOW partition is proved exactly once in the end.
. "$(dirname "$0")/lib.sh"
ipc_init prio_takeback "$1" "$2" --slots 3 --max-domain 1024 --gpu-credits 1
F=$FIX/bn128_chain
ipc_hold gpu
JL=$(ipc_submit --zkey $F/circuit.zkey --priority low --request-id low-8 $F/witness-{0..7}.wtns)
# the arena is full of LOW work: one held by the GPU, two READY waiting for it
ipc_wait_for '.slots.FREE == 0 and .queues.gpu.low == 2 and .queues.gpu.running == 1'
JC=$(ipc_submit --zkey $F/circuit.zkey --priority critical --request-id critical-2 $F/witness-{6..7}.wtns)
ipc_wait_for '.queues.gpu.critical == 2' 120
st=$(ipc_status)
done_now=$(jq '.counters.parts_done' <<<"$st")
taken=$(jq '.priority.taken_back_ready' <<<"$st")
held=$(jq '[.slot_table[] | select(.stage == "gpu" and .running and .priority == "low")] | length' <<<"$st")
ipc_log "critical READY with $done_now partitions finished, $taken slots taken back, $held LOW still on the GPU"
[ "$done_now" = 0 ] || ipc_fail "$done_now partitions finished before the critical job had slots"
[ "$taken" -ge 2 ] || ipc_fail "taken_back_ready = $taken, expected >= 2"
[ "$held" = 1 ] || ipc_fail "the LOW partition on the GPU was disturbed ($held running)"
ipc_release gpu
"$ZKPIPE" await "$JC" --timeout 300 --out "$IPC_DIR/out/c" >/dev/null || ipc_fail "await critical"
"$ZKPIPE" await "$JL" --timeout 300 --out "$IPC_DIR/out/l" >/dev/null || ipc_fail "await low"
ipc_verify_all "$IPC_DIR/out/c" $F/verification_key.json 2
ipc_verify_all "$IPC_DIR/out/l" $F/verification_key.json 8
pd=$(ipc_jq '.counters.parts_done')
[ "$pd" = 10 ] || ipc_fail "parts_done = $pd, expected 10 (a LOW partition lost or proved twice)"
"$ZKPIPE" trace --out "$IPC_DIR/trace.json" 2>/dev/null || ipc_fail trace
tc=$(jq "[.traceEvents[] | select(.ph == \"X\" and .cat == \"final\" and .args.job == $JC) | .args.t_done] | max" "$IPC_DIR/trace.json")
nb=$(jq "[.traceEvents[] | select(.ph == \"X\" and .cat == \"final\" and .args.job == $JL and .args.t_done < $tc)] | length" "$IPC_DIR/trace.json")
ipc_log "$nb LOW partitions finished before the critical job"
[ "$nb" -le 1 ] || ipc_fail "$nb LOW partitions finished before the critical job (only the one on the GPU may)"
ipc_all_free
echo "ipc prio_takeback: OK"
