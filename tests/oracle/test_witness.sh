#!/usr/bin/env bash
# test_witness.sh ZKPIPE - witness generation (issue 28) against snarkjs 0.7.6, on both curves.
# For each circuit of tests/fixtures/witness (circomlib Poseidon with array and matrix inputs, a
# Poseidon Merkle proof, comparators + Num2Bits, SHA-256 of one block, a circuit with assert and
# ===), compiled here with circom2 (npm, pinned):
#   - `zkpipe wtns calculate` writes a file byte-identical to `snarkjs wtns calculate` (same wasm,
#     same input.json);
#   - `zkpipe fullprove` (witness in memory, then the prover) gives a proof `snarkjs groth16
#     verify` accepts (zkey: `snarkjs groth16 setup` over fake_ptau.mjs's INSECURE ptau; circuits
#     up to a 2^12 domain, i.e. all but SHA-256, whose ptau alone would take minutes in node);
#   - broken inputs exit 2 with a message naming the signal (unknown, missing (via circuit.sym), wrong length,
#     not a number), and a failed circom assertion carries circom's template and line;
#   - the second registration of a wasm is a cache hit.
# Set ZP_WITNESS_CIRCUITS="poseidon compare" to run a subset. Exit 77 only without node.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: test_witness.sh ZKPIPE" >&2; exit 2; }
ZKPIPE=$(realpath "$1")
command -v node >/dev/null 2>&1 || { echo "test_witness: node not found: skipped"; exit 77; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIX=$(cd "$HERE/../fixtures/witness" && pwd)
ORACLE_ROOT=$("$HERE/ensure.sh") || { echo "test_witness: tests/oracle/ensure.sh failed" >&2; exit 1; }
export ORACLE_ROOT
SNARKJS="node $ORACLE_ROOT/node_modules/snarkjs/cli.js"
CIRCOM="node $ORACLE_ROOT/node_modules/circom2/cli.js"
mkdir -p "$ORACLE_ROOT/fixtures"
# circom2 (WASI) resolves includes only below its working directory: work inside ORACLE_ROOT
TMP=$(mktemp -d "$ORACLE_ROOT/fixtures/witness-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export ZKPIPE_WASM_CACHE="$TMP/cache"
fails=0
checks=0
fail() { echo "FAIL [$name] $*" >&2; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }

# expect_bad INPUT_JSON PATTERN...: zkpipe exits 2 and its message matches every PATTERN
expect_bad() {
  local inp=$1; shift
  "$ZKPIPE" wtns calculate "$W" "$inp" "$D/bad.wtns" --quiet 2> "$D/err.txt"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "$(basename "$inp"): exit $rc, expected 2: $(cat "$D/err.txt")"; return; fi
  for p in "$@"; do
    grep -q -- "$p" "$D/err.txt" || { fail "$(basename "$inp"): message lacks '$p': $(cat "$D/err.txt")"; return; }
  done
  [ -e "$D/bad.wtns" ] && { fail "$(basename "$inp"): a witness file was written"; return; }
  ok
}

CIRCUITS=${ZP_WITNESS_CIRCUITS:-poseidon merkle compare sha256 asserts}
for curve in bn128 bls12381; do
  for c in $CIRCUITS; do
    name="$curve/$c"
    D="$TMP/$curve-$c"
    mkdir -p "$D"
    cp "$FIX/$c.circom" "$D/circuit.circom"
    rel=$(realpath --relative-to="$ORACLE_ROOT" "$D")
    if ! (cd "$ORACLE_ROOT" && $CIRCOM "$rel/circuit.circom" --r1cs --wasm --sym --prime "$curve" -l node_modules -o "$rel") > "$D/circom.log" 2>&1; then
      fail "circom: $(tail -3 "$D/circom.log")"; continue
    fi
    W="$D/circuit_js/circuit.wasm"
    IN="$FIX/$c.input.json"
    t0=$(date +%s.%N)
    if ! "$ZKPIPE" wtns calculate "$W" "$IN" "$D/z.wtns" --quiet 2> "$D/err.txt"; then fail "wtns calculate: $(cat "$D/err.txt")"; continue; fi
    t1=$(date +%s.%N)
    $SNARKJS wtns calculate "$W" "$IN" "$D/s.wtns" > "$D/snarkjs.log" 2>&1 || { fail "snarkjs wtns calculate: $(tail -3 "$D/snarkjs.log")"; continue; }
    if cmp -s "$D/z.wtns" "$D/s.wtns"; then ok; else fail "witness differs from snarkjs's ($(cmp "$D/z.wtns" "$D/s.wtns" 2>&1))"; fi
    # a second run is a cache hit
    "$ZKPIPE" wtns calculate "$W" "$IN" "$D/z2.wtns" --json > "$D/second.json" 2>&1
    if grep -q '"cached": true' "$D/second.json" && cmp -s "$D/z2.wtns" "$D/s.wtns"; then ok; else fail "second run: $(cat "$D/second.json")"; fi
    printf '  %-18s registered + witness in %.1f s\n' "$name" "$(echo "$t1 - $t0" | bc)"
    # fullprove, checked by snarkjs
    nc=$($SNARKJS r1cs info "$D/circuit.r1cs" 2>/dev/null | sed -n 's/.*# of Constraints: *\([0-9]*\).*/\1/p')
    np=$($SNARKJS r1cs info "$D/circuit.r1cs" 2>/dev/null | sed -n 's/.*# of Public Inputs: *\([0-9]*\).*/\1/p')
    no=$($SNARKJS r1cs info "$D/circuit.r1cs" 2>/dev/null | sed -n 's/.*# of Outputs: *\([0-9]*\).*/\1/p')
    rows=$(( ${nc:-0} + ${np:-0} + ${no:-0} + 1 ))
    pw=1; while [ $((1 << pw)) -lt "$rows" ]; do pw=$((pw + 1)); done
    [ $pw -lt 4 ] && pw=4
    if [ $pw -gt 12 ]; then
      echo "  $name: fullprove skipped (2^$pw domain: fake_ptau.mjs takes minutes past 2^12)"
    elif node "$HERE/fake_ptau.mjs" "$curve" "$pw" "$D/pot.ptau" > "$D/ptau.log" 2>&1 &&
       $SNARKJS groth16 setup "$D/circuit.r1cs" "$D/pot.ptau" "$D/circuit.zkey" > "$D/setup.log" 2>&1 &&
       $SNARKJS zkey export verificationkey "$D/circuit.zkey" "$D/vk.json" > /dev/null 2>&1; then
      if "$ZKPIPE" fullprove "$IN" "$W" "$D/circuit.zkey" "$D/proof.json" "$D/public.json" --quiet 2> "$D/err.txt"; then
        if $SNARKJS groth16 verify "$D/vk.json" "$D/public.json" "$D/proof.json" > "$D/verify.log" 2>&1; then ok
        else fail "snarkjs rejects fullprove's proof: $(tail -2 "$D/verify.log")"; fi
      else fail "fullprove: $(cat "$D/err.txt")"; fi
    else
      fail "making the test zkey: $(tail -2 "$D/ptau.log" "$D/setup.log")"
    fi
    # broken inputs
    case $c in
      poseidon)
        echo '{"in": [1, 2, 3], "m": [[1, 2], [3, 4]], "extra": 5}' > "$D/unknown.json"
        expect_bad "$D/unknown.json" '"extra"' 'not an input'
        echo '{"in": [1, 2, 3]}' > "$D/missing.json"
        expect_bad "$D/missing.json" 'input signal "m" missing'   # named through circuit.sym
        echo '{"in": [1, 2], "m": [[1, 2], [3, 4]]}' > "$D/short.json"
        expect_bad "$D/short.json" '"in"' 'has 2 values' 'takes 3'
        echo '{"in": [1, 2, 3, 4], "m": [[1, 2], [3, 4]]}' > "$D/long.json"
        expect_bad "$D/long.json" '"in"' 'has 4 values'
        echo '{"in": [1, "two", 3], "m": [[1, 2], [3, 4]]}' > "$D/nan.json"
        expect_bad "$D/nan.json" '"in"' 'value 1' 'two'
        echo '{"in": [1, 2.5, 3], "m": [[1, 2], [3, 4]]}' > "$D/frac.json"
        expect_bad "$D/frac.json" '"in"' 'not an integer'
        echo '{"in": [1, 2, 3], "m": [[1, 2], [3, 4]' > "$D/syntax.json"
        expect_bad "$D/syntax.json" 'syntax.json' 'unexpected end of input'
        ;;
      asserts)
        expect_bad "$FIX/asserts.bad_assert.json" 'Assert Failed' 'Guarded' 'line'
        expect_bad "$FIX/asserts.bad_constraint.json" 'Assert Failed' 'Guarded' 'line'
        if $SNARKJS wtns calculate "$W" "$FIX/asserts.bad_assert.json" "$D/s_bad.wtns" > /dev/null 2>&1; then
          fail "snarkjs accepted the failing assert (the fixture is wrong)"
        else ok; fi
        ;;
    esac
  done
done
echo "test_witness: $checks checks passed, $fails failed"
[ $fails -eq 0 ]
