#!/usr/bin/env bash
# test_testkey.sh ZKPIPE - the `oracle` suite check of `zkpipe testkey` (INSECURE test keys,
# lib/groth16/testkey.h) against snarkjs 0.7.6, on both curves:
#   - sizes 2^4..2^10 (several public counts): `zkpipe prove` over the generated key and witness
#     -> `snarkjs groth16 verify` accepts (tests/oracle/verify.sh, ZP_ORACLE_BYTES=1), a tampered
#     public signal is rejected, and `snarkjs zkey export verificationkey` of our zkey gives our
#     verification_key.json byte for byte;
#   - the same tau/alpha/beta as tests/oracle/fake_ptau.mjs with delta = 1: `snarkjs groth16
#     setup` over that ptau and our circuit.r1cs writes exactly our zkey sections 1..9 (IC,
#     coefs, A, B1, B2, C and H included; section 10 holds the circuit hash, which we do not compute).
# Everything used lives in this repository: verify.sh/verify.mjs/fake_ptau.mjs beside this script,
# snarkjs from tests/oracle/ensure.sh (npm ci from the lockfile). Exit 77 only without node.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: test_testkey.sh ZKPIPE" >&2; exit 2; }
ZKPIPE=$1
command -v node >/dev/null 2>&1 || { echo "test_testkey: node not found: skipped"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "test_testkey: python3 not found" >&2; exit 1; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERIFY_SH="$HERE/verify.sh"
FAKE_PTAU="$HERE/fake_ptau.mjs"
ORACLE_ROOT=$("$HERE/ensure.sh") || { echo "test_testkey: tests/oracle/ensure.sh failed" >&2; exit 1; }
export ORACLE_ROOT
SNARKJS="$ORACLE_ROOT/node_modules/snarkjs/cli.js"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL [$name] $*" >&2; fails=$((fails + 1)); }

cat > "$TMP/sections.py" <<'PY'
# sections.py A.zkey B.zkey: exit 0 iff sections 1..9 have the same bytes (found by id)
import struct, sys
def secs(p):
    b = open(p, 'rb').read()
    n = struct.unpack_from('<I', b, 8)[0]; pos = 12; out = {}
    for _ in range(n):
        i, s = struct.unpack_from('<IQ', b, pos); pos += 12; out[i] = b[pos:pos + s]; pos += s
    return out
a, b = secs(sys.argv[1]), secs(sys.argv[2])
bad = [i for i in range(1, 10) if i not in a or a.get(i) != b.get(i)]
if bad: print("sections differ: %s" % bad, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
cat > "$TMP/tamper.js" <<'JS'
const fs = require("fs");
const [inp, out] = process.argv.slice(2);
const j = JSON.parse(fs.readFileSync(inp, "utf8"));
const v = BigInt(j[j.length - 1]); j[j.length - 1] = (v > 0n ? v - 1n : 1n).toString();
fs.writeFileSync(out, JSON.stringify(j, null, 1));
JS
# fake_ptau.mjs's toxic waste for a seed: sha512(seed + "/" + tag) mod r
cat > "$TMP/seed.js" <<'JS'
const c = require("crypto");
const R = { bn128: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
  bls12381: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n }[process.argv[2]];
const f = (t) => (BigInt("0x" + c.createHash("sha512").update(process.argv[3] + "/" + t).digest("hex")) % R).toString();
console.log(f("tau"), f("alpha"), f("beta"));
JS

n=0
for curve in bn128 bls12381; do
  for pk in 4:1 6:0 8:3 10:2; do
    P=${pk%:*}; K=${pk#*:}
    name="$curve p$P k$K"; n=$((n + 1)); before=$fails
    d="$TMP/$curve-$P"
    if ! "$ZKPIPE" testkey --curve "$curve" --power "$P" --publics "$K" --witnesses 2 --out "$d" --insecure-known-tau 2>"$d.err"; then
      fail "zkpipe testkey failed: $(cat "$d.err")"; continue
    fi
    for w in witness-0 witness-1; do
      "$ZKPIPE" prove "$d/circuit.zkey" "$d/$w.wtns" "$d/$w-proof.json" "$d/$w-public.json" --r1cs "$d/circuit.r1cs" 2>"$d.err" \
        || { fail "zkpipe prove $w: $(cat "$d.err")"; continue; }
      ZP_ORACLE_BYTES=1 "$VERIFY_SH" "$d/verification_key.json" "$d/$w-public.json" "$d/$w-proof.json" \
        || fail "snarkjs rejects our proof over the test key ($w)"
    done
    if [ "$K" -gt 0 ]; then
      node "$TMP/tamper.js" "$d/witness-0-public.json" "$d/public_t.json"
      ZP_ORACLE_LAYOUT=0 "$VERIFY_SH" "$d/verification_key.json" "$d/public_t.json" "$d/witness-0-proof.json" 2>/dev/null \
        && fail "snarkjs accepts a tampered public signal"
    fi
    node "$SNARKJS" zkey export verificationkey "$d/circuit.zkey" "$d/vk-snarkjs.json" >/dev/null 2>&1 \
      || fail "snarkjs zkey export verificationkey failed"
    cmp -s "$d/vk-snarkjs.json" "$d/verification_key.json" || fail "verification_key.json differs from snarkjs's export"
    [ $fails -eq $before ] && echo "ok [$name]"
  done
  # byte-exact against snarkjs groth16 setup over a fake ptau with the same toxic waste (delta = 1)
  for pk in 4:2 6:0; do
    P=${pk%:*}; K=${pk#*:}
    name="$curve setup p$P k$K"; n=$((n + 1)); before=$fails
    d="$TMP/$curve-setup-$P"; mkdir -p "$d"
    node "$FAKE_PTAU" "$curve" "$P" "$d/pot.ptau" --seed "zp-$P" >"$d/waste" 2>"$d.err" || { fail "fake_ptau.mjs failed: $(cat "$d.err")"; continue; }
    read -r tau alpha beta < <(node "$TMP/seed.js" "$curve" "zp-$P")
    [ "$(cat "$d/waste")" = "$tau $alpha $beta" ] || { fail "fake_ptau.mjs used other toxic waste than seed.js derives"; continue; }
    "$ZKPIPE" testkey --curve "$curve" --power "$P" --publics "$K" --out "$d/k" --insecure-known-tau \
      --tau "$tau" --alpha "$alpha" --beta "$beta" --delta 1 2>"$d.err" || { fail "zkpipe testkey failed: $(cat "$d.err")"; continue; }
    node "$SNARKJS" groth16 setup "$d/k/circuit.r1cs" "$d/pot.ptau" "$d/ref.zkey" >/dev/null 2>&1 \
      || { fail "snarkjs groth16 setup rejects our circuit.r1cs"; continue; }
    python3 "$TMP/sections.py" "$d/k/circuit.zkey" "$d/ref.zkey" || fail "our zkey differs from snarkjs setup's"
    [ $fails -eq $before ] && echo "ok [$name]"
  done
done
[ $fails -eq 0 ] || { echo "test_testkey: $fails failure(s)" >&2; exit 1; }
echo "test_testkey: $n cases ok"
