#!/usr/bin/env bash
# stage_results.sh ZKPIPE SOURCE_ROOT - issue 8 defect 5: a DONE or FAIL is never dropped. The
# fake broker stops reading while it hands a synthesizer thousands of assignments that fail at
# once; the stage's socket reaches its high-water mark; once the broker reads again, every FAIL
# must arrive exactly once (before the fix they were sent with DONTWAIT and lost at the mark).
. "$(dirname "$0")/stage_lib.sh"
stage_init results "$1" "$2"
N=${ZP_STALL_N:-6000}
st_peer peer.log stalled "$N" "$FIX/bn128_chain/circuit.zkey"
ZP_LOG=info st_stage synth.log "$SYNTH" --arena "$ST_ARENA" --credits 2 --heartbeat-ms 50
st_wait_exit "$PEERPID" 300
[ "$ST_RC" = 0 ] || st_fail "fake broker: not every FAIL arrived (exit $ST_RC)"
grep -q "high-water mark" "$ST_DIR/synth.log" ||
  st_fail "the stage never hit the high-water mark: the test did not exercise the stalled path (raise ZP_STALL_N)"
grep -q "cannot report\|not delivered" "$ST_DIR/synth.log" && st_fail "the stage says it lost results"
kill -TERM "$SPID"; st_wait_exit "$SPID" 60
cat "$ST_DIR/peer.log" >&2
echo "ipc stage_results: OK"
