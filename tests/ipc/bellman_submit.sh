#!/usr/bin/env bash
# bellman_submit.sh ZKPIPE SOURCE_ROOT - issue 29: the process group does not prove with bellman
# keys yet (doc/filecoin.md): a bellman .params submitted to it fails cleanly, once (input class,
# not retried), with a message naming the file, the broker's log says it is a bellman key, and
# the group keeps serving: a zkey job right after proves and verifies.
. "$(dirname "$0")/lib.sh"
ipc_init bellman_submit "$1" "$2" --slots 2 --max-domain 1024
B=$FIX/bellman/chain300
"$ZKPIPE" submit --zkey "$B/circuit.params" --r1cs "$B/circuit.r1cs" "$B/witness.wtns" >"$IPC_DIR/sub.out" 2>"$IPC_DIR/sub.err"; rc=$?
cat "$IPC_DIR/sub.err" >&2
if [ $rc = 0 ]; then
  J=$(cat "$IPC_DIR/sub.out")
  "$ZKPIPE" await "$J" --timeout 120 --out "$IPC_DIR/out/b" >/dev/null 2>"$IPC_DIR/sub.err"; rc=$?
  cat "$IPC_DIR/sub.err" >&2
  [ $rc != 0 ] || ipc_fail "a bellman key job succeeded through the group (update this test and doc/filecoin.md)"
fi
grep -q "chain300/circuit.params" "$IPC_DIR/sub.err" || ipc_fail "the failure does not name the key file"
grep -q "a bellman .params/.vk: the process group does not prove with bellman keys yet" "$IPC_DIR/up.log" ||
  ipc_fail "the broker's log does not say it is a bellman key"
F=$FIX/bls12381_chain
JG=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs $F/witness-0.wtns)
"$ZKPIPE" await "$JG" --timeout 300 --out "$IPC_DIR/out/good" >/dev/null || ipc_fail "the zkey job after it failed"
ipc_verify_all "$IPC_DIR/out/good" $F/verification_key.json 1
echo "ipc bellman_submit: OK"
