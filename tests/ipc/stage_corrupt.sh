#!/usr/bin/env bash
# stage_corrupt.sh ZKPIPE SOURCE_ROOT - issue 10 item 1: the GPU worker verifies a partition's
# payload on its staging thread (deferred: beside the compute, before the commit); a payload
# corrupted after that verify read it (a stray write while the slot is PROVING and held by this
# worker: nothing legitimate writes then) is still caught before the proof is released: the
# finalizer verifies the same seal again, FAILs with payload_bad and the partition is redone from
# synthesis. The hook hold-gpu-compute holds the work thread before the compute; the test waits
# for the deferred verify's verdict ("payload verified"), then flips a byte of the slot's c
# vector (which the compute reads from the slot) in the arena. Expected: the finalizer's
# "payload checksum" failure, a requeue to synthesis, and in the end a proof that verifies.
# (A corruption before the verdict: stage_verdict.sh.)
. "$(dirname "$0")/stage_pipe_lib.sh"
ipc_init corrupt "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu-compute
J=$(ipc_submit --zkey $F/circuit.zkey --request-id corrupt-$$ $F/witness-0.wtns)
pipe_wait_staged 1
S=$(pipe_staged_slot)
pipe_wait_log "gpu-worker.*slot $S payload verified"
pipe_corrupt_c "$S"
ipc_log "slot $S: c corrupted after the staging verify"
ipc_release gpu-compute
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"

grep -E "finalizer.*synthesized payload: .*payload checksum" "$IPC_DIR/up.log" >&2 ||
  ipc_fail "the finalizer did not catch the corrupted payload"
grep -E "gpu-worker.*synthesized payload" "$IPC_DIR/up.log" && ipc_fail "the corruption was before the staging verify"
# the finalizer's FAIL (payload_bad) sends the partition back to synthesis: synthesized twice
[ "$(ipc_jq '[.workers[] | select(.role == "synth")][0].done')" -ge 2 ] || ipc_fail "the partition was not redone from synthesis"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 1
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-0.json" "$IPC_DIR/out/proof-0.json"
ipc_log "caught by the finalizer's verify (payload_bad), redone from synthesis, the proof verifies"
echo "ipc stage_corrupt: OK"
