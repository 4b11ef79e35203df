#!/usr/bin/env bash
# bellman_submit.sh ZKPIPE SOURCE_ROOT - issue 29 item 4: the process group proves with bellman
# (.params) keys. `zkpipe keys import KEY.params --r1cs C.r1cs` checks and expands the key into the
# store; jobs naming the same two files go through synth, GPU worker (CPU backend) and finalizer,
# and with the blinding fixed in the finalizer (test hook ZP_TEST_FIXED_RS=1 ZP_TEST_R ZP_TEST_S)
# each 192-byte proof equals `zkpipe prove`'s at the same r, s byte for byte - and, for the
# upstream fixture, upstream bellman's own proof_r5_s9.bin - and `zkpipe verify circuit.vk`
# accepts it. kill -9 of the GPU worker mid-job still yields valid proofs. Bad input (a corrupt
# .params, an r1cs that does not fit the key, a .params without --r1cs) fails the job once, with
# a message naming the file and the field, and the group keeps serving.
# ipc_bellman_submit_cuda_emu runs the same with ZP_TEST_CUDA_EMULATE=1: the GPU worker's CUDA
# backend on the host-emulated device computes bellman's H (the same bytes are required).
. "$(dirname "$0")/lib.sh"
Z0=$1
KT=$(mktemp -d /tmp/zkpipe-bellman-key.XXXXXX)
"$Z0" testkey --curve bls12381 --power 10 --publics 2 --witnesses 3 --seed 29 --out "$KT" --insecure-known-tau \
  >/dev/null 2>&1 || { rm -rf "$KT"; echo "FAIL: testkey" >&2; exit 1; }
export ZP_TEST_FIXED_RS=1 ZP_TEST_R=5 ZP_TEST_S=9
ipc_init bellman_submit "$1" "$2" --slots 3 --max-domain 1024 --heartbeat-ms 200 --liveness 10 \
  --http-listen 127.0.0.1:0 --preload "$2/tests/fixtures/bellman/chain300/circuit.params:$2/tests/fixtures/bellman/chain300/circuit.r1cs"
mv "$KT" "$IPC_DIR/k" && K=$IPC_DIR/k
B=$FIX/bellman/chain300

# 1. import: checked and read into the store, compacted (named after both files)
"$ZKPIPE" keys import "$K/circuit.params" --r1cs "$K/circuit.r1cs" --arena "$IPC_ARENA" >"$IPC_DIR/imp.out" 2>&1 ||
  ipc_fail "keys import: $(cat "$IPC_DIR/imp.out")"
grep -q "checked and read into" "$IPC_DIR/imp.out" || ipc_fail "keys import did not fill the store: $(cat "$IPC_DIR/imp.out")"
"$ZKPIPE" keys import "$K/circuit.params" --arena "$IPC_ARENA" >"$IPC_DIR/imp2.out" 2>&1 &&
  ipc_fail "keys import of a .params without --r1cs succeeded"
grep -q "give its circuit with --r1cs" "$IPC_DIR/imp2.out" || ipc_fail "no --r1cs: unclear message: $(cat "$IPC_DIR/imp2.out")"

# 2. several jobs: the testkey's witnesses and upstream bellman's fixture
J1=$(ipc_submit --zkey "$K/circuit.params" --r1cs "$K/circuit.r1cs" "$K"/witness-{0..2}.wtns)
J2=$(ipc_submit --zkey "$B/circuit.params" --r1cs "$B/circuit.r1cs" "$B/witness.wtns")
"$ZKPIPE" await "$J1" --timeout 300 --out "$IPC_DIR/out/k" >/dev/null || ipc_fail "testkey job"
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out/b" >/dev/null || ipc_fail "chain300 job"
grep -q "bellman, circuit" "$IPC_DIR/up.log" || ipc_fail "no stage logged a bellman key load"
check_same() {   # DIR I KEYDIR WTNS: the group's proof-I.bin / public-I.json == zkpipe prove's at r=5 s=9
  local d=$1 i=$2 kd=$3 w=$4
  [ "$(stat -c %s "$d/proof-$i.bin")" = 192 ] || ipc_fail "$d/proof-$i.bin is not 192 bytes"
  ZP_TEST_FIXED_RS=1 "$ZKPIPE" prove "$kd/circuit.params" "$w" "$d/ref-$i.bin" "$d/ref-$i.json" --r1cs "$kd/circuit.r1cs" \
    --r 5 --s 9 >/dev/null 2>&1 || ipc_fail "zkpipe prove $w"
  cmp -s "$d/proof-$i.bin" "$d/ref-$i.bin" || ipc_fail "proof $i of $d differs from zkpipe prove's at the same r, s"
  cmp -s "$d/public-$i.json" "$d/ref-$i.json" || ipc_fail "public-$i.json of $d differs from zkpipe prove's"
  "$ZKPIPE" verify "$kd/circuit.vk" "$d/public-$i.json" "$d/proof-$i.bin" >/dev/null ||
    ipc_fail "zkpipe verify rejects proof $i of $d"
}
for i in 0 1 2; do check_same "$IPC_DIR/out/k" $i "$K" "$K/witness-$i.wtns"; done
check_same "$IPC_DIR/out/b" 0 "$B" "$B/witness.wtns"
cmp -s "$IPC_DIR/out/b/proof-0.bin" "$B/proof_r5_s9.bin" || ipc_fail "chain300: the group's proof differs from upstream bellman's"
ipc_log "4 bellman proofs from the group == zkpipe prove's (and bellman's) at r=5 s=9, verified"
# --preload PARAMS:R1CS: every stage loaded chain300 with its circuit before HELLO
grep -q "preloading proving key $B/circuit.params:$B/circuit.r1cs" "$IPC_DIR/up.log" || ipc_fail "no stage preloaded PARAMS:R1CS"
grep -q "proving key $B/circuit.params:$B/circuit.r1cs loaded into the" "$IPC_DIR/up.log" ||
  ipc_fail "the GPU worker did not load the preloaded bellman key before HELLO: $(grep -i preload "$IPC_DIR/up.log" | head -5)"

# 2b. the HTTP API: the same job by POST /v1/jobs; GET returns the 192 bytes as proof_bin_base64
ADDR=$(ipc_jq '.metrics_listen // empty')
case "$ADDR" in 127.0.0.1:[0-9]*) ;; *) ipc_fail "no HTTP listener in status: '$ADDR'";; esac
curl -s -o "$IPC_DIR/post.json" -w '%{http_code}' -X POST http://$ADDR/v1/jobs \
  -d "{\"zkey\": \"$B/circuit.params\", \"r1cs\": \"$B/circuit.r1cs\", \"witnesses\": [\"$B/witness.wtns\"]}" \
  >"$IPC_DIR/post.code" || ipc_fail "POST /v1/jobs"
[ "$(cat "$IPC_DIR/post.code")" = 201 ] || ipc_fail "POST /v1/jobs: $(cat "$IPC_DIR/post.code") $(cat "$IPC_DIR/post.json")"
JH=$(jq -r .id "$IPC_DIR/post.json")
"$ZKPIPE" await "$JH" --timeout 300 >/dev/null || ipc_fail "HTTP bellman job"
curl -s http://$ADDR/v1/jobs/$JH | jq -r '.partitions[0].proof_bin_base64' | base64 -d >"$IPC_DIR/http.bin" ||
  ipc_fail "GET /v1/jobs/$JH: no proof_bin_base64"
cmp -s "$IPC_DIR/http.bin" "$B/proof_r5_s9.bin" || ipc_fail "the HTTP job's binary proof differs from bellman's"

# 3. kill -9 of the GPU worker while it holds a partition: the job completes, proofs verify
ipc_hold gpu
J3=$(ipc_submit --zkey "$K/circuit.params" --r1cs "$K/circuit.r1cs" "$K"/witness-{0..2}.wtns)
ipc_wait_for '.slots.PROVING >= 1 and ([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
G=$(ipc_worker_pid gpu)
ipc_log "kill -9 gpu worker $G"
kill -9 "$G"
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length == 1"
ipc_release gpu
"$ZKPIPE" await "$J3" --timeout 300 --out "$IPC_DIR/out/kill" >/dev/null || ipc_fail "job after the kill"
for i in 0 1 2; do check_same "$IPC_DIR/out/kill" $i "$K" "$K/witness-$i.wtns"; done
[ "$(ipc_jq '.counters.requeued.gpu')" -ge 1 ] || ipc_fail "no GPU requeue counted"

# 4. bad input: one failure each (input class), a message naming the file and field
bad_job() {   # WHAT GREP ARGS...: the job fails, its error matches GREP
  local what=$1 pat=$2 j; shift 2
  j=$(ipc_submit "$@")
  "$ZKPIPE" await "$j" --timeout 120 --json >"$IPC_DIR/bad.json" 2>/dev/null && ipc_fail "$what: the job succeeded"
  jq -r '.partitions[0].error // ""' "$IPC_DIR/bad.json" | grep -q -- "$pat" ||
    ipc_fail "$what: error does not say '$pat': $(jq -c . "$IPC_DIR/bad.json")"
  [ "$(jq -r '.partitions[0].attempts' "$IPC_DIR/bad.json")" = 1 ] || ipc_fail "$what: retried: $(jq -c . "$IPC_DIR/bad.json")"
  ipc_log "$what: $(jq -r '.partitions[0].error' "$IPC_DIR/bad.json")"
}
cp "$K/circuit.params" "$IPC_DIR/corrupt.params"
# a coordinate of l[0] off the curve: l starts after the vk, ic (3 points), h (1023 points) and the counts
off=$(( 96 * 3 + 192 * 3 + 4 + 96 * 3 + 4 + 96 * 1023 + 4 + 50 ))
printf '\x01' | dd of="$IPC_DIR/corrupt.params" bs=1 seek=$off conv=notrunc status=none
bad_job "corrupt .params" "corrupt.params.*l\[0\]" --zkey "$IPC_DIR/corrupt.params" --r1cs "$K/circuit.r1cs" "$K/witness-0.wtns"
bad_job "r1cs of another circuit" "chain300/circuit.params: .* has .* points, the circuit" \
  --zkey "$B/circuit.params" --r1cs "$K/circuit.r1cs" "$K/witness-0.wtns"
bad_job "no --r1cs" "circuit.params: a bellman .params key needs its circuit" --zkey "$K/circuit.params" "$K/witness-0.wtns"
# a key imported with a density file (no r1cs: no coefficients) proves vectors only, not a witness
"$ZKPIPE" keys density "$K/circuit.r1cs" "$IPC_DIR/k.dens" >/dev/null || ipc_fail "keys density"
"$ZKPIPE" keys import "$K/circuit.params" --r1cs "$IPC_DIR/k.dens" --arena "$IPC_ARENA" >/dev/null ||
  ipc_fail "keys import with a density file"
bad_job "density-file key + witness" "imported with a density file.*not a witness" \
  --zkey "$K/circuit.params" --r1cs "$IPC_DIR/k.dens" "$K/witness-0.wtns"

# 5. the group keeps serving: a bellman job and a zkey job after the failures
J4=$(ipc_submit --zkey "$B/circuit.params" --r1cs "$B/circuit.r1cs" "$B/witness.wtns")
"$ZKPIPE" await "$J4" --timeout 300 --out "$IPC_DIR/out/b2" >/dev/null || ipc_fail "bellman job after the bad ones"
cmp -s "$IPC_DIR/out/b2/proof-0.bin" "$B/proof_r5_s9.bin" || ipc_fail "chain300 after the bad jobs differs"
F=$FIX/bls12381_chain
JG=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs $F/witness-0.wtns)
"$ZKPIPE" await "$JG" --timeout 300 --out "$IPC_DIR/out/good" >/dev/null || ipc_fail "the zkey job after it failed"
ipc_verify_all "$IPC_DIR/out/good" $F/verification_key.json 1
ipc_all_free
# run with ZP_TEST_CUDA_EMULATE=1 (ipc_bellman_submit_cuda_emu): the proofs above came from the GPU
# worker's CUDA backend (bellman's H on the host-emulated device, staged verbs), not the CPU's
if [ "${ZP_TEST_CUDA_EMULATE:-0}" = 1 ]; then
  grep -q "gpu-worker\[[0-9]*\].*backend cuda" "$IPC_DIR/up.log" || ipc_fail "the gpu worker did not use the cuda backend"
  ! grep -q "gpu-worker\[[0-9]*\].*backend cpu" "$IPC_DIR/up.log" || ipc_fail "a gpu worker ran the cpu backend"
fi
echo "ipc bellman_submit: OK"
