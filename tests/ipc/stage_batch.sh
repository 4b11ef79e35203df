#!/usr/bin/env bash
# stage_batch.sh ZKPIPE SOURCE_ROOT - issue 10 item 5 (worker side): with ZP_GPU_BATCH=2 (the
# GPU worker's --batch 2: 3 credits) staged partitions of one zkey are computed together through
# zp_bk_prove_g1_batch. The work thread is held (hold-gpu) on the first partition until two more
# are staged, so the next compute is a batch of 2 by construction. Every proof verifies, and the
# trace gives the batched pair one compute interval.
. "$(dirname "$0")/stage_pipe_lib.sh"
export ZP_GPU_BATCH=2
ipc_init batch "$1" "$2" --slots 6 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --request-id batch-$$ $F/witness-{0..4}.wtns)
pipe_wait_staged 3
ipc_log "three partitions staged, the first held before its compute"
ipc_release gpu
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
grep -q "batching up to 2 partitions of one key per compute, 3 credits" "$IPC_DIR/up.log" || ipc_fail "no batching line"
grep -q "batch of 2 partitions of .* computed" "$IPC_DIR/up.log" || ipc_fail "no batch of 2 was computed"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 5
for i in 1 2; do ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-$i.json" "$IPC_DIR/out/proof-$i.json"; done
pipe_trace_gpu "$J" >"$IPC_DIR/gpu.jsonl"
jq -s -e '[group_by([.t_compute_start, .t_compute_end])[] | select(length == 2)] | length >= 1' "$IPC_DIR/gpu.jsonl" >/dev/null ||
  ipc_fail "no two partitions share a compute interval: $(cat "$IPC_DIR/gpu.jsonl")"
ipc_log "a batch of 2: one compute interval for both, every proof verifies"
echo "ipc stage_batch: OK"
