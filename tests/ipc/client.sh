#!/usr/bin/env bash
# client.sh ZKPIPE SOURCE_ROOT - client commands against a real broker: idempotent submit,
# await timeout, cancel (slots freed), malformed and oversized frames dropped and counted
# while the broker keeps serving.
. "$(dirname "$0")/lib.sh"
ipc_init client "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain

# idempotent submit: the same request id returns the same job id
J1=$(ipc_submit --zkey $F/circuit.zkey --priority normal --request-id idem-1 $F/witness-{0..3}.wtns)
J2=$(ipc_submit --zkey $F/circuit.zkey --priority high --request-id idem-1 $F/witness-{4..7}.wtns 2>/dev/null)
[ "$J1" = "$J2" ] || ipc_fail "idempotent submit: $J1 != $J2"
J3=$(ipc_submit --zkey $F/circuit.zkey --priority normal --request-id idem-2 $F/witness-0.wtns)
[ "$J3" != "$J1" ] || ipc_fail "a new request id got an old job id"
"$ZKPIPE" await "$J1" --timeout 300 --out "$IPC_DIR/out/j1" >/dev/null || ipc_fail "await J1"
ipc_verify_all "$IPC_DIR/out/j1" $F/verification_key.json 4
[ ! -f "$IPC_DIR/out/j1/proof-4.json" ] || ipc_fail "the second submit added partitions"
"$ZKPIPE" await "$J3" --timeout 300 >/dev/null || ipc_fail "await J3"
ipc_log "idempotent submit ok"

# await timeout: the GPU stage is held, so the job cannot finish
ipc_hold gpu
J4=$(ipc_submit --zkey $F/circuit.zkey --request-id to-1 $F/witness-{0..1}.wtns)
"$ZKPIPE" await "$J4" --timeout 0.5 >/dev/null 2>&1; rc=$?
[ $rc = 3 ] || ipc_fail "await --timeout 0.5 on a held job exited $rc, expected 3"
ipc_log "await timeout ok"

# cancel while partitions sit in slots (READY / PROVING): every slot comes back
ipc_wait_for '.slots.FREE < .slots.total'
"$ZKPIPE" cancel "$J4" >/dev/null || ipc_fail "cancel"
"$ZKPIPE" await "$J4" --timeout 60 >/dev/null 2>&1; rc=$?
[ $rc = 4 ] || ipc_fail "await on a canceled job exited $rc, expected 4"
ipc_all_free
ipc_release gpu
# the group still works after the cancel (the held GPU task reports stale and frees its credit)
J5=$(ipc_submit --zkey $F/circuit.zkey --request-id after-cancel $F/witness-{2..5}.wtns)
"$ZKPIPE" await "$J5" --timeout 300 --out "$IPC_DIR/out/j5" >/dev/null || ipc_fail "await after cancel"
ipc_verify_all "$IPC_DIR/out/j5" $F/verification_key.json 4
ipc_all_free
ipc_log "cancel ok"

# malformed / oversized frames
M0=$(ipc_jq .counters.malformed); O0=$(ipc_jq .counters.oversized)
out=$("$ZP_IPC_FRAMES") || ipc_fail "ipc_frames driver"
nm=$(echo "$out" | awk '{print $2}'); no=$(echo "$out" | awk '{print $4}')
M1=$(ipc_jq .counters.malformed); O1=$(ipc_jq .counters.oversized)
[ $((M1 - M0)) = "$nm" ] || ipc_fail "malformed counter moved by $((M1 - M0)), sent $nm"
[ $((O1 - O0)) = "$no" ] || ipc_fail "oversized counter moved by $((O1 - O0)), sent $no"
J6=$(ipc_submit --zkey $F/circuit.zkey --request-id after-junk $F/witness-6.wtns)
"$ZKPIPE" await "$J6" --timeout 300 --out "$IPC_DIR/out/j6" >/dev/null || ipc_fail "await after junk frames"
ipc_verify_all "$IPC_DIR/out/j6" $F/verification_key.json 1
ipc_log "bad frames: $nm malformed, $no oversized counted; broker still serving"

# unknown job
"$ZKPIPE" await 999 --timeout 1 >/dev/null 2>&1 && ipc_fail "await on an unknown job succeeded"
echo "ipc client: OK"
