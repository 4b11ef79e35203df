#!/usr/bin/env bash
# durable_await.sh ZKPIPE SOURCE_ROOT - what a client was told survives the broker:
#  - a finished job's proofs can be awaited after a kill -9 of the broker (journaled proofs);
#  - a SUBMIT repeated with the same request id after the restart gets the same job id (and
#    adds nothing); a new request id gets the next id (the counter continues past the journal);
#  - a job accepted while every GPU worker was held completes after the whole group is
#    stopped and started again (the arena is gone then: its partitions are synthesized again).
. "$(dirname "$0")/durable_lib.sh"
dur_init dawait "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
F=$FIX/bn128_chain
G=$FIX/bls12381_chain

J1=$(ipc_submit --zkey $F/circuit.zkey --request-id da-1 $F/witness-{0..3}.wtns)
J2=$(ipc_submit --zkey $G/circuit.zkey --request-id da-2 $G/witness-{0..2}.wtns)
"$ZKPIPE" await "$J1" --timeout 300 --out "$IPC_DIR/out/before" >/dev/null || ipc_fail "await J1"
"$ZKPIPE" await "$J2" --timeout 300 >/dev/null || ipc_fail "await J2"

dur_kill_broker
# finished jobs: the proofs come from the journal, byte for byte what was returned before
"$ZKPIPE" await "$J1" --timeout 5 --out "$IPC_DIR/out/after" >/dev/null || ipc_fail "await a finished job after a broker restart"
ipc_verify_all "$IPC_DIR/out/after" $F/verification_key.json 4
for i in 0 1 2 3; do
  cmp -s "$IPC_DIR/out/before/proof-$i.json" "$IPC_DIR/out/after/proof-$i.json" || ipc_fail "proof-$i.json changed across the restart"
  cmp -s "$IPC_DIR/out/before/public-$i.json" "$IPC_DIR/out/after/public-$i.json" || ipc_fail "public-$i.json changed"
done
"$ZKPIPE" await "$J2" --timeout 5 --out "$IPC_DIR/out/j2" >/dev/null || ipc_fail "await J2 after a broker restart"
ipc_verify_all "$IPC_DIR/out/j2" $G/verification_key.json 3
[ "$(ipc_jq '.counters.assigns')" = 0 ] || ipc_fail "the restarted broker re-ran finished work"
ipc_log "finished jobs awaited after a broker restart: proofs identical"

# idempotent submit across the restart
J1b=$(ipc_submit --zkey $F/circuit.zkey --request-id da-1 $F/witness-{4..7}.wtns 2>/dev/null)
[ "$J1b" = "$J1" ] || ipc_fail "idempotent submit after a restart: $J1b != $J1"
J3=$(ipc_submit --zkey $F/circuit.zkey --request-id da-3 $F/witness-5.wtns)
[ "$J3" = $((J2 + 1)) ] || ipc_fail "job id after the restart is $J3, expected $((J2 + 1))"
"$ZKPIPE" await "$J3" --timeout 300 --out "$IPC_DIR/out/j3" >/dev/null || ipc_fail "await J3"
ipc_verify_all "$IPC_DIR/out/j3" $F/verification_key.json 1
ipc_log "idempotent submit across a restart: job $J1; next id $J3"

# a job in flight across a full stop/start of the group (clean stop: the arena is removed)
ipc_hold gpu
J4=$(ipc_submit --zkey $F/circuit.zkey --request-id da-4 $F/witness-{0..5}.wtns)
ipc_wait_for '.slots.PROVING >= 1'
dur_stop_group
ipc_release gpu
dur_start_group --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
J4b=$(ipc_submit --zkey $F/circuit.zkey --request-id da-4 $F/witness-{0..5}.wtns)
[ "$J4b" = "$J4" ] || ipc_fail "idempotent submit after a group restart: $J4b != $J4"
"$ZKPIPE" await "$J4" --timeout 300 --out "$IPC_DIR/out/j4" >/dev/null || ipc_fail "await J4 after a group restart"
ipc_verify_all "$IPC_DIR/out/j4" $F/verification_key.json 6
"$ZKPIPE" await "$J1" --timeout 5 >/dev/null || ipc_fail "await J1 after a group restart"
[ "$(ipc_jq '.jobs.total')" = 4 ] || ipc_fail "expected 4 journaled jobs"
ipc_all_free
echo "ipc durable_await: OK"
