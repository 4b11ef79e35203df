#!/usr/bin/env bash
# test_prove.sh ZKPIPE FIXTURES_DIR - the `oracle` suite check of the prover against snarkjs.
# For every fixture (FIXTURES_DIR/*/circuit.zkey):
#   - `zkpipe prove` (random r,s; with --r1cs) -> proof accepted by snarkjs 0.7.6 through
#     tests/oracle/verify.sh with ZP_ORACLE_BYTES=1 (snarkjs's exact JSON bytes), by
#     `zkpipe verify` with verification_key.json and with the .zkey;
#   - a tampered proof (pi_a taken from snarkjs's proof.json) and a tampered public signal
#     (last one - 1, or 1 if it is 0: still < r) are rejected by both;
#   - snarkjs's own proof.json is accepted by `zkpipe verify`;
#   - with ZP_TEST_FIXED_RS=1, `--r/--s` from meta.json reproduce proof_rs.json and r=s=0
#     reproduces proof_rs0.json byte for byte;
#   - witness-bad.wtns with --r1cs is refused naming a constraint, no proof written.
# Everything used lives in this repository: verify.sh/verify.mjs beside this script, snarkjs
# from tests/oracle/ensure.sh (npm ci from the lockfile). Exit 77 (skip) only when node is missing.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: test_prove.sh ZKPIPE FIXTURES_DIR" >&2; exit 2; }
ZKPIPE=$1
FIX=$2
command -v node >/dev/null 2>&1 || { echo "test_prove: node not found: skipped"; exit 77; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERIFY_SH="$HERE/verify.sh"
ORACLE_ROOT=$("$HERE/ensure.sh") || { echo "test_prove: tests/oracle/ensure.sh failed" >&2; exit 1; }
export ORACLE_ROOT
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
n=0
fail() { echo "FAIL [$name] $*" >&2; fails=$((fails + 1)); }

# tamper.js MODE IN OUT [OTHER]: a = replace pi_a by OTHER's pi_a; p = last public signal + 1
cat > "$TMP/tamper.js" <<'EOF'
const fs = require("fs");
const [mode, inp, out, other] = process.argv.slice(2);
const j = JSON.parse(fs.readFileSync(inp, "utf8"));
if (mode === "a") j.pi_a = JSON.parse(fs.readFileSync(other, "utf8")).pi_a;
if (mode === "p") { const v = BigInt(j[j.length - 1]); j[j.length - 1] = (v > 0n ? v - 1n : 1n).toString(); }  // stays < r (a fixture may hold r-1)
fs.writeFileSync(out, JSON.stringify(j, null, 1));
EOF
meta() { node -e 'const m=JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(m.proof_rs[process.argv[2]])' "$1/meta.json" "$2"; }

for d in "$FIX"/*/; do
  d=${d%/}
  [ -f "$d/circuit.zkey" ] || continue
  name=$(basename "$d")
  n=$((n + 1))
  before=$fails
  o="$TMP/$name"
  mkdir -p "$o"
  r1cs=()
  [ -f "$d/circuit.r1cs" ] && r1cs=(--r1cs "$d/circuit.r1cs")
  if ! "$ZKPIPE" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/proof.json" "$o/public.json" "${r1cs[@]}" 2>"$o/err"; then
    fail "zkpipe prove failed: $(cat "$o/err")"; continue
  fi
  ZP_ORACLE_BYTES=1 "$VERIFY_SH" "$d/verification_key.json" "$o/public.json" "$o/proof.json" || fail "snarkjs rejects our proof"
  "$ZKPIPE" verify "$d/verification_key.json" "$o/public.json" "$o/proof.json" >"$o/out" 2>&1 && grep -q "OK!" "$o/out" \
    || fail "zkpipe verify (vk json) rejects our proof: $(cat "$o/out")"
  "$ZKPIPE" verify "$d/circuit.zkey" "$o/public.json" "$o/proof.json" >/dev/null 2>&1 || fail "zkpipe verify (zkey) rejects our proof"
  "$ZKPIPE" verify "$d/verification_key.json" "$d/public.json" "$d/proof.json" >/dev/null 2>&1 || fail "zkpipe verify rejects snarkjs's proof"

  # tampered proof: pi_a of another valid proof
  node "$TMP/tamper.js" a "$o/proof.json" "$o/proof_t.json" "$d/proof.json"
  ZP_ORACLE_LAYOUT=0 "$VERIFY_SH" "$d/verification_key.json" "$o/public.json" "$o/proof_t.json" 2>/dev/null && fail "snarkjs accepts a tampered proof"
  "$ZKPIPE" verify "$d/verification_key.json" "$o/public.json" "$o/proof_t.json" >/dev/null 2>&1
  [ $? -eq 1 ] || fail "zkpipe verify: tampered proof not rejected with exit 1"
  # tampered public signal
  if [ "$(cat "$o/public.json")" != "[]" ]; then
    node "$TMP/tamper.js" p "$o/public.json" "$o/public_t.json"
    ZP_ORACLE_LAYOUT=0 "$VERIFY_SH" "$d/verification_key.json" "$o/public_t.json" "$o/proof.json" 2>/dev/null && fail "snarkjs accepts a tampered public signal"
    "$ZKPIPE" verify "$d/verification_key.json" "$o/public_t.json" "$o/proof.json" >/dev/null 2>&1
    [ $? -eq 1 ] || fail "zkpipe verify: tampered public signal not rejected with exit 1"
  fi

  # deterministic proofs equal snarkjs's bytes
  ZP_TEST_FIXED_RS=1 "$ZKPIPE" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/p0.json" "$o/pub0.json" --r 0 --s 0 \
    && cmp -s "$o/p0.json" "$d/proof_rs0.json" || fail "r=s=0 proof differs from proof_rs0.json"
  cmp -s "$o/pub0.json" "$d/public_rs0.json" || fail "public.json differs from public_rs0.json"
  ZP_TEST_FIXED_RS=1 "$ZKPIPE" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/p1.json" "$o/pub1.json" \
    --r "$(meta "$d" r)" --s "$(meta "$d" s)" && cmp -s "$o/p1.json" "$d/proof_rs.json" || fail "fixed r,s proof differs from proof_rs.json"

  # a bad witness is refused before any proof is written
  if [ -f "$d/witness-bad.wtns" ] && [ ${#r1cs[@]} -gt 0 ]; then
    if "$ZKPIPE" prove "$d/circuit.zkey" "$d/witness-bad.wtns" "$o/pb.json" "$o/pubb.json" "${r1cs[@]}" 2>"$o/err"; then
      fail "bad witness accepted"
    else
      grep -q "constraint [0-9]" "$o/err" || fail "bad witness error does not name the constraint: $(cat "$o/err")"
      [ -e "$o/pb.json" ] && fail "a proof was written for a bad witness"
    fi
  fi
  [ $fails -eq $before ] && echo "ok [$name]"
done
[ $n -gt 0 ] || { echo "test_prove: no fixtures under $FIX" >&2; exit 1; }
[ $fails -eq 0 ] || { echo "test_prove: $fails failure(s)" >&2; exit 1; }
echo "test_prove: $n fixtures ok"
