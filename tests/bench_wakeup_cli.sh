#!/usr/bin/env bash
# bench_wakeup_cli.sh ZKPIPE - `zkpipe bench wakeup` runs (a short run: 200 sleeps of 200 us, 1
# spinner) and ends with one JSON line holding the three tiers (FIFO null where not permitted,
# never where root runs it), each p50 <= p99 <= max; bad options exit 2 naming the option.
# Checks the bench's shape, never its speed.
. "$(dirname "$0")/cli_lib.sh"
cli_init bench_wakeup_cli.sh "$@"
"$Z" bench wakeup --wakes 200 --sleep-us 200 --spinners 1 --json >"$T/out" 2>"$T/err" || fail "exit $?: $(cat "$T/err")"
python3 - "$T/out" "$(id -u)" <<'PY' || fail "JSON: $(cat "$T/out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
r = json.loads(lines[-1])
assert r['bench'] == 'wakeup' and r['wakes'] == 200 and r['sleep_us'] == 200 and r['spinners'] == 1, r
for t in ('default', 'slice', 'fifo'):
    v = r[t + '_ms']
    if v is None:
        assert t != 'default', 'the default tier always runs'
        assert not (t == 'fifo' and sys.argv[2] == '0'), 'root may always use FIFO'
        continue
    assert 0 <= v['p50'] <= v['p99'] <= v['max'], (t, v)
PY
grep -q "^   default  p50" "$T/err" || fail "no human-readable line for the default tier: $(cat "$T/err")"
"$Z" bench wakeup --nice 20 >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--nice '20'" "$T/err" || fail "--nice 20: exit $rc, $(cat "$T/err")"
"$Z" bench wakeup --wakes >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--wakes" "$T/err" || fail "--wakes without a value: exit $rc, $(cat "$T/err")"
"$Z" bench wakeup --frobnicate >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "usage" "$T/err" || fail "unknown option: exit $rc"
cli_done bench_wakeup_cli
