#!/usr/bin/env bash
# priority.sh ZKPIPE SOURCE_ROOT - a CRITICAL job submitted behind 20 queued NORMAL partitions
# finishes first (compared on the broker's own completion timestamps from the trace).
. "$(dirname "$0")/lib.sh"
ipc_init priority "$1" "$2" --slots 2 --max-domain 1024
F=$FIX/bn128_chain
W=()
for i in $(seq 0 19); do W+=("$F/witness-$((i % 8)).wtns"); done
ipc_hold synth
JN=$(ipc_submit --zkey $F/circuit.zkey --priority normal --request-id normal-20 "${W[@]}")
ipc_wait_for '.queues.synth.normal >= 18'
JC=$(ipc_submit --zkey $F/circuit.zkey --priority critical --request-id critical-2 $F/witness-{6..7}.wtns)
# queued, or already in slots taken back from NORMAL work at the (held) synthesizer
ipc_wait_for '(.queues.synth.critical + ([.slot_table[] | select(.priority == "critical")] | length)) == 2'
ipc_release synth
"$ZKPIPE" await "$JC" --timeout 300 --out "$IPC_DIR/out/c" >/dev/null || ipc_fail "await critical"
"$ZKPIPE" await "$JN" --timeout 300 >/dev/null || ipc_fail "await normal"
ipc_verify_all "$IPC_DIR/out/c" $F/verification_key.json 2
"$ZKPIPE" trace --out "$IPC_DIR/trace.json" 2>/dev/null || ipc_fail trace
tc=$(jq "[.traceEvents[] | select(.ph == \"X\" and .cat == \"final\" and .args.job == $JC) | .args.t_done] | max" "$IPC_DIR/trace.json")
tn=$(jq "[.traceEvents[] | select(.ph == \"X\" and .cat == \"final\" and .args.job == $JN) | .args.t_done] | max" "$IPC_DIR/trace.json")
nb=$(jq "[.traceEvents[] | select(.ph == \"X\" and .cat == \"final\" and .args.job == $JN and .args.t_done < $tc)] | length" "$IPC_DIR/trace.json")
ipc_log "critical done at $tc, normal at $tn; $nb normal partitions finished before the critical job"
[ "$tc" -lt "$tn" ] || ipc_fail "the critical job did not finish first"
[ "$nb" -le 4 ] || ipc_fail "$nb normal partitions overtook the critical job (at most the 2 slots x 2 in flight may)"
echo "ipc priority: OK"
