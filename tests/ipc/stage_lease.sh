#!/usr/bin/env bash
# stage_lease.sh ZKPIPE SOURCE_ROOT - issue 8 defect 6 (worker side): an ASSIGN with a lease
# deadline whose work thread hangs (held by the test hook, as a stuck mount or a device that
# stopped answering would) makes the stage stop heartbeating and exit with status 4 for its
# supervisor to restart it; it never reports the hung task.
. "$(dirname "$0")/stage_lib.sh"
stage_init lease "$1" "$2"
touch "$ST_DIR/hold/hold-synth"
"$PEER" "$ST_DIR/run" lease 1500 "$FIX/bn128_chain/circuit.zkey" >"$ST_DIR/peer.log" 2>&1 &
PEERPID=$!; ST_PIDS="$PEERPID"
st_wait "[ -S '$ST_DIR/run/broker.sock' ]" 30 || st_fail "the fake broker did not bind"
ZP_TEST_HOLD_DIR=$ST_DIR/hold "$SYNTH" --runtime-dir "$ST_DIR/run" --arena "$ST_ARENA" --heartbeat-ms 100 \
  --no-key-store >"$ST_DIR/synth.log" 2>&1 &
SPID=$!; ST_PIDS="$PEERPID $SPID"
st_wait_exit "$SPID" 120
[ "$ST_RC" = 4 ] || st_fail "the stage exited with $ST_RC, expected 4 (lease overrun)"
grep -q "past the task's lease" "$ST_DIR/synth.log" || st_fail "no lease message in the stage's log"
st_wait_exit "$PEERPID" 120
[ "$ST_RC" = 0 ] || st_fail "fake broker: exit $ST_RC"
# a task that finishes within its lease is reported as usual and the stage carries on
rm -f "$ST_DIR/run/broker.sock" "$ST_DIR/hold/hold-synth"
"$PEER" "$ST_DIR/run" lease-ok 600000 "$FIX/bn128_chain/circuit.zkey" >"$ST_DIR/peer-ok.log" 2>&1 &
PEERPID=$!; ST_PIDS="$PEERPID"
st_wait "[ -S '$ST_DIR/run/broker.sock' ]" 30 || st_fail "the fake broker did not bind"
ZP_TEST_HOLD_DIR=$ST_DIR/hold "$SYNTH" --runtime-dir "$ST_DIR/run" --arena "$ST_ARENA" --heartbeat-ms 100 \
  --no-key-store >"$ST_DIR/synth-ok.log" 2>&1 &
SPID=$!; ST_PIDS="$PEERPID $SPID"
st_wait_exit "$PEERPID" 120
[ "$ST_RC" = 0 ] || st_fail "fake broker (lease-ok): exit $ST_RC"
kill -0 "$SPID" 2>/dev/null || st_fail "the stage exited although its task was within the lease"
kill -TERM "$SPID"; st_wait_exit "$SPID" 60
[ "$ST_RC" = 0 ] || st_fail "the stage's clean stop exited $ST_RC"
echo "ipc stage_lease: OK"
