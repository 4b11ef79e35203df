#!/usr/bin/env bash
# stage_lease.sh ZKPIPE SOURCE_ROOT - issue 8 defect 6 (worker side): an ASSIGN with a lease
# deadline whose work thread hangs (held by the test hook, as a stuck mount or a device that
# stopped answering would) makes the stage stop heartbeating and exit with status 4 for its
# supervisor to restart it; it never reports the hung task. A task that finishes within its
# lease is reported as usual and the stage carries on.
. "$(dirname "$0")/stage_lib.sh"
stage_init lease "$1" "$2"
export ZP_TEST_HOLD_DIR=$ST_DIR/hold
touch "$ST_DIR/hold/hold-synth"
st_peer peer.log lease 1500 "$FIX/bn128_chain/circuit.zkey"
st_stage synth.log "$SYNTH" --arena "$ST_ARENA"
st_wait_exit "$SPID" 120
[ "$ST_RC" = 4 ] || st_fail "the stage exited with $ST_RC, expected 4 (lease overrun)"
grep -q "past the task's lease" "$ST_DIR/synth.log" || st_fail "no lease message in the stage's log"
st_wait_exit "$PEERPID" 120
[ "$ST_RC" = 0 ] || st_fail "fake broker: exit $ST_RC"

rm -f "$ST_DIR/hold/hold-synth"
st_peer peer-ok.log lease-ok 600000 "$FIX/bn128_chain/circuit.zkey"
st_stage synth-ok.log "$SYNTH" --arena "$ST_ARENA"
st_wait_exit "$PEERPID" 120
[ "$ST_RC" = 0 ] || st_fail "fake broker (lease-ok): exit $ST_RC"
kill -0 "$SPID" 2>/dev/null || st_fail "the stage exited although its task was within the lease"
kill -TERM "$SPID"; st_wait_exit "$SPID" 60
[ "$ST_RC" = 0 ] || st_fail "the stage's clean stop exited $ST_RC"
echo "ipc stage_lease: OK"
