#!/usr/bin/env bash
# prio_reserve.sh ZKPIPE SOURCE_ROOT - --slot-reserve 1 (zkpipe up's option): LOW work never takes
# the last free slot, so a CRITICAL job submitted while the arena is otherwise full of LOW work
# (the GPU held, ZP_TEST_HOLD) is synthesized at once, with taking back turned off
# (--preempt none): the reservation alone does it. Shown by states, not by timing: a slot
# stays FREE while LOW partitions wait and the synthesizer is idle; the CRITICAL partition is
# READY while nothing has finished; every partition is proved once in the end.
. "$(dirname "$0")/lib.sh"
# `zkpipe up` passes --slot-reserve/--preempt to the broker (the broker also reads
# $ZP_SLOT_RESERVE/$ZP_PREEMPT, as slot_classes.sh uses $ZP_SLOT_CLASSES)
ipc_init prio_reserve "$1" "$2" --slots 3 --max-domain 1024 --gpu-credits 1 --slot-reserve 1 --preempt none
F=$FIX/bn128_chain
ipc_hold gpu
JL=$(ipc_submit --zkey $F/circuit.zkey --priority low --request-id low-6 $F/witness-{0..5}.wtns)
ipc_wait_for '.slots.FREE == 1 and .queues.gpu.running == 1 and .queues.gpu.low == 1 and .queues.synth.low == 4 and
              ([.workers[] | select(.role == "synth")][0].held == 0)'
[ "$(ipc_jq '.priority.reserve[0]')" = 1 ] || ipc_fail "the broker did not take zkpipe up --slot-reserve 1"
JC=$(ipc_submit --zkey $F/circuit.zkey --priority critical --request-id critical-1 $F/witness-6.wtns)
ipc_wait_for '.queues.gpu.critical == 1'
st=$(ipc_status)
[ "$(jq '.counters.parts_done' <<<"$st")" = 0 ] || ipc_fail "partitions finished before the critical one was READY"
[ "$(jq '.priority.taken_back_ready + .priority.taken_back_revoke' <<<"$st")" = 0 ] || ipc_fail "slots were taken back with --preempt none"
ipc_release gpu
"$ZKPIPE" await "$JC" --timeout 300 --out "$IPC_DIR/out/c" >/dev/null || ipc_fail "await critical"
"$ZKPIPE" await "$JL" --timeout 300 --out "$IPC_DIR/out/l" >/dev/null || ipc_fail "await low"
ipc_verify_all "$IPC_DIR/out/c" $F/verification_key.json 1
ipc_verify_all "$IPC_DIR/out/l" $F/verification_key.json 6
[ "$(ipc_jq '.counters.parts_done')" = 7 ] || ipc_fail "parts_done is not 7"
ipc_all_free
echo "ipc prio_reserve: OK"
