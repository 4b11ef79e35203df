#!/usr/bin/env bash
# bellman_prove_cli.sh ZKPIPE - `zkpipe prove circuit.params witness.wtns proof.bin public.json
# --r1cs circuit.r1cs` over upstream bellman's fixtures (tests/fixtures/bellman/): at r=5, s=9
# (ZP_TEST_FIXED_RS=1 --r 5 --s 9) the 192 bytes equal bellman's proof_r5_s9.bin and public.json
# holds public.txt's values; fresh blinding gives another 192-byte proof; no --r1cs is exit 2
# saying why; another circuit's r1cs is exit 1 naming what disagrees; --r without the hook is
# refused.
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
cli_done bellman_prove_cli
