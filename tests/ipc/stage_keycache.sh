#!/usr/bin/env bash
# stage_keycache.sh ZKPIPE SOURCE_ROOT - issue 9 item 1 end to end: a matching job, then a
# witness of the other curve against the same (now cached) zkey. The second job fails at once
# (an input error, not retried) with a message that names the zkey file; before the fix the
# cached key kept the first task's freed path and the message printed freed memory (under ASan
# the synthesizer aborted). The group stays healthy: a third, good job proves.
. "$(dirname "$0")/lib.sh"
ipc_init keycache "$1" "$2" --slots 2 --max-domain 1024
BN=$FIX/bn128_chain; BLS=$FIX/bls12381_chain
cp "$BN/circuit.zkey" "$IPC_DIR/key.zkey"          # a path of our own: freed strings must not match it by luck
J1=$(ipc_submit --zkey "$IPC_DIR/key.zkey" --request-id kc-1 $BN/witness-0.wtns)
"$ZKPIPE" await "$J1" --timeout 300 --out "$IPC_DIR/out/j1" >/dev/null || ipc_fail "the matching job failed"
J2=$(ipc_submit --zkey "$IPC_DIR/key.zkey" --request-id kc-2 $BLS/witness-0.wtns)
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out/j2" >"$IPC_DIR/await.out" 2>"$IPC_DIR/await.err"; rc=$?
cat "$IPC_DIR/await.err" >&2
[ $rc = 1 ] || ipc_fail "the mismatched job: await exited $rc, expected 1"
grep -q "$IPC_DIR/key.zkey is a bn128 key" "$IPC_DIR/await.err" || ipc_fail "the failure does not name the zkey"
grep -q "failed after 1 attempt" "$IPC_DIR/await.err" || ipc_fail "the input error was retried"
J3=$(ipc_submit --zkey "$IPC_DIR/key.zkey" --request-id kc-3 $BN/witness-1.wtns)
"$ZKPIPE" await "$J3" --timeout 300 --out "$IPC_DIR/out/j3" >/dev/null || ipc_fail "a good job after the mismatch failed"
ipc_verify_all "$IPC_DIR/out/j3" $BN/verification_key.json 1
ipc_all_free
echo "ipc stage_keycache: OK"
