#!/usr/bin/env bash
# stage_cuda_emu.sh ZKPIPE SOURCE_ROOT - issue 10 item 2, the CUDA half, through the real worker
# without a GPU: the GPU worker's CUDA backend on the host-emulated device (ZP_TEST_CUDA_EMULATE=1,
# a test hook; one fake device). The work thread is held inside partition k's compute; partition
# k+1 must get staged meanwhile, and on this backend staging includes its stage_in (the H2D
# queued into its own device buffer set). Then: each partition went through stage_in,
# prove_staged and release_set (the backend's debug spans), the emulation's stream-order checker
# saw no violation, both proofs verify (snarkjs for one), and status lists the key on the
# device. Then the deferred payload verify (issue 10 item 1) on this backend: with ZP_TEST_HOLD_DIR/hold-gpu-verify, a third partition's
# prove_staged runs and ends while its verify is held, nothing is committed (no PROVED slot, no
# DONE) until the verdict; released, its proof verifies (a commit before the verdict fails it).
. "$(dirname "$0")/stage_pipe_lib.sh"
export ZP_TEST_CUDA_EMULATE=1 ZP_TEST_FAKE_GPUS=1
ipc_init cudaemu "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu-compute
J=$(ipc_submit --zkey $F/circuit.zkey --request-id cudaemu-$$ $F/witness-0.wtns $F/witness-1.wtns)
pipe_wait_staged 2
g=$(ipc_worker_pid gpu)
n_in=$(grep -c "gpu-worker\[$g\].*cuda backend: stage_in [0-9.]* ms\( \[\|$\)" "$IPC_DIR/up.log")
[ "$n_in" -ge 2 ] || ipc_fail "expected 2 stage_in calls while partition k is held (have $n_in)"
ipc_log "both partitions staged onto the emulated device while the first one is held in its compute"
ipc_release gpu-compute
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 2
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-1.json" "$IPC_DIR/out/proof-1.json"
grep -q "gpu-worker\[$g\].*backend cuda" "$IPC_DIR/up.log" || ipc_fail "the gpu worker did not use the cuda backend"
for op in prove_staged release_set; do
  c=$(grep -c "gpu-worker\[$g\].*cuda backend: $op [0-9.]* ms\( \[\|$\)" "$IPC_DIR/up.log")
  [ "$c" -ge 2 ] || ipc_fail "expected 2 $op calls (have $c)"
done
! grep -q "stream-order violation" "$IPC_DIR/up.log" || ipc_fail "emulated device: $(grep -m1 "stream-order violation" "$IPC_DIR/up.log")"
! grep -q "cuda backend: prove_g1 " "$IPC_DIR/up.log" || ipc_fail "a partition took the unstaged prove_g1"
ipc_log "stage_in, prove_staged, release_set per partition; no stream-order violation; proofs verify"
# the worker's key listing (heartbeat -> status) says the key is on the (emulated) device
ipc_wait_for '[.workers[] | select(.role == "gpu") | .keys.held[] | .tier] | any(test("device"))' 30 ||
  ipc_fail "status does not list the GPU worker's key on the device: $(ipc_jq '[.workers[] | select(.role == "gpu") | .keys]')"
# the deferred payload verify holds on this backend too (issue 10 item 1): with the verify held,
# the next partition's prove_staged runs and ends, nothing is committed until the verdict
d0=$(ipc_jq '[.workers[] | select(.role == "gpu")][0].done')
ipc_hold gpu-verify
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id cudaemu2-$$ $F/witness-0.wtns)
for i in $(seq 1 1200); do
  [ "$(grep -c "gpu-worker\[$g\].*cuda backend: prove_staged [0-9.]* ms\( \[\|$\)" "$IPC_DIR/up.log")" -ge 3 ] && break
  sleep 0.05
done
[ "$(grep -c "gpu-worker\[$g\].*cuda backend: prove_staged [0-9.]* ms\( \[\|$\)" "$IPC_DIR/up.log")" -ge 3 ] ||
  ipc_fail "the compute did not run while the payload verify was held"
[ "$(ipc_jq '.slots.PROVED')" = 0 ] && [ "$(ipc_jq '[.workers[] | select(.role == "gpu")][0].done')" = "$d0" ] ||
  ipc_fail "committed before the payload verify's verdict: $(ipc_status | jq -c .slots)"
ipc_release gpu-verify
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out2" >/dev/null || ipc_fail "await (deferred verify)"
ipc_verify_all "$IPC_DIR/out2" $F/verification_key.json 1
ipc_log "deferred verify on the CUDA backend: prove_staged before the verdict, the commit after it"
echo "ipc stage_cuda_emu: OK"
