#!/usr/bin/env bash
# bellman_cli.sh ZKPIPE FIXTURES - `zkpipe verify` on bellman files (issue 29): the proofs that
# upstream bellman made (tests/fixtures/bellman/*/proof_r5_s9.bin) verify against circuit.vk and
# circuit.params with a public.json written from public.txt (exit 0); a wrong public input, a
# proof for another circuit and a corrupted proof are invalid (exit 1); a public count that does
# not match the key's IC count, a truncated proof and a truncated key are bad input (exit 2)
# naming the field. `zkpipe testkey` on BLS12-381 writes bellman .params/.vk that zkpipe prove
# (bellman prover) and verify accept.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: bellman_cli.sh ZKPIPE FIXTURES" >&2; exit 2; }
Z=$1
F=$2/bellman
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*" >&2; fails=$((fails + 1)); }
# expect RC DESC CMD...: runs CMD, stderr to $T/err
expect() {
  local want=$1 desc=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  [ $rc -eq "$want" ] || fail "$desc: exit $rc, want $want: $(cat "$T/err")"
}
pubjson() { # public.txt -> snarkjs public.json (decimal strings)
  awk 'BEGIN { printf "[" } NF { printf "%s\n \"%s\"", (n++ ? "," : ""), $1 } END { print "\n]" }' "$1"
}
for c in chain300 poseidon2; do
  d=$F/$c
  pubjson "$d/public.txt" >"$T/$c.pub.json"
  expect 0 "$c: vk" "$Z" verify "$d/circuit.vk" "$T/$c.pub.json" "$d/proof_r5_s9.bin"
  grep -q "OK!" "$T/out" || fail "$c: no OK!"
  expect 0 "$c: params as vk" "$Z" verify "$d/circuit.params" "$T/$c.pub.json" "$d/proof_r5_s9.bin"
  # a wrong public input: invalid
  awk 'NR == 1 { $1 = "5" } { print }' "$d/public.txt" >"$T/wrong.txt"
  pubjson "$T/wrong.txt" >"$T/wrong.json"
  expect 1 "$c: wrong public input" "$Z" verify "$d/circuit.vk" "$T/wrong.json" "$d/proof_r5_s9.bin"
  # one public input too many / too few: bad input naming ic
  { cat "$d/public.txt"; echo 7; } >"$T/more.txt"
  pubjson "$T/more.txt" >"$T/more.json"
  expect 2 "$c: extra public input" "$Z" verify "$d/circuit.vk" "$T/more.json" "$d/proof_r5_s9.bin"
  grep -q "circuit.vk: ic has" "$T/err" || fail "$c: IC mismatch message does not name ic: $(cat "$T/err")"
  echo "[]" >"$T/none.json"
  expect 2 "$c: no public inputs" "$Z" verify "$d/circuit.vk" "$T/none.json" "$d/proof_r5_s9.bin"
  # corrupted proofs: a flipped bit in C's x (off the curve or another point), A's flags
  cp "$d/proof_r5_s9.bin" "$T/bad.bin"; chmod u+w "$T/bad.bin"
  printf '\x01' | dd of="$T/bad.bin" bs=1 seek=191 conv=notrunc status=none
  cmp -s "$T/bad.bin" "$d/proof_r5_s9.bin" && fail "$c: corruption did not change the proof"
  expect 1 "$c: corrupted C" "$Z" verify "$d/circuit.vk" "$T/$c.pub.json" "$T/bad.bin"
  cp "$d/proof_r5_s9.bin" "$T/bad.bin"
  printf '\xc0' | dd of="$T/bad.bin" bs=1 seek=0 conv=notrunc status=none
  expect 1 "$c: A flags" "$Z" verify "$d/circuit.vk" "$T/$c.pub.json" "$T/bad.bin"
  head -c 191 "$d/proof_r5_s9.bin" >"$T/short.bin"
  expect 2 "$c: truncated proof" "$Z" verify "$d/circuit.vk" "$T/$c.pub.json" "$T/short.bin"
  grep -q "191 bytes" "$T/err" || fail "$c: truncated proof message: $(cat "$T/err")"
  head -c 1000 "$d/circuit.vk" >"$T/short.vk"
  expect 2 "$c: truncated vk" "$Z" verify "$T/short.vk" "$T/$c.pub.json" "$d/proof_r5_s9.bin"
  grep -q "short.vk: ic" "$T/err" || fail "$c: truncated vk message: $(cat "$T/err")"
done
# a proof of one circuit against the other's key (same public count: chain300 has 2, poseidon2 1)
pubjson "$F/poseidon2/public.txt" >"$T/p.json"
cp "$F/chain300/proof_r5_s9.bin" "$T/other.bin"
expect 1 "chain300 proof under the poseidon2 key" "$Z" verify "$F/poseidon2/circuit.vk" "$T/p.json" "$T/other.bin"
# testkey's bellman .params/.vk (same r1cs as its zkey): zkpipe prove makes a proof that the
# .vk verifies (the prover also pairing-checks it against the key), and the .params reads as a .vk
for K in 0 2; do
  D=$T/tk$K
  expect 0 "testkey K=$K" "$Z" testkey --curve bls12-381 --power 8 --publics $K --seed 9 --out "$D" --insecure-known-tau
  [ -s "$D/circuit.params" ] && [ -s "$D/circuit.vk" ] || { fail "testkey K=$K: no circuit.params / circuit.vk"; continue; }
  cmp -s <(head -c "$(stat -c %s "$D/circuit.vk")" "$D/circuit.params") "$D/circuit.vk" || fail "testkey K=$K: .vk is not the head of .params"
  expect 0 "testkey K=$K: prove" "$Z" prove "$D/circuit.params" "$D/witness.wtns" "$D/proof.bin" "$D/public.json" --r1cs "$D/circuit.r1cs"
  expect 0 "testkey K=$K: verify" "$Z" verify "$D/circuit.vk" "$D/public.json" "$D/proof.bin"
  expect 0 "testkey K=$K: verify with .params" "$Z" verify "$D/circuit.params" "$D/public.json" "$D/proof.bin"
done
expect 0 "testkey --no-bellman" "$Z" testkey --curve bls12-381 --power 5 --no-bellman --out "$T/nb" --insecure-known-tau
[ -e "$T/nb/circuit.params" ] && fail "--no-bellman wrote circuit.params"
expect 0 "testkey bn128" "$Z" testkey --curve bn128 --power 5 --out "$T/bn" --insecure-known-tau
[ -e "$T/bn/circuit.params" ] && fail "bn128 wrote circuit.params"
# keys preload: a bellman .params needs its circuit (--r1cs); with it, it is checked and read
# into the store (issue 29 item 4: the group proves it, tests/ipc/bellman_submit.sh); bad ones named
expect 1 "keys preload bellman without --r1cs" "$Z" keys preload "$F/chain300/circuit.params" --arena "zp-bcli-$$"
grep -q "is a bellman .params: give its circuit with --r1cs" "$T/err" || fail "keys preload: $(cat "$T/err")"
expect 0 "keys preload bellman" "$Z" keys preload "$F/chain300/circuit.params" --r1cs "$F/chain300/circuit.r1cs" \
  --arena "zp-bcli-$$"
grep -q "checked and read into" "$T/out" || fail "keys preload: $(cat "$T/out")"
# compacted as in the file: chain300's 305 wires, 302 A and 300 B points (not one per wire)
grep -q "305 wires, |A| 302, |B| 300" "$T/out" || fail "keys preload: not compacted: $(cat "$T/out")"
expect 0 "keys evict bellman" "$Z" keys evict "$F/chain300/circuit.params" --r1cs "$F/chain300/circuit.r1cs" \
  --arena "zp-bcli-$$"
grep -q "evicted" "$T/out" || fail "keys evict: $(cat "$T/out")"
head -c 5000 "$F/chain300/circuit.params" >"$T/cut.params"
expect 1 "keys preload truncated bellman" "$Z" keys preload "$T/cut.params" --r1cs "$F/chain300/circuit.r1cs" \
  --arena "zp-bcli-$$"
grep -q "cut.params: h: count 511 needs" "$T/err" || fail "keys preload truncated: $(cat "$T/err")"
expect 0 "keys preload --warm bellman" "$Z" keys preload --warm "$F/chain300/circuit.params" --arena "zp-bcli-$$"
[ "$fails" -eq 0 ] || exit 1
echo "bellman_cli: ok"
