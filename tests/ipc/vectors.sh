#!/usr/bin/env bash
# vectors.sh ZKPIPE SOURCE_ROOT MKVECS - issue 30: pre-synthesized partitions. A vectors file
# (lib/fmt/vecs.h: w, a, b, c computed by the client, made here by tests/mkvecs.c from a
# witness) is submitted where a .wtns goes; the synthesizer checks it against the key and copies
# it into the slot. 1. a job of 4 vectors partitions (bn128) and one of a bls12-381 circuit prove
# and verify; 2. kill -9 of the GPU worker while it holds a vectors partition; 3. kill -9 of the
# broker (restarted by `zkpipe up`) with vectors partitions PROVING and READY: both jobs still
# complete and verify; 4. bad vectors (a row with a * b != c, a w value >= r, one w value short,
# a truncated file, an r/s field torn after its checksum, an r that is not canonical) fail once
# as input, naming what is wrong, and the group keeps serving; 5. a vectors file carrying the
# caller's r, s (ZP_VECS_F_RS, what libzkpipe_c2 writes): the group's finalizer blinds with
# them (no test hook here), so the proof equals `zkpipe prove --r R --s S`'s byte for byte,
# while a file without them still gets fresh random r, s (two proofs of it differ).
. "$(dirname "$0")/durable_lib.sh"
MKVECS=$3
dur_init vectors "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
F=$FIX/bn128_chain
V=$IPC_DIR/vecs
mkdir -p "$V"
for i in 0 1 2 3; do "$MKVECS" $F/circuit.zkey $F/witness-$i.wtns "$V/bn$i.vecs" || ipc_fail "mkvecs $i"; done
G=$FIX/bls12381_chain
"$MKVECS" $G/circuit.zkey $G/witness-0.wtns "$V/bls0.vecs" || ipc_fail "mkvecs bls"

# 1. plain
J=$(ipc_submit --zkey $F/circuit.zkey --request-id vec-1 "$V"/bn{0..3}.vecs)
JB=$(ipc_submit --zkey $G/circuit.zkey --request-id vec-bls "$V/bls0.vecs")
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/j1" >/dev/null || ipc_fail "await vectors job"
ipc_verify_all "$IPC_DIR/out/j1" $F/verification_key.json 4
"$ZKPIPE" await "$JB" --timeout 300 --out "$IPC_DIR/out/jb" >/dev/null || ipc_fail "await bls12-381 vectors job"
ipc_verify_all "$IPC_DIR/out/jb" $G/verification_key.json 1
# the public signals come from the client's w: the same as the witness's
for i in 0 1 2 3; do
  jq -e --slurpfile a "$IPC_DIR/out/j1/public-$i.json" --slurpfile b $F/public_rs0-$i.json -n '$a == $b' >/dev/null ||
    ipc_fail "public-$i.json differs from the witness's public signals"
done
ipc_log "vectors jobs proved"

# 2. kill -9 of the GPU worker holding a vectors partition
ipc_hold gpu
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id vec-2 "$V"/bn{0..3}.vecs)
ipc_wait_for '.slots.PROVING >= 1 and ([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
GP=$(ipc_worker_pid gpu)
ipc_log "kill -9 gpu worker $GP"
kill -9 "$GP"
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $GP)] | length == 1"
ipc_release gpu
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out/j2" >/dev/null || ipc_fail "await after kill -9 of the GPU worker"
ipc_verify_all "$IPC_DIR/out/j2" $F/verification_key.json 4

# 3. broker restart with vectors partitions PROVING and READY
ipc_hold gpu
J3=$(ipc_submit --zkey $F/circuit.zkey --request-id vec-3 "$V"/bn{0..3}.vecs)
ipc_wait_for '.slots.PROVING >= 1 and .slots.READY >= 1'
dur_kill_broker
ipc_release gpu
"$ZKPIPE" await "$J3" --timeout 300 --out "$IPC_DIR/out/j3" >/dev/null || ipc_fail "await after a broker restart"
ipc_verify_all "$IPC_DIR/out/j3" $F/verification_key.json 4
ipc_all_free

# 4. bad vectors: input failures naming what is wrong, not retried
"$MKVECS" $F/circuit.zkey $F/witness-0.wtns "$V/row.vecs" row || ipc_fail "mkvecs row"
"$MKVECS" $F/circuit.zkey $F/witness-0.wtns "$V/wbig.vecs" wbig || ipc_fail "mkvecs wbig"
"$MKVECS" $F/circuit.zkey $F/witness-0.wtns "$V/nw.vecs" nw || ipc_fail "mkvecs nw"
head -c 3000 "$V/bn0.vecs" >"$V/cut.vecs"
"$MKVECS" $F/circuit.zkey $F/witness-0.wtns "$V/rssum.vecs" rssum 123456789 987654321 || ipc_fail "mkvecs rssum"
"$MKVECS" $F/circuit.zkey $F/witness-0.wtns "$V/rsbig.vecs" rsbig || ipc_fail "mkvecs rsbig"
FAILED0=$(ipc_jq '.counters.parts_failed')
for b in row:"a \\* b != c" wbig:"w\\[1\\] is not a canonical" nw:"n_w" cut:"bytes, the header says" \
         rssum:"r/s field at offset [0-9]*: checksum mismatch" rsbig:"r/s field: r is not a canonical"; do
  name=${b%%:*} want=${b#*:}
  JX=$(ipc_submit --zkey $F/circuit.zkey --request-id vec-bad-$name "$V/$name.vecs")
  "$ZKPIPE" await "$JX" --timeout 120 --out "$IPC_DIR/out/bad-$name" >/dev/null 2>"$IPC_DIR/bad.err"; rc=$?
  cat "$IPC_DIR/bad.err" >&2
  [ $rc = 1 ] || ipc_fail "bad vectors $name: await exited $rc, expected 1"
  grep -q "failed after 1 attempt" "$IPC_DIR/bad.err" || ipc_fail "bad vectors $name: retried or not reported"
  grep -q "$want" "$IPC_DIR/bad.err" || ipc_fail "bad vectors $name: message does not say '$want'"
done
[ "$(ipc_jq '.counters.parts_failed')" = $((FAILED0 + 6)) ] || ipc_fail "expected exactly 6 more failed partitions"
J5=$(ipc_submit --zkey $F/circuit.zkey --request-id vec-5 "$V/bn2.vecs" $F/witness-3.wtns)
"$ZKPIPE" await "$J5" --timeout 300 --out "$IPC_DIR/out/j5" >/dev/null || ipc_fail "the group stopped serving after bad vectors"
ipc_verify_all "$IPC_DIR/out/j5" $F/verification_key.json 2
ipc_all_free

# 5. the caller's r, s reach the finalizer: byte-identical to zkpipe prove at the same r, s
"$MKVECS" $F/circuit.zkey $F/witness-1.wtns "$V/rs1.vecs" rs 123456789 987654321 || ipc_fail "mkvecs rs"
"$MKVECS" $G/circuit.zkey $G/witness-0.wtns "$V/rsb.vecs" rs 0 0 || ipc_fail "mkvecs rs bls"
J6=$(ipc_submit --zkey $F/circuit.zkey --request-id vec-rs "$V/rs1.vecs" "$V/bn1.vecs" "$V/bn1.vecs")
J7=$(ipc_submit --zkey $G/circuit.zkey --request-id vec-rs-bls "$V/rsb.vecs")
"$ZKPIPE" await "$J6" --timeout 300 --out "$IPC_DIR/out/j6" >/dev/null || ipc_fail "await the job with the caller's r, s"
"$ZKPIPE" await "$J7" --timeout 300 --out "$IPC_DIR/out/j7" >/dev/null || ipc_fail "await the bls12-381 job with r = s = 0"
ipc_verify_all "$IPC_DIR/out/j6" $F/verification_key.json 3
ipc_verify_all "$IPC_DIR/out/j7" $G/verification_key.json 1
ZP_TEST_FIXED_RS=1 "$ZKPIPE" prove $F/circuit.zkey $F/witness-1.wtns "$IPC_DIR/ref-rs.json" "$IPC_DIR/ref-pub.json" \
  --r 123456789 --s 987654321 >/dev/null 2>&1 || ipc_fail "zkpipe prove --r --s"
jq -e --slurpfile a "$IPC_DIR/out/j6/proof-0.json" --slurpfile b "$IPC_DIR/ref-rs.json" -n \
  '$a[0].pi_a == $b[0].pi_a and $a[0].pi_b == $b[0].pi_b and $a[0].pi_c == $b[0].pi_c' >/dev/null ||
  ipc_fail "the group's proof with the caller's r, s differs from zkpipe prove's at the same r, s"
ZP_TEST_FIXED_RS=1 "$ZKPIPE" prove $G/circuit.zkey $G/witness-0.wtns "$IPC_DIR/ref-z.json" "$IPC_DIR/ref-zp.json" \
  --r 0 --s 0 >/dev/null 2>&1 || ipc_fail "zkpipe prove --r 0 --s 0"
jq -e --slurpfile a "$IPC_DIR/out/j7/proof-0.json" --slurpfile b "$IPC_DIR/ref-z.json" -n \
  '$a[0].pi_a == $b[0].pi_a and $a[0].pi_b == $b[0].pi_b and $a[0].pi_c == $b[0].pi_c' >/dev/null ||
  ipc_fail "the group's proof with the caller's r = s = 0 differs from zkpipe prove's"
jq -e --slurpfile a "$IPC_DIR/out/j6/proof-1.json" --slurpfile b "$IPC_DIR/out/j6/proof-2.json" -n \
  '$a[0].pi_a != $b[0].pi_a and $a[0].pi_c != $b[0].pi_c' >/dev/null ||
  ipc_fail "two proofs of a file without r, s are equal: the finalizer did not draw fresh r, s"
ipc_log "the caller's r, s reached the finalizer"
ipc_all_free
echo "ipc vectors: OK"
