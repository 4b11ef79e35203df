#!/usr/bin/env bash
# c2_group.sh ZKPIPE SOURCE_ROOT C2_CIRCOM - libzkpipe_c2 with ZKPIPE_C2_MODE=group against a
# running group (found through ZP_RUNTIME_DIR, as libzkpipe-client finds it): the harness
# tests/test_c2_circom.c at 2^10 submits its circuits as pre-synthesized partitions. Until the
# group proves bellman keys (issue 29) the broker refuses the .params: the harness checks that
# the RustError names the key and the reason (ZP_C2_GROUP_REFUSED_OK=1); once it proves them the
# same run pairing-checks every proof. Either way: no vectors file is left in /dev/shm, and the
# group keeps serving (a zkey job right after proves and verifies).
. "$(dirname "$0")/lib.sh"
C2=$3
ipc_init c2_group "$1" "$2" --slots 2 --max-domain 2048
before=$(ls /dev/shm | grep -c "^zkpipe-c2-$(id -u)-.*\.vecs$" || true)
ZKPIPE_C2_MODE=group ZP_C2_GROUP_REFUSED_OK=1 ZKPIPE_C2_THREADS=2 "$C2" "$ZKPIPE" 10 >"$IPC_DIR/c2.out" 2>&1 ||
  { cat "$IPC_DIR/c2.out" >&2; ipc_fail "the c2 harness in group mode"; }
cat "$IPC_DIR/c2.out" >&2
after=$(ls /dev/shm | grep -c "^zkpipe-c2-$(id -u)-.*\.vecs$" || true)
[ "$after" -le "$before" ] || ipc_fail "vectors files left in /dev/shm ($before before, $after after)"
# the circuit's densities went to the group as a ZPBDENS1 file named in the job (r1cs field)
D=$(ls -t /dev/shm/zkpipe-c2-"$(id -u)"-*.dens 2>/dev/null | head -1)
[ -n "$D" ] && [ "$(head -c 8 "$D")" = ZPBDENS1 ] || ipc_fail "no ZPBDENS1 density file in /dev/shm"
F=$FIX/bls12381_chain
JG=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs $F/witness-0.wtns)
"$ZKPIPE" await "$JG" --timeout 300 --out "$IPC_DIR/out/good" >/dev/null || ipc_fail "the zkey job after the c2 jobs"
ipc_verify_all "$IPC_DIR/out/good" $F/verification_key.json 1
echo "ipc c2_group: OK"
