#!/usr/bin/env bash
# prove.sh ZKPIPE SOURCE_ROOT - a job of 8 partitions on each curve through a real process
# group: every proof verifies (zkpipe verify; snarkjs too when available), public.json matches
# snarkjs's, every slot is FREE at the end and nothing was requeued.
. "$(dirname "$0")/lib.sh"
ipc_init prove "$1" "$2" --slots 4 --max-domain 1024
for c in bn128_chain bls12381_chain; do
  F=$FIX/$c
  J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --priority normal --request-id job-$c $F/witness-{0..7}.wtns)
  "$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/$c" || ipc_fail "await $c"
  ipc_verify_all "$IPC_DIR/out/$c" $F/verification_key.json 8
  for i in 0 1 2 3 4 5 6 7; do
    cmp -s "$IPC_DIR/out/$c/public-$i.json" "$F/public_rs0-$i.json" || ipc_fail "$c public-$i.json differs from snarkjs"
  done
  ipc_oracle $F/verification_key.json "$IPC_DIR/out/$c/public-5.json" "$IPC_DIR/out/$c/proof-5.json"
  ipc_log "$c: 8/8 proofs verify"
done
ipc_all_free
[ "$(ipc_jq '.counters.requeued.synth + .counters.requeued.gpu + .counters.requeued.final')" = 0 ] || ipc_fail "unexpected requeues"
[ "$(ipc_jq '.counters.parts_done')" = 16 ] || ipc_fail "parts_done != 16"
"$ZKPIPE" trace --out "$IPC_DIR/trace.json" 2>/dev/null || ipc_fail "trace"
[ "$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$IPC_DIR/trace.json")" = 48 ] || ipc_fail "trace: expected 48 slices"
echo "ipc prove: OK"
