#!/usr/bin/env bash
# bench_c2_group.sh ZKPIPE BENCH_C2 [POWER [THREADS [REPS]]] - libzkpipe_c2 through a process
# group vs in-process vs the direct prover vs `zkpipe prove` on one 2^POWER test circuit
# (tests/bench_c2.c with ZP_BENCH_C2_GROUP=1): starts `zkpipe up` (CPU backend, its finalizer
# with the fixed-r,s test hook r = 5, s = 9 so that every group proof is compared byte for byte
# with the direct one), runs bench_c2, prints its JSON (group_overhead_pct: the group's time per
# partition over the direct prover's; bytes copied with and without the allocator). No speed
# assertion. Registered as test 'bench_c2_group' (suite slow) at 2^12.
set -euo pipefail
Z=$1 B=$2 P=${3:-16} TH=${4:-2} R=${5:-3}
T=$(mktemp -d /tmp/zp-bench-c2g.XXXXXX)
chmod 700 "$T"
export ZP_RUNTIME_DIR=$T/run ZP_STATE_DIR=$T/state
ARENA=bc2g-$$
cleanup() {
  [ -n "${UP:-}" ] && kill -TERM "$UP" 2>/dev/null && wait "$UP" 2>/dev/null || true
  rm -f /dev/shm/zkpipe-"$(id -u)"-"$ARENA" /dev/shm/zkpipe-"$(id -u)"-"$ARENA"-key-*
  rm -rf "$T"
}
trap cleanup EXIT
ZP_TEST_FIXED_RS=1 ZP_TEST_R=5 ZP_TEST_S=9 "$Z" up --arena "$ARENA" --slots 2 --max-domain $((1 << P)) --max-vars $(((1 << P) + 1024)) \
  --threads "$TH" >"$T/up.log" 2>&1 &
UP=$!
for _ in $(seq 1 600); do "$Z" status >/dev/null 2>&1 && break; sleep 0.1; done
ZP_BENCH_C2_GROUP=1 ZP_BENCH_C2_GROUP_RS=1 "$B" "$P" "$TH" "$R" "$Z"
