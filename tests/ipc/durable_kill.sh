#!/usr/bin/env bash
# durable_kill.sh ZKPIPE SOURCE_ROOT - kill -9 the broker in the middle of a multi-partition
# job, twice (`zkpipe up` restarts it; the arena survives): once while the GPU worker holds a
# PROVING slot and other partitions sit READY, once while the finalizer holds a FINALIZING
# slot and others sit PROVED. Each time the restarted broker rebuilds the job from its journal
# and the slot table, the worker's HELLO re-adopts the slot it holds, and the job completes
# with every proof verifying, every slot FREE, and no partition proven more often than the
# requeue counters say. Third, the broker and the GPU worker die together: the slots whose
# owner is gone go back to READY at once (no re-synthesis). Fourth, the finalizer finishes
# while the broker is stopped and then killed (its DONE lost): the proof kept in the FINISHED
# slot is journaled by the restarted broker, nothing is proven again.
# Test hook: ZP_TEST_HOLD_DIR/hold-<role> (see kill.sh).
. "$(dirname "$0")/durable_lib.sh"
dur_init dkill "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
F=$FIX/bn128_chain

# 1. GPU stage: synth fills the 4 slots (READY), the GPU worker holds one (PROVING)
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id dkill-1 $F/witness-{0..7}.wtns)
ipc_wait_for '.slots.PROVING >= 1 and .slots.READY >= 1 and .slots.FREE == 0'
L0=$(wc -l < "$IPC_DIR/up.log")
dur_kill_broker
[ "$(ipc_jq '.jobs.total')" = 1 ] || ipc_fail "the restarted broker lost the job"
ipc_wait_for '[.workers[] | select(.role == "gpu" and .held >= 1)] | length == 1'
grep -q "adopted by gpu worker" "$IPC_DIR/up.log" || ipc_fail "the GPU worker's slot was not re-adopted"
grep -q "READY, payload verifies" "$IPC_DIR/up.log" || ipc_fail "no READY slot was kept across the restart"
ipc_release gpu
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/j1" >/dev/null || ipc_fail "await after a broker kill (gpu)"
ipc_verify_all "$IPC_DIR/out/j1" $F/verification_key.json 8
ipc_all_free
# the RESET did not make the GPU worker give up the task it was running (and listed in its
# HELLO): no FAIL came back for it, the restarted broker's adoption stood
tail -n +$((L0 + 1)) "$IPC_DIR/up.log" | grep "failed at gpu" >&2 &&
  ipc_fail "the adopted GPU task was given up after the RESET"
# every partition was proven by the new broker exactly once, plus what it requeued
RQ=$(ipc_jq '.counters.requeued.synth + .counters.requeued.gpu + .counters.requeued.final')
[ "$(ipc_jq '.counters.parts_done')" = 8 ] || ipc_fail "parts_done != 8 after the restart"
[ "$(ipc_jq '.counters.requeued.synth')" = 0 ] || ipc_fail "a sealed payload was synthesized again"
# (the GPU worker's 2 credits, each handed back at most once per RESET it got)
[ "$RQ" -le 4 ] || ipc_fail "$RQ requeues after one broker kill"
ipc_log "gpu-stage kill: 8/8 proofs verify, $RQ requeue(s)"

# 2. final stage: the finalizer holds a FINALIZING slot, the others are PROVED
ipc_hold final
J2=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id dkill-2 $F/witness-{0..7}.wtns)
ipc_wait_for '.slots.FINALIZING >= 1 and .slots.PROVED >= 1 and .slots.FREE == 0'
L0=$(wc -l < "$IPC_DIR/up.log")
dur_kill_broker
[ "$(ipc_jq '.jobs.total')" = 2 ] || ipc_fail "the restarted broker lost a job"
[ "$(ipc_jq '.jobs.done')" = 1 ] || ipc_fail "the finished job is not done after the restart"
ipc_wait_for '[.workers[] | select(.role == "final" and .held >= 1)] | length == 1'
grep -q "adopted by final worker" "$IPC_DIR/up.log" || ipc_fail "the finalizer's slot was not re-adopted"
grep -q "PROVED, result verifies" "$IPC_DIR/up.log" || ipc_fail "no PROVED slot was kept across the restart"
ipc_release final
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out/j2" >/dev/null || ipc_fail "await after a broker kill (final)"
ipc_verify_all "$IPC_DIR/out/j2" $F/verification_key.json 8
ipc_all_free
[ "$(ipc_jq '.counters.parts_done')" = 8 ] || ipc_fail "parts_done != 8 after the second restart"
[ "$(ipc_jq '.counters.requeued.synth + .counters.requeued.gpu')" = 0 ] || ipc_fail "work before the final stage was redone"
[ "$(ipc_jq '.counters.parts_failed')" = 0 ] || ipc_fail "a partition failed"
[ "$(ipc_jq '.journal.errors')" = 0 ] || ipc_fail "journal write errors"
tail -n +$((L0 + 1)) "$IPC_DIR/up.log" | grep "failed at final" >&2 &&
  ipc_fail "the adopted finalizer task was given up after the RESET"
ipc_log "final-stage kill: 8/8 proofs verify"

# 3. the broker and the GPU worker holding slots die together: the slots' owner is gone, so
#    the restarted broker puts them back to READY at once (attempt+1), no re-synthesis
ipc_hold gpu
J3=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id dkill-3 $F/witness-{0..3}.wtns)
ipc_wait_for '.slots.PROVING >= 1 and ([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
GP=$(ipc_worker_pid gpu)
BP=$(dur_broker_pid)
ipc_log "kill -9 gpu worker $GP and broker $BP"
kill -9 "$GP" "$BP"
ipc_wait_for ".pid != $BP and ([.workers[] | select(.role == \"gpu\" and .pid != $GP)] | length) == 1" 60
grep -q "owner pid $GP gone: requeueing at its stage" "$IPC_DIR/up.log" || ipc_fail "dead owner's slot not requeued at its stage"
ipc_release gpu
"$ZKPIPE" await "$J3" --timeout 300 --out "$IPC_DIR/out/j3" >/dev/null || ipc_fail "await after killing broker + gpu"
ipc_verify_all "$IPC_DIR/out/j3" $F/verification_key.json 4
ipc_all_free
[ "$(ipc_jq '.counters.requeued.synth')" = 0 ] || ipc_fail "a sealed payload was synthesized again"
[ "$(ipc_jq '.counters.parts_failed')" = 0 ] || ipc_fail "a partition failed"
ipc_log "broker+gpu kill: 4/4 proofs verify"

# 4. the finalizer finishes while the broker is down (stopped, then killed: its DONE is lost):
#    the proof was committed into the slot (FINISHED), and the restarted broker journals it
#    from there instead of proving the partition again
ipc_hold final
J4=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id dkill-4 $F/witness-5.wtns)
ipc_wait_for '.slots.FINALIZING == 1 and ([.workers[] | select(.role == "final" and .held >= 1)] | length) == 1'
BP=$(dur_broker_pid)
ipc_log "SIGSTOP broker $BP, let the finalizer finish, then kill -9 the broker"
kill -STOP "$BP"
ipc_release final
sleep 3   # (a one-partition finalize takes milliseconds; nothing can be asked of a stopped broker)
kill -9 "$BP"
ipc_wait_for ".pid != $BP" 60
ipc_wait_workers 1 1 1
grep -q "slot [0-9]* FINISHED, proof verifies: journaled from the slot" "$IPC_DIR/up.log" ||
  ipc_fail "the finished proof was not taken from the slot after the restart"
"$ZKPIPE" await "$J4" --timeout 300 --out "$IPC_DIR/out/j4" >/dev/null || ipc_fail "await after a lost DONE"
ipc_verify_all "$IPC_DIR/out/j4" $F/verification_key.json 1
ipc_all_free
# nothing was proven again: no stage did any work for it under the new broker
[ "$(ipc_jq '[.workers[].done] | add')" = 0 ] || ipc_fail "work was redone after the restart"
[ "$(ipc_jq '.counters.parts_done')" = 1 ] || ipc_fail "parts_done != 1 after the restart"
ipc_status | jq -c '{requeued: .counters.requeued, stale: .counters.stale}' >&2
echo "ipc durable_kill: OK"
