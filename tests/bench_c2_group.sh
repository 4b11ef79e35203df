#!/usr/bin/env bash
# bench_c2_group.sh ZKPIPE BENCH_C2 [POWER [THREADS [REPS]]] - libzkpipe_c2 through a process
# group vs in-process vs the direct prover vs `zkpipe prove` on one 2^POWER test circuit
# (tests/bench_c2.c with ZP_BENCH_C2_GROUP=1): starts `zkpipe up` (CPU backend, no test hook:
# the caller's r = 5, s = 9 reach its finalizer, so every group proof is compared byte for byte
# with the direct one), runs bench_c2 (methods alternated per round, medians), prints its JSON
# (group_overhead_pct: the group's median time per partition over the direct prover's; bytes
# copied with and without the allocator; load averages), then the group's own per-partition
# stage times (zkpipe metrics: zkpipe_stage_seconds sum / count per stage, warm-up included) as
# a second JSON line. No speed assertion. Registered as test 'bench_c2_group' (suite slow) at 2^12.
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
unset ZP_TEST_FIXED_RS ZP_TEST_R ZP_TEST_S
"$Z" up --arena "$ARENA" --slots 2 --max-domain $((1 << P)) --max-vars $(((1 << P) + 1024)) \
  --threads "$TH" >"$T/up.log" 2>&1 &
UP=$!
for _ in $(seq 1 600); do "$Z" status >/dev/null 2>&1 && break; sleep 0.1; done
ZP_BENCH_C2_GROUP=1 "$B" "$P" "$TH" "$R" "$Z"
"$Z" metrics | awk '
  /^zkpipe_stage_seconds_sum\{/ { match($0, /stage="[a-z]+"/); st = substr($0, RSTART + 7, RLENGTH - 8); sum[st] = $2 }
  /^zkpipe_stage_seconds_count\{/ { match($0, /stage="[a-z]+"/); st = substr($0, RSTART + 7, RLENGTH - 8); cnt[st] = $2 }
  END { printf "{\"group_stage_ms_per_partition\": {"; sep = "";
        for (st in sum) { printf "%s\"%s\": %.1f", sep, st, cnt[st] ? 1000 * sum[st] / cnt[st] : -1; sep = ", " }
        print "}}" }'
