#!/usr/bin/env bash
# msm_calibrate.sh ZKPIPE MERGE - `zkpipe msm calibrate` end to end (issue 31, session 20): a
# small run writes a format 4 table (window rows and kp rows: K / P offsets as ratios) that
# `zkpipe msm check` loads; --kp-only writes kp rows alone; scripts/msm-calib-merge merges two
# runs into a loadable table and into the C initialisers; `zkpipe msm which` reads the file
# named by ZKPIPE_MSM_CALIB; a bad kp row is refused naming the file and line.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: msm_calibrate.sh ZKPIPE MERGE" >&2; exit 2; }
Z=$1
MERGE=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL $*" >&2; fails=$((fails + 1)); }

for r in a b; do
  "$Z" msm calibrate --sizes "8 10" --groups g1 --threads 2 --out "$TMP/$r.txt" 2>"$TMP/$r.log" ||
    fail "calibrate run $r: exit $? ($(tail -1 "$TMP/$r.log"))"
done
head -1 "$TMP/a.txt" | grep -qx "zkpipe-msm-calib 4" || fail "header: $(head -1 "$TMP/a.txt")"
grep -qx "path vector\|path scalar" "$TMP/a.txt" || fail "no path line"
# window rows: both curves, both shapes, both thread classes, endo and plain, 2^8 and 2^10
nw=$(grep -cE '^g1 (bn254|bls12_381) (uniform|witness) (8|10) [12] (endo|plain) -?[01] [0-9.]+ ' "$TMP/a.txt")
[ "$nw" -ge 32 ] || fail "window rows: $nw, want >= 32"
# kp rows: K halved / doubled for every method and class, P doubled with two threads
nk=$(grep -cE '^kp g1 (bn254|bls12_381) (uniform|witness) (8|10) [12] (endo|plain) -?[01] -?[01] -?[01] [0-9.]+ ' "$TMP/a.txt")
np=$(grep -cE '^kp g1 [a-z0-9_]+ [a-z]+ (8|10) 2 [a-z]+ -?[01] 0 1 ' "$TMP/a.txt")
[ "$nk" -ge 32 ] || fail "kp rows: $nk, want >= 32"
[ "$np" -ge 8 ] || fail "two-thread P-doubled kp rows: $np, want >= 8"
"$Z" msm check "$TMP/a.txt" >"$TMP/out" 2>&1 || fail "msm check a.txt: $(cat "$TMP/out")"

"$Z" msm calibrate --kp-only --sizes 8 --groups g2 --threads 2 --out "$TMP/k.txt" 2>"$TMP/k.log" ||
  fail "calibrate --kp-only: exit $? ($(tail -1 "$TMP/k.log"))"
grep -qE '^g[12] ' "$TMP/k.txt" && fail "--kp-only wrote window rows"
grep -qE '^kp g2 bn254 uniform 8 1 ' "$TMP/k.txt" || fail "--kp-only: no G2 BN254 one-thread kp row"
"$Z" msm check "$TMP/k.txt" >"$TMP/out" 2>&1 || fail "msm check k.txt: $(cat "$TMP/out")"

"$MERGE" "$TMP/a.txt" "$TMP/b.txt" >"$TMP/m.txt" 2>"$TMP/merge.log" || fail "merge: $(cat "$TMP/merge.log")"
"$Z" msm check "$TMP/m.txt" >"$TMP/out" 2>&1 || fail "msm check merged: $(cat "$TMP/out")"
# every run's kp candidates (each run measures K / P at the window it found best: the runs'
# windows may differ, the merged table keeps them all and uses those at its window)
for f in a b; do
  grep '^kp ' "$TMP/$f.txt" | cut -d' ' -f1-10 | while read -r k; do
    grep -qF "$k " "$TMP/m.txt" || echo "$k"
  done >"$TMP/missing.$f"
  [ -s "$TMP/missing.$f" ] && fail "merged table lacks run $f's kp rows: $(head -2 "$TMP/missing.$f")"
done
# the merged ratio is the higher of the two runs'
key=$(grep '^kp ' "$TMP/a.txt" | cut -d' ' -f1-10 | while read -r k; do
  grep -qF "$k " "$TMP/b.txt" && { echo "$k "; break; }
done)
ra=$(grep -F "$key" "$TMP/a.txt" | awk '{print $11}')
rb=$(grep -F "$key" "$TMP/b.txt" | awk '{print $11}')
rm=$(grep -F "$key" "$TMP/m.txt" | awk '{print $11}')
if [ -n "$key" ]; then   # (both runs took the same window for at least one method: nearly always)
  python3 -c "import sys; a,b,m=map(float,sys.argv[1:]); sys.exit(0 if abs(max(a,b)-m) < 1e-9 else 1)" "$ra" "$rb" "$rm" ||
    fail "merged ratio $rm for '$key', runs $ra / $rb"
fi
"$MERGE" --kp-table "$TMP/a.txt" "$TMP/b.txt" >"$TMP/kp.h" || fail "--kp-table: exit $?"
grep -qE '^    \{1, [01], [01], (8|10), [12], [01], -?[01], -?[01], -?[01], [0-9.]+f\},' "$TMP/kp.h" ||
  fail "--kp-table: no initialiser rows"
"$MERGE" --c-table "$TMP/a.txt" "$TMP/b.txt" >"$TMP/c.h" || fail "--c-table: exit $?"
grep -q '^    {1, ' "$TMP/c.h" || fail "--c-table: no initialiser rows"
grep -q '^    {1, [01], [01], [0-9]*, [12], [01], -\?[01], -\?[01], -\?[01], ' "$TMP/c.h" && fail "--c-table printed kp rows"
ZKPIPE_MSM_CALIB="$TMP/m.txt" "$Z" msm which >"$TMP/which" 2>&1 || fail "msm which: $(tail -1 "$TMP/which")"
grep -q "$TMP/m.txt" "$TMP/which" || fail "msm which does not name the file"

# a bad kp row: refused, the file and line named
printf 'zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 0 0 0.9\n' >"$TMP/bad.txt"
"$Z" msm check "$TMP/bad.txt" >"$TMP/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "bad kp row: exit $rc, expected 2"
grep -q "bad.txt:3: K and P offsets both 0" "$TMP/out" || fail "bad kp row message: $(cat "$TMP/out")"

if [ $fails -ne 0 ]; then
  echo "msm_calibrate: $fails failed" >&2
  exit 1
fi
echo "msm_calibrate: ok"
