#!/usr/bin/env bash
# stage_verify_busy.sh ZKPIPE SOURCE_ROOT - issue 10, the starved gap: the deferred payload
# checksum begins only while a compute runs, so that it never races the work thread's launch and
# the compute thread's wake-up for a core (2.2-2.5 ms on 2 cores, seen in a sched_switch trace).
# Shown by ordering, not timing: ZP_TEST_HOLD_DIR/hold-gpu holds the only partition on the work
# thread before its launch (the device idle, the task staged): its verify must not run (before
# the change it ran right after the staging). Then hold-gpu-compute holds it inside its compute
# (the device busy) and hold-gpu is released: the verify must now run while the compute is held.
# Released, the proof verifies (zkpipe verify and snarkjs), and the trace says the checksum began
# inside the compute's span on the compute thread. Then 8 small partitions, nothing held: no
# verify may wait out its bound (a compute that began and ended before it looked counts).
. "$(dirname "$0")/stage_pipe_lib.sh"
ipc_init verifybusy "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --request-id verifybusy-$$ $F/witness-0.wtns)
pipe_wait_staged 1
G=$(ipc_worker_pid gpu)
S=$(pipe_staged_slot)
sleep 1   # (the wait ends after 5 s without a compute: well past this)
grep -E "gpu-worker\[$G\].*slot $S payload (verified|does NOT verify)" "$IPC_DIR/up.log" &&
  ipc_fail "the payload verify ran while the device was idle (its compute not yet launched)"
ipc_log "slot $S staged, its launch held: the payload verify waits for a compute"
ipc_hold gpu-compute
ipc_release gpu
pipe_wait_log "gpu-worker\[$G\].*slot $S payload verified in .* \(deferred"
grep -E "gpu-worker\[$G\].*cpu backend: prove_g1 [0-9.]+ ms" "$IPC_DIR/up.log" &&
  ipc_fail "the compute ended while it was held"
ipc_log "slot $S: the payload verified while its compute was held"
ipc_release gpu-compute
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 1
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-0.json" "$IPC_DIR/out/proof-0.json"
pipe_trace_gpu "$J" >"$IPC_DIR/gpu.jsonl"
[ "$(wc -l <"$IPC_DIR/gpu.jsonl")" = 1 ] || ipc_fail "expected 1 gpu slice: $(cat "$IPC_DIR/gpu.jsonl")"
jq -e '(.t_run_start > 0 and .t_run_end > 0 and .t_verify_end > 0 and .verify_in_ns > 0) and
  (.t_verify_end - .verify_in_ns >= .t_run_start) and (.t_verify_end - .verify_in_ns <= .t_run_end)' \
  "$IPC_DIR/gpu.jsonl" >/dev/null ||
  ipc_fail "trace: the checksum did not begin inside the compute's span: $(cat "$IPC_DIR/gpu.jsonl")"
ipc_log "trace: the checksum began inside the compute's span; the proof verifies"
# small partitions, nothing held: a compute may begin and end before the verify looks (a tiny
# circuit computes in about a millisecond), and such a compute must end the verify's wait too
# (counted since the staging), or the verify waits for the next compute, the last one until its
# 5 s bound, and the commit behind it
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id verifybusy-2-$$ $F/witness-{0..7}.wtns)
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out2" >/dev/null || ipc_fail "await the small partitions"
ipc_verify_all "$IPC_DIR/out2" $F/verification_key.json 8
grep -E "gpu-worker\[$G\].*no compute began within" "$IPC_DIR/up.log" &&
  ipc_fail "a payload verify waited out its bound although the partition's compute had begun"
ipc_log "8 small partitions: every verify's wait ended with a compute, none at its bound"
echo "ipc stage_verify_busy: OK"
