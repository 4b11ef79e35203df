#!/usr/bin/env bash
# stage_verdict.sh ZKPIPE SOURCE_ROOT - issue 10 item 1: the deferred payload verify keeps the
# protection. A payload corrupted after staging but before the verify's verdict (here: after the
# whole compute, while the verify is held by ZP_TEST_HOLD_DIR/hold-gpu-verify) is caught by the
# GPU worker's own verify before anything is committed: the computed result is dropped, the slot
# never goes PROVED for that generation (the GPU worker's only DONE is the redo's, the finalizer
# never sees the bad payload), the task FAILs payload_bad and the partition is re-synthesized;
# the job's proofs all verify (zkpipe verify and snarkjs).
. "$(dirname "$0")/stage_pipe_lib.sh"
ipc_init verdict "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu-verify
J=$(ipc_submit --zkey $F/circuit.zkey --request-id verdict-$$ $F/witness-0.wtns $F/witness-1.wtns)
pipe_wait_staged 1
G=$(ipc_worker_pid gpu)
S=$(pipe_staged_slot)
pipe_wait_log "gpu-worker\[$G\].*cpu backend: prove_g1 [0-9.]+ ms"
pipe_corrupt_c "$S"
ipc_log "slot $S: c corrupted after its compute, before its verdict"
ipc_release gpu-verify
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"

grep -E "gpu-worker\[$G\].*slot $S payload does NOT verify" "$IPC_DIR/up.log" >&2 ||
  ipc_fail "the deferred verify did not catch the corrupted payload"
grep -E "gpu-worker\[$G\].*the payload did not verify: the computed result is dropped, nothing committed" "$IPC_DIR/up.log" >&2 ||
  ipc_fail "no dropped result logged"
grep -E "finalizer.*synthesized payload" "$IPC_DIR/up.log" && ipc_fail "the bad payload reached the finalizer"
# nothing committed for the bad generation: one DONE per partition from the GPU worker, one
# FAIL; synthesized three times (two partitions, one redone)
[ "$(ipc_jq '[.workers[] | select(.role == "gpu")][0].done')" = 2 ] || ipc_fail "the GPU worker committed the bad payload's result"
[ "$(ipc_jq '[.workers[] | select(.role == "synth")][0].done')" -ge 3 ] || ipc_fail "the partition was not redone from synthesis"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 2
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-0.json" "$IPC_DIR/out/proof-0.json"
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-1.json" "$IPC_DIR/out/proof-1.json"
ipc_log "caught by the deferred verify before the commit (payload_bad), redone from synthesis, the proofs verify"
echo "ipc stage_verdict: OK"
