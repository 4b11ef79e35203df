#!/usr/bin/env bash
# badwitness.sh ZKPIPE SOURCE_ROOT - a partition whose witness does not satisfy the circuit
# (witness-bad.wtns + r1cs) fails with a clear message naming the constraint, without retries;
# the other partitions of the job and another job are unaffected.
. "$(dirname "$0")/lib.sh"
ipc_init badwitness "$1" "$2" --slots 4 --max-domain 1024
for c in bn128_chain bls12381_chain; do
  F=$FIX/$c
  JB=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id bad-$c $F/witness-0.wtns $F/witness-bad.wtns $F/witness-2.wtns)
  JG=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id good-$c $F/witness-{3..5}.wtns)
  "$ZKPIPE" await "$JB" --timeout 300 --out "$IPC_DIR/out/$c-bad" >"$IPC_DIR/await.out" 2>"$IPC_DIR/await.err"; rc=$?
  cat "$IPC_DIR/await.err" >&2
  [ $rc = 1 ] || ipc_fail "await on the job with a bad witness exited $rc, expected 1"
  grep -q "partition 1 failed after 1 attempt" "$IPC_DIR/await.err" || ipc_fail "no failure reported for partition 1 (or it was retried)"
  grep -qi "does not satisfy" "$IPC_DIR/await.err" || ipc_fail "message does not say the witness does not satisfy the circuit"
  grep -qi "constraint" "$IPC_DIR/await.err" || ipc_fail "message does not name the constraint"
  for i in 0 2; do
    "$ZKPIPE" verify $F/verification_key.json "$IPC_DIR/out/$c-bad/public-$i.json" "$IPC_DIR/out/$c-bad/proof-$i.json" >/dev/null ||
      ipc_fail "$c: good partition $i of the failed job does not verify"
  done
  [ ! -f "$IPC_DIR/out/$c-bad/proof-1.json" ] || ipc_fail "a proof was written for the bad witness"
  "$ZKPIPE" await "$JG" --timeout 300 --out "$IPC_DIR/out/$c-good" >/dev/null || ipc_fail "the other job failed"
  ipc_verify_all "$IPC_DIR/out/$c-good" $F/verification_key.json 3
done
ipc_all_free
[ "$(ipc_jq '.counters.parts_failed')" = 2 ] || ipc_fail "expected exactly 2 failed partitions"
[ "$(ipc_jq '.counters.requeued.synth')" = 0 ] || ipc_fail "the bad witness was retried"
echo "ipc badwitness: OK"
