#!/usr/bin/env bash
# cli_prove.sh ZKPIPE FIXTURES_DIR - `zkpipe prove` / `zkpipe verify` end to end without node:
# deterministic proofs equal snarkjs's bytes, exit codes (0 ok, 1 invalid/failed, 2 bad input or
# usage), the hidden --r/--s option only with ZP_TEST_FIXED_RS=1, --bin sizes, bad witness.
# Uses the *_chain fixtures (both curves). Exit 77 if they are missing.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: cli_prove.sh ZKPIPE FIXTURES_DIR" >&2; exit 2; }
Z=$1
FIX=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
n=0
fail() { echo "FAIL [$name] $*" >&2; fails=$((fails + 1)); }
expect_rc() { # expect_rc WANT DESCRIPTION cmd...
  local want=$1 what=$2; shift 2
  "$@" >"$TMP/out" 2>&1
  local rc=$?
  [ $rc -eq "$want" ] || fail "$what: exit $rc, expected $want ($(tail -1 "$TMP/out"))"
}

# zkey_section_off FILE ID / zkey_section_end FILE ID: the byte offset of section ID's payload /
# of its end (the first section of that id; the container: magic, version, count, then id u32,
# size u64, payload)
zkey_section_walk() {
  local f=$1 want=$2 size off=12 id sz
  size=$(stat -c %s "$f")
  while [ $((off + 12)) -le "$size" ]; do
    id=$(od -An -tu4 -j "$off" -N4 "$f" | tr -d ' ')
    sz=$(od -An -tu8 -j $((off + 4)) -N8 "$f" | tr -d ' ')
    if [ "$id" = "$want" ]; then echo "$((off + 12)) $((off + 12 + sz))"; return 0; fi
    off=$((off + 12 + sz))
  done
  return 1
}
zkey_section_off() { local r; r=$(zkey_section_walk "$1" "$2") || return 1; echo "${r% *}"; }
zkey_section_end() { local r; r=$(zkey_section_walk "$1" "$2") || return 1; echo "${r#* }"; }

for name in bn128_chain bls12381_chain; do
  d="$FIX/$name"
  [ -f "$d/circuit.zkey" ] || continue
  n=$((n + 1))
  before=$fails
  o="$TMP/$name"; mkdir -p "$o"
  # deterministic r = s = 0 and the extra witnesses
  for i in "" 0 1 2; do
    w="$d/witness${i:+-$i}.wtns"; p="$d/proof_rs0${i:+-$i}.json"; pub="$d/public_rs0${i:+-$i}.json"
    [ -f "$w" ] || continue
    expect_rc 0 "prove r=s=0 $w" env ZP_TEST_FIXED_RS=1 "$Z" prove "$d/circuit.zkey" "$w" "$o/p.json" "$o/pub.json" --r 0 --s 0 --threads 1
    cmp -s "$o/p.json" "$p" || fail "proof for $w differs from $p"
    cmp -s "$o/pub.json" "$pub" || fail "public for $w differs from $pub"
  done
  # random r, s; --bin; verify paths
  expect_rc 0 "prove" "$Z" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/proof.json" "$o/public.json" \
    --r1cs "$d/circuit.r1cs" --threads 2 --bin "$o/proof.bin"
  want=128; [ "$name" = bls12381_chain ] && want=192
  [ "$(stat -c %s "$o/proof.bin" 2>/dev/null)" = "$want" ] || fail "--bin size is not $want"
  expect_rc 0 "verify vk" "$Z" verify "$d/verification_key.json" "$o/public.json" "$o/proof.json"
  grep -q "OK!" "$TMP/out" || fail "verify does not print OK!"
  expect_rc 0 "verify zkey" "$Z" verify "$d/circuit.zkey" "$o/public.json" "$o/proof.json"
  expect_rc 0 "verify snarkjs proof" "$Z" verify "$d/verification_key.json" "$d/public.json" "$d/proof.json"
  # invalid: a valid proof with another witness's public signals
  if [ -f "$d/public_rs0-1.json" ]; then
    expect_rc 1 "verify wrong public" "$Z" verify "$d/verification_key.json" "$d/public_rs0-1.json" "$o/proof.json"
  fi
  # bad input -> 2
  expect_rc 2 "verify missing file" "$Z" verify "$d/verification_key.json" "$o/nope.json" "$o/proof.json"
  echo '["1"]' > "$o/short.json"
  expect_rc 2 "verify wrong count" "$Z" verify "$d/verification_key.json" "$o/short.json" "$o/proof.json"
  expect_rc 2 "verify usage" "$Z" verify "$d/verification_key.json"
  # prove errors
  expect_rc 2 "hidden --r without ZP_TEST_FIXED_RS" "$Z" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/x.json" "$o/y.json" --r 0 --s 0
  expect_rc 2 "prove usage" "$Z" prove "$d/circuit.zkey"
  expect_rc 1 "prove missing witness" "$Z" prove "$d/circuit.zkey" "$o/nope.wtns" "$o/x.json" "$o/y.json"
  expect_rc 1 "prove witness/zkey mismatch" "$Z" prove "$d/circuit.zkey" "$FIX/bn128_poseidon2/witness.wtns" "$o/x.json" "$o/y.json"
  # a value >= r (the last one; checked on the pool): named with its index and the file
  cp "$d/witness.wtns" "$o/noncanon.wtns"
  head -c 32 /dev/zero | tr '\0' '\377' | dd of="$o/noncanon.wtns" bs=1 seek=$(( $(stat -c %s "$o/noncanon.wtns") - 32 )) conv=notrunc 2>/dev/null
  expect_rc 1 "non-canonical witness value" "$Z" prove "$d/circuit.zkey" "$o/noncanon.wtns" "$o/x.json" "$o/y.json" --threads 2
  grep -q "noncanon.wtns: value [0-9]* is not canonical" "$TMP/out" || fail "non-canonical witness message: $(cat "$TMP/out")"
  # a coefficient entry out of range (the last one's wire = 0xffffffff): the prover opens the
  # zkey without the parser's entry scan and leaves it to the key load on the pool, which must
  # name the entry (session 17); entries: matrix, row, wire (u32 each), value (32 bytes)
  cp "$d/circuit.zkey" "$o/badcoef.zkey"
  coef_end=$(zkey_section_end "$o/badcoef.zkey" 4) || fail "no coefs section in $d/circuit.zkey"
  ncoef=$(od -An -tu4 -j "$(zkey_section_off "$o/badcoef.zkey" 4)" -N4 "$o/badcoef.zkey" | tr -d ' ')
  printf '\377\377\377\377' | dd of="$o/badcoef.zkey" bs=1 seek=$(( coef_end - 32 - 4 )) conv=notrunc 2>/dev/null
  expect_rc 1 "coefficient out of range" "$Z" prove "$o/badcoef.zkey" "$d/witness.wtns" "$o/x.json" "$o/y.json" --threads 2
  grep -q "badcoef.zkey: coefficient $((ncoef - 1)) (matrix [01], row [0-9]*, wire 4294967295) out of range" "$TMP/out" \
    || fail "bad coefficient message: $(cat "$TMP/out")"
  [ -e "$o/x.json" ] && fail "a proof was written for a bad key"
  # a B2 point off its curve (the second point's last byte): the points are checked where the
  # zkey has them, at whatever alignment its sections give them (session 18), and the error
  # names the array and the index
  cp "$d/circuit.zkey" "$o/badpt.zkey"
  b2_off=$(zkey_section_off "$o/badpt.zkey" 7) || fail "no B2 section in $d/circuit.zkey"
  case $name in bls12381*) g2=192;; *) g2=128;; esac
  printf '\001' | dd of="$o/badpt.zkey" bs=1 seek=$(( b2_off + 2 * g2 - 1 )) conv=notrunc 2>/dev/null
  expect_rc 1 "B2 point off the curve" "$Z" prove "$o/badpt.zkey" "$d/witness.wtns" "$o/x.json" "$o/y.json" --threads 2
  grep -q "badpt.zkey: pointsB2\[1\] is not a valid G2 point" "$TMP/out" || fail "bad point message: $(cat "$TMP/out")"
  [ -e "$o/x.json" ] && fail "a proof was written for a key with a bad point"
  # proving needs no ZeroMQ: libzmq is loaded at the first ZeroMQ call (cli/lazy_libs.c), so a
  # prove runs with a broken libzmq.so.5 first on the library path, and a command that talks to
  # the broker stops with the library named (exit 127, as the dynamic loader would)
  mkdir -p "$o/badlib" && : > "$o/badlib/libzmq.so.5"
  expect_rc 0 "prove without a loadable libzmq" env LD_LIBRARY_PATH="$o/badlib" "$Z" prove "$d/circuit.zkey" "$d/witness.wtns" "$o/nz.json" "$o/nzp.json"
  expect_rc 127 "status without a loadable libzmq" env LD_LIBRARY_PATH="$o/badlib" "$Z" status
  grep -q "cannot load libzmq.so.5" "$TMP/out" || fail "missing libzmq message: $(cat "$TMP/out")"
  if [ -f "$d/witness-bad.wtns" ]; then
    expect_rc 1 "bad witness" "$Z" prove "$d/circuit.zkey" "$d/witness-bad.wtns" "$o/x.json" "$o/y.json" --r1cs "$d/circuit.r1cs"
    grep -q "constraint [0-9]" "$TMP/out" || fail "bad witness message lacks the constraint: $(cat "$TMP/out")"
    expect_rc 1 "bad witness without r1cs (pairing self-check)" "$Z" prove "$d/circuit.zkey" "$d/witness-bad.wtns" "$o/x.json" "$o/y.json"
    [ -e "$o/x.json" ] && fail "a proof was written for a bad witness"
  fi
  [ $fails -eq $before ] && echo "ok [$name]"
done
[ $n -gt 0 ] || { echo "cli_prove: no *_chain fixtures: skipped"; exit 77; }
[ $fails -eq 0 ] || { echo "cli_prove: $fails failure(s)" >&2; exit 1; }
echo "cli_prove: $n fixtures ok"
