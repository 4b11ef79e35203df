#!/usr/bin/env bash
# bench_vectors.sh ZKPIPE MKVECS [POWER [N [ROUNDS]]] - the group's cost of a pre-synthesized
# partition (issue 30) against a witness partition on the same circuit: an INSECURE BLS12-381
# test key of 2^POWER (zkpipe testkey), N witnesses and their vectors files (tests/mkvecs.c),
# one `zkpipe up` (CPU backend); each round submits a job of the N witnesses and a job of the N
# vectors files, alternately, and times submit..await. Prints JSON: best-of-ROUNDS ms per job
# and per partition for each, their ratio, the synthesizer's mean time per partition for each
# (from zkpipe trace), and the vectors file's bytes per partition (what the synthesizer copies
# into the slot). Every proof of both jobs verifies. No assertion on speed.
# Registered as test 'bench_vectors' (suite slow) at 2^10, N 2.
set -euo pipefail
Z=$1 MK=$2 P=${3:-16} N=${4:-4} R=${5:-3}
T=$(mktemp -d /tmp/zp-bench-vectors.XXXXXX)
chmod 700 "$T"
export ZP_RUNTIME_DIR=$T/run ZP_STATE_DIR=$T/state
ARENA=bvec-$$
cleanup() {
  [ -n "${UP:-}" ] && kill -TERM "$UP" 2>/dev/null && wait "$UP" 2>/dev/null || true
  rm -f /dev/shm/zkpipe-"$(id -u)"-"$ARENA" /dev/shm/zkpipe-"$(id -u)"-"$ARENA"-key-*
  rm -rf "$T"
}
trap cleanup EXIT
"$Z" testkey --curve bls12-381 --power "$P" --publics 1 --witnesses "$N" --seed 7 --no-bellman --out "$T/k" \
  --insecure-known-tau >/dev/null 2>&1
W=()
V=()
for i in $(seq 0 $((N - 1))); do
  w=$T/k/witness-$i.wtns
  [ "$N" = 1 ] && w=$T/k/witness.wtns
  W+=("$w")
  "$MK" "$T/k/circuit.zkey" "$w" "$T/v$i.vecs"
  V+=("$T/v$i.vecs")
done
"$Z" up --arena "$ARENA" --slots "$N" --max-domain $((1 << P)) --max-vars $(((1 << P) + 1024)) >"$T/up.log" 2>&1 &
UP=$!
for _ in $(seq 1 600); do "$Z" status >/dev/null 2>&1 && break; sleep 0.1; done
run() { # run NAME FILES... -> ms on stdout
  local name=$1; shift
  local t0 t1 j
  t0=$(date +%s%N)
  j=$("$Z" submit --zkey "$T/k/circuit.zkey" "$@")
  "$Z" await "$j" --timeout 1200 --out "$T/out-$name" >/dev/null 2>&1
  t1=$(date +%s%N)
  for i in $(seq 0 $((N - 1))); do
    "$Z" verify "$T/k/verification_key.json" "$T/out-$name/public-$i.json" "$T/out-$name/proof-$i.json" >/dev/null
  done
  echo $(((t1 - t0) / 1000000))
}
bw=999999999 bv=999999999
for r in $(seq 1 "$R"); do
  a=$(run w$r "${W[@]}"); [ "$a" -lt "$bw" ] && bw=$a
  b=$(run v$r "${V[@]}"); [ "$b" -lt "$bv" ] && bv=$b
done
vb=$(stat -c %s "${V[0]}")
printf '{"power": %s, "partitions": %s, "rounds": %s, "wtns_job_ms": %s, "vectors_job_ms": %s, "wtns_ms_per_part": %s, "vectors_ms_per_part": %s, "vectors_over_wtns": %s, "vectors_file_bytes": %s}\n' \
  "$P" "$N" "$R" "$bw" "$bv" "$(echo "scale=1; $bw / $N" | bc)" "$(echo "scale=1; $bv / $N" | bc)" \
  "$(echo "scale=3; $bv / $bw" | bc)" "$vb"
