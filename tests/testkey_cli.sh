#!/usr/bin/env bash
# testkey_cli.sh ZKPIPE - `zkpipe testkey` as a command: refuses without --insecure-known-tau
# (exit 2, says why, writes nothing), rejects bad options (exit 2), and with the flag writes a
# key over which `zkpipe prove` (with the r1cs check) and `zkpipe verify` succeed.
. "$(dirname "$0")/cli_lib.sh"
cli_init testkey_cli.sh "$@"
"$Z" testkey --curve bn128 --power 5 --out "$T/k" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "no --insecure-known-tau: exit $rc, want 2"
grep -q "INSECURE" "$T/err" && grep -q -- "--insecure-known-tau" "$T/err" || fail "refusal does not say why: $(cat "$T/err")"
[ -e "$T/k" ] && fail "refusal created $T/k"
"$Z" testkey --curve bn999 --power 5 --out "$T/k" --insecure-known-tau 2>/dev/null; [ $? -eq 2 ] || fail "bad curve not exit 2"
"$Z" testkey --curve bn128 --power x5 --out "$T/k" --insecure-known-tau 2>/dev/null; [ $? -eq 2 ] || fail "bad power not exit 2"
"$Z" testkey --curve bn128 --power 5 --out "$T/k" --insecure-known-tau --tau 0 2>/dev/null; [ $? -ne 0 ] || fail "tau 0 accepted"
for c in bn128 bls12-381; do
  "$Z" testkey --curve $c --power 5 --publics 2 --out "$T/$c" --insecure-known-tau 2>"$T/err" || { fail "$c: $(cat "$T/err")"; continue; }
  grep -q "INSECURE" "$T/$c/toxic_waste.json" || fail "$c: toxic_waste.json has no warning"
  "$Z" prove "$T/$c/circuit.zkey" "$T/$c/witness.wtns" "$T/$c/p.json" "$T/$c/pub.json" --r1cs "$T/$c/circuit.r1cs" 2>"$T/err" \
    || fail "$c: prove: $(cat "$T/err")"
  "$Z" verify "$T/$c/verification_key.json" "$T/$c/pub.json" "$T/$c/p.json" 2>&1 | grep -q "OK!" || fail "$c: verify"
done
cli_done testkey_cli
