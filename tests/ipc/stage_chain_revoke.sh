#!/usr/bin/env bash
# stage_chain_revoke.sh ZKPIPE SOURCE_ROOT - issue 10 items 2 and 6 with chained computes: a LOW
# partition whose compute the GPU worker has already posted behind the running one (chained, not
# begun) is still handed back unstarted when a CRITICAL partition needs the worker: the broker
# REVOKEs it, the worker takes the posted compute back (it never runs) and FAILs it unstarted at
# once, not after the running compute; the CRITICAL partition is then staged and posted behind the
# running one and finishes before the LOW one that was taken back. Shown by ordering, not timing:
# the hook hold-gpu-compute holds LOW partition k inside its compute (on the compute thread) the
# whole time; everything above happens while it is held; after the release every partition is
# proved once.
. "$(dirname "$0")/stage_pipe_lib.sh"
ipc_init chainrev "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu-compute
JL=$(ipc_submit --zkey $F/circuit.zkey --priority low --request-id chainrev-low-$$ $F/witness-0.wtns $F/witness-1.wtns)
pipe_wait_staged 2
pipe_wait_log "gpu-worker.*compute posted behind the running one .*chained"
ipc_log "LOW k held in its compute, LOW k+1 posted behind it"
JC=$(ipc_submit --zkey $F/circuit.zkey --priority critical --request-id chainrev-crit-$$ $F/witness-2.wtns)
pipe_wait_log "broker.*asking its GPU worker to hand slot [0-9]* back unstarted for job $JC"
pipe_wait_log "backend: prove_g1 taken back before it began"
pipe_wait_staged 3
# the critical one's compute is posted behind the held one while it is still held
for i in $(seq 1 1200); do
  [ "$(grep -c "gpu-worker.*compute posted behind the running one .*chained" "$IPC_DIR/up.log")" -ge 2 ] && break
  sleep 0.05
done
[ "$(grep -c "gpu-worker.*compute posted behind the running one .*chained" "$IPC_DIR/up.log")" -ge 2 ] ||
  ipc_fail "the critical partition's compute was not posted behind the held one"
[ "$(ipc_jq '.counters.parts_done')" = 0 ] || ipc_fail "a partition finished while the GPU was held"
ipc_log "LOW k+1 taken back unstarted, CRITICAL posted behind LOW k, all while k is held"
ipc_release gpu-compute
"$ZKPIPE" await "$JC" --timeout 300 --out "$IPC_DIR/out/c" >/dev/null || ipc_fail "await critical"
"$ZKPIPE" await "$JL" --timeout 300 --out "$IPC_DIR/out/l" >/dev/null || ipc_fail "await low"
ipc_verify_all "$IPC_DIR/out/c" $F/verification_key.json 1
ipc_verify_all "$IPC_DIR/out/l" $F/verification_key.json 2
ipc_oracle $F/verification_key.json "$IPC_DIR/out/c/public-0.json" "$IPC_DIR/out/c/proof-0.json"
[ "$(ipc_jq '.counters.parts_done')" = 3 ] || ipc_fail "parts_done is not 3 (a partition lost or proved twice)"
# the gpu slices: the critical compute ran right after LOW k's, before the LOW one taken back
"$ZKPIPE" trace --out "$IPC_DIR/trace.json" >/dev/null 2>&1 || ipc_fail "zkpipe trace"
jq -e --argjson l "$JL" --argjson c "$JC" '[.traceEvents[] | select(.ph == "X" and .cat == "gpu") | .args] as $g |
  ($g | map(select(.job == $c)) | .[0]) as $cr | ($g | map(select(.job == $l)) | sort_by(.t_run_start)) as $lo |
  ($lo | length) == 2 and $cr.t_run_start > 0 and
  $lo[0].t_run_end <= $cr.t_run_start and $cr.t_run_end <= $lo[1].t_run_start and
  $cr.t_compute_start < $lo[0].t_run_end' "$IPC_DIR/trace.json" >/dev/null ||
  ipc_fail "the gpu slices are not LOW k, CRITICAL (posted during k), LOW k+1: $(jq -c '[.traceEvents[] | select(.ph == "X" and .cat == "gpu") | .args]' "$IPC_DIR/trace.json")"
grep -q "gpu-worker.*handed back unstarted: revoked\|unstarted.*revoked" "$IPC_DIR/up.log" ||
  ipc_fail "no revoked hand-back in the log"
ipc_all_free
echo "ipc stage_chain_revoke: OK"
