#!/usr/bin/env bash
# lib.sh ZKPIPE SOURCE_ROOT - libzkpipe-client's test program (test_client.c, $ZP_TEST_CLIENT)
# against a real group: paths and an inline witness in one job, progress callback, error
# paths; its proofs are checked by `zkpipe verify` and snarkjs (tests/oracle/verify.sh).
. "$(dirname "$0")/../ipc/lib.sh"
ipc_init clib "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
[ -x "${ZP_TEST_CLIENT:-}" ] || ipc_fail "ZP_TEST_CLIENT not set"
"$ZP_TEST_CLIENT" "$IPC_DIR/out" $F/circuit.zkey $F/witness-0.wtns $F/witness-1.wtns || ipc_fail "test_client failed"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 3
for i in 0 1 2; do ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-$i.json" "$IPC_DIR/out/proof-$i.json"; done
# the inline witness went through the broker's state directory and was cleaned up after the job
# by the broker's sweep (broker/inline.c: every 2 s), so within two sweeps of the job's end
for _ in $(seq 1 50); do ls "$ZP_STATE_DIR"/inline/ 2>/dev/null | grep -q . || break; sleep 0.1; done
ls "$ZP_STATE_DIR"/inline/ 2>/dev/null | grep -q . && ipc_fail "inline witness files left behind 5 s after the job: $(ls "$ZP_STATE_DIR/inline")"
ipc_log "library test ok"
