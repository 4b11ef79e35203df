#!/usr/bin/env bash
# stage_deferred.sh ZKPIPE SOURCE_ROOT - issue 10 item 1, the starved path: nothing O(n) runs
# between READY and the compute's start. The payload checksum is deferred: it runs beside the
# compute and gates the commit, not the start. Shown by ordering, not timing: the hook
# ZP_TEST_HOLD_DIR/hold-gpu-verify holds the deferred verify of the only partition (the worker
# has nothing staged ahead: starved); its compute must start and end meanwhile (with the
# checksum before the compute, as before, it never started: this waited forever), and nothing
# is committed while the verdict is held (the slot stays PROVING, the GPU worker reports no
# DONE, the job does not finish). Released, the commit follows the verdict: the trace says compute end < verify end <=
# the task's end, and the proof verifies (zkpipe verify and snarkjs). The verify's wait for a
# compute (gpu-worker verify_when_busy) then ends at once: that compute began after the staging.
. "$(dirname "$0")/stage_pipe_lib.sh"
ipc_init deferred "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu-verify
J=$(ipc_submit --zkey $F/circuit.zkey --request-id deferred-$$ $F/witness-0.wtns)
pipe_wait_staged 1
G=$(ipc_worker_pid gpu)
S=$(pipe_staged_slot)
pipe_wait_log "gpu-worker\[$G\].*cpu backend: prove_g1 [0-9.]+ ms"
ipc_log "slot $S: the compute ran while its payload verify was held"
grep -E "gpu-worker\[$G\].*slot $S payload (verified|does NOT verify)" "$IPC_DIR/up.log" &&
  ipc_fail "the payload verify was not held"
# the verdict gates the commit: nothing is committed or released while it is held
"$ZKPIPE" await "$J" --timeout 2 >/dev/null 2>&1 && ipc_fail "the job finished while its payload verify was held"
[ "$(ipc_jq '[.workers[] | select(.role == "gpu")][0].done')" = 0 ] ||
  ipc_fail "the GPU worker reported a DONE before its payload verify's verdict"
# the slot words themselves (status reads the arena): still PROVING, never PROVED before the verdict
[ "$(ipc_jq '.slots.PROVED')" = 0 ] && [ "$(ipc_jq '.slots.PROVING')" = 1 ] ||
  ipc_fail "the slot was committed before its payload verify's verdict: $(ipc_status | jq -c .slots)"
[ "$(ipc_worker_pid gpu)" = "$G" ] || ipc_fail "the gpu worker was restarted while held"
ipc_release gpu-verify
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
grep -E "gpu-worker\[$G\].*slot $S payload verified in .* \(deferred" "$IPC_DIR/up.log" >&2 ||
  ipc_fail "no deferred verify logged"
# released after its compute ended, the verify's wait for a compute (it begins only once one
# runs or has begun since the staging) ends at once, not at its 5 s bound
grep -E "gpu-worker\[$G\].*no compute began within" "$IPC_DIR/up.log" &&
  ipc_fail "the verify waited out its bound for a compute that had already run"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 1
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-0.json" "$IPC_DIR/out/proof-0.json"
pipe_trace_gpu "$J" >"$IPC_DIR/gpu.jsonl"
[ "$(wc -l <"$IPC_DIR/gpu.jsonl")" = 1 ] || ipc_fail "expected 1 gpu slice: $(cat "$IPC_DIR/gpu.jsonl")"
jq -e '(.t_stage_end > 0 and .t_compute_start > 0 and .t_verify_end > 0) and
  (.t_stage_end <= .t_compute_start) and (.t_compute_start <= .t_compute_end) and
  (.t_compute_end < .t_verify_end) and (.t_verify_end <= .t_end)' "$IPC_DIR/gpu.jsonl" >/dev/null ||
  ipc_fail "trace does not show the compute before the verdict and the commit after it: $(cat "$IPC_DIR/gpu.jsonl")"
ipc_log "trace: staged (O(1)) -> compute -> verdict -> commit; the proof verifies"
echo "ipc stage_deferred: OK"
