#!/usr/bin/env bash
# input_kill.sh ZKPIPE SOURCE_ROOT - kill -9 the synthesizer while it computes a witness from an
# input (issue 28): `zkpipe up` restarts it, the partition is requeued (not charged), the
# generator's child dies with it (no orphan left spinning), and every accepted partition ends:
# the good ones with verifying proofs, the endless one with a timeout input error.
. "$(dirname "$0")/lib.sh"
ipc_init input_kill "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10 --witness-timeout-ms 4000
ipc_wait_workers 1 1 1
F=$FIX/bn128_chain
echo '{"x":"4","k":["5","7","11"]}' > "$IPC_DIR/loop.json"
# register the generator first (wasm2c + cc), so the kill lands in the calculation
J0=$(ipc_submit --zkey $F/circuit.zkey --wasm $F/guard.wasm --input --request-id warm $F/input-0.json)
"$ZKPIPE" await "$J0" --timeout 300 >/dev/null || ipc_fail "warm-up job"
J=$(ipc_submit --zkey $F/circuit.zkey --wasm $F/guard.wasm --input --request-id kill-in "$IPC_DIR/loop.json" $F/input-{1..4}.json)
ipc_wait_for '.slots.SYNTH >= 1 and ([.workers[] | select(.role == "synth" and .held >= 1)] | length) == 1'
S=$(ipc_worker_pid synth)
# the generator's child: a process whose parent is the synth
for _ in $(seq 1 100); do KID=$(pgrep -P "$S" | head -1); [ -n "$KID" ] && break; sleep 0.05; done
[ -n "$KID" ] || ipc_fail "the synth $S runs no witness child"
ipc_log "kill -9 synth $S (witness child $KID running)"
kill -9 "$S"
ipc_wait_for "[.workers[] | select(.role == \"synth\" and .pid != $S)] | length == 1"
for _ in $(seq 1 100); do kill -0 "$KID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$KID" 2>/dev/null && ipc_fail "the witness child $KID outlived its synth"
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >"$IPC_DIR/await.out" 2>"$IPC_DIR/await.err"; rc=$?
cat "$IPC_DIR/await.err" >&2
[ $rc = 1 ] || ipc_fail "await exited $rc, expected 1 (the endless input fails)"
grep "partition 0 failed" "$IPC_DIR/await.err" | grep -qi 'ms\|time' || ipc_fail "the endless input did not fail with a timeout"
for i in 1 2 3 4; do
  "$ZKPIPE" verify $F/verification_key.json "$IPC_DIR/out/public-$i.json" "$IPC_DIR/out/proof-$i.json" >/dev/null ||
    ipc_fail "partition $i does not verify after the synth was killed"
done
[ "$(ipc_jq '.counters.deaths.synth')" -ge 1 ] || ipc_fail "no synth death counted"
ipc_all_free
echo "ipc input_kill: OK"
