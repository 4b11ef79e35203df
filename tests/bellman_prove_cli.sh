#!/usr/bin/env bash
# bellman_prove_cli.sh ZKPIPE - `zkpipe prove circuit.params witness.wtns proof.bin public.json
# --r1cs circuit.r1cs` over upstream bellman's fixtures (tests/fixtures/bellman/): at r=5, s=9
# (ZP_TEST_FIXED_RS=1 --r 5 --s 9) the 192 bytes equal bellman's proof_r5_s9.bin and public.json
# holds public.txt's values; fresh blinding gives another 192-byte proof; no --r1cs is exit 2
# saying why; another circuit's r1cs is exit 1 naming what disagrees; --r without the hook is
# refused. fullprove with the key first (witness in memory) gives the same proof; the key's
# subgroup checks run once per file (check record in $ZKPIPE_KEYCHECK_DIR, --recheck).
. "$(dirname "$0")/cli_lib.sh"
cli_init bellman_prove_cli.sh "$@"
F=$(cd "$(dirname "$0")/fixtures/bellman" && pwd)
for c in chain300 poseidon2; do
  D=$F/$c
  ZP_TEST_FIXED_RS=1 "$Z" prove "$D/circuit.params" "$D/witness.wtns" "$T/$c.bin" "$T/$c.pub.json" \
    --r1cs "$D/circuit.r1cs" --r 5 --s 9 2>"$T/err" || { fail "$c: prove: $(cat "$T/err")"; continue; }
  cmp -s "$T/$c.bin" "$D/proof_r5_s9.bin" || fail "$c: proof at r=5 s=9 differs from bellman's"
  want=$(tr '\n' ' ' <"$D/public.txt" | sed 's/ *$//')
  got=$(tr -d '[]" \n' <"$T/$c.pub.json" | tr ',' ' ')
  [ "$got" = "$want" ] || fail "$c: public.json '$got', bellman's public.txt '$want'"
  "$Z" prove "$D/circuit.params" "$D/witness.wtns" "$T/$c.r.bin" "$T/$c.r.json" --r1cs "$D/circuit.r1cs" \
    2>"$T/err" || fail "$c: prove (fresh r, s): $(cat "$T/err")"
  [ "$(stat -c %s "$T/$c.r.bin" 2>/dev/null)" = 192 ] || fail "$c: fresh proof is not 192 bytes"
  cmp -s "$T/$c.r.bin" "$T/$c.bin" && fail "$c: fresh blinding gave the r=5 s=9 proof"
done
"$Z" prove "$F/chain300/circuit.params" "$F/chain300/witness.wtns" "$T/x.bin" "$T/x.json" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--r1cs" "$T/err" || fail "no --r1cs: exit $rc, $(cat "$T/err")"
"$Z" prove "$F/chain300/circuit.params" "$F/poseidon2/witness.wtns" "$T/x.bin" "$T/x.json" \
  --r1cs "$F/poseidon2/circuit.r1cs" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "key:" "$T/err" || fail "other circuit: exit $rc, $(cat "$T/err")"
"$Z" prove "$F/chain300/circuit.params" "$F/chain300/witness.wtns" "$T/x.bin" "$T/x.json" \
  --r1cs "$F/chain300/circuit.r1cs" --r 5 --s 9 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "--r/--s without ZP_TEST_FIXED_RS=1: exit $rc, want 2"
"$Z" prove "$F/chain300/circuit.params" "$F/chain300/circuit.r1cs" "$T/x.bin" "$T/x.json" \
  --r1cs "$F/chain300/circuit.r1cs" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "r1cs as the witness: exit $rc"
"$Z" prove "$F/chain300/circuit.vk" "$F/chain300/witness.wtns" "$T/x.bin" "$T/x.json" \
  --r1cs "$F/chain300/circuit.r1cs" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "verifying key" "$T/err" || fail ".vk as the key: exit $rc, $(cat "$T/err")"
head -c 5000 "$F/chain300/circuit.params" >"$T/trunc.params"
"$Z" prove "$T/trunc.params" "$F/chain300/witness.wtns" "$T/x.bin" "$T/x.json" \
  --r1cs "$F/chain300/circuit.r1cs" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "trunc.params" "$T/err" || fail "truncated .params: exit $rc, $(cat "$T/err")"

# fullprove with the bellman key first: the witness in memory from circuit.wasm + input.json,
# then the same proof as `zkpipe prove` (and bellman's) at r=5 s=9; zkpipe verify accepts it.
# The snarkjs order (input, wasm, key) takes a .params too; no --r1cs is exit 2.
D=$F/chain300
ZP_TEST_FIXED_RS=1 "$Z" fullprove "$D/circuit.params" "$D/circuit.wasm" "$D/input.json" "$T/fp.bin" "$T/fp.json" \
  --r1cs "$D/circuit.r1cs" --r 5 --s 9 --cache "$T/wc" --quiet 2>"$T/err" || fail "fullprove: $(cat "$T/err")"
cmp -s "$T/fp.bin" "$T/chain300.bin" || fail "fullprove's proof differs from zkpipe prove's at r=5 s=9"
cmp -s "$T/fp.bin" "$D/proof_r5_s9.bin" || fail "fullprove's proof differs from bellman's at r=5 s=9"
cmp -s "$T/fp.json" "$T/chain300.pub.json" || fail "fullprove's public.json differs from zkpipe prove's"
"$Z" verify "$D/circuit.vk" "$T/fp.json" "$T/fp.bin" >/dev/null 2>"$T/err" || fail "verify fullprove's proof: $(cat "$T/err")"
"$Z" fullprove "$D/input.json" "$D/circuit.wasm" "$D/circuit.params" "$T/fp2.bin" "$T/fp2.json" \
  --r1cs "$D/circuit.r1cs" --cache "$T/wc" --quiet 2>"$T/err" || fail "fullprove (snarkjs order): $(cat "$T/err")"
"$Z" verify "$D/circuit.vk" "$T/fp2.json" "$T/fp2.bin" >/dev/null 2>"$T/err" || fail "verify fullprove (snarkjs order): $(cat "$T/err")"
"$Z" fullprove "$D/circuit.params" "$D/circuit.wasm" "$D/input.json" "$T/x.bin" "$T/x.json" --cache "$T/wc" \
  --quiet 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--r1cs" "$T/err" || fail "fullprove without --r1cs: exit $rc, $(cat "$T/err")"

# the check record: a key changed less than 1 s ago is checked and not recorded; then checked
# once and recorded; then trusted; --recheck checks again; a touched key is checked again
cp "$D/circuit.params" "$T/k.params"
kp() { "$Z" prove "$T/k.params" "$D/witness.wtns" "$T/k.bin" "$T/k.json" --r1cs "$D/circuit.r1cs" --json "$@" \
         2>"$T/err" | grep -o '"key_subgroup": "[a-z]*", "key_record_written": [a-z]*'; }
want() { [ "$1" = "$2" ] || fail "check record, $3: got '$1', want '$2'"; }
want "$(kp)" '"key_subgroup": "checked", "key_record_written": false' "fresh file"
sleep 1.2
want "$(kp)" '"key_subgroup": "checked", "key_record_written": true' "first run"
want "$(kp)" '"key_subgroup": "record", "key_record_written": false' "second run"
"$Z" verify "$D/circuit.vk" "$T/k.json" "$T/k.bin" >/dev/null 2>&1 || fail "proof made with a record-trusted key does not verify"
want "$(kp --recheck)" '"key_subgroup": "checked", "key_record_written": true' "--recheck"
touch "$T/k.params"
want "$(kp)" '"key_subgroup": "checked", "key_record_written": false' "touched"
ls "$ZKPIPE_KEYCHECK_DIR"/*.check >/dev/null 2>&1 || fail "no record in ZKPIPE_KEYCHECK_DIR"
cli_done bellman_prove_cli
