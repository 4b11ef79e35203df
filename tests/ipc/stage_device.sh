#!/usr/bin/env bash
# stage_device.sh ZKPIPE SOURCE_ROOT - issue 8 defect 7 / issue 11 item 1 (worker side): a device
# error (ZP_EDEVICE injected into the backend wrapper's load_key, CPU backend) ends in a FAIL of
# class DEVICE for that task, the next task handed back unstarted, and the worker's exit with
# status 3 so that its supervisor restarts it clean (prove_g1 goes through the same rule,
# zp_bk_fatal, in the same wrapper). Issue 11 item 9: host_register runs at start, before HELLO,
# so a device error there exits 3 before the worker ever says HELLO (a clean restart, no task
# lost); a non-device registration failure falls back to pageable copies (tests/ipc/pin.sh).
. "$(dirname "$0")/stage_lib.sh"
stage_init device "$1" "$2"
for op in load_key; do
  st_peer peer-$op.log device "$ST_ARENA-$op" "$FIX/bn128_chain/circuit.zkey"
  ZP_TEST_FAULT=$op=EDEVICE st_stage gpu-$op.log "$GPU" --backend cpu --arena "$ST_ARENA-$op" --credits 2
  GPID=$SPID
  st_wait_exit "$GPID" 120
  [ "$ST_RC" = 3 ] || st_fail "$op: the worker exited with $ST_RC, expected 3 (device failure)"
  st_wait_exit "$PEERPID" 60
  [ "$ST_RC" = 0 ] || st_fail "$op: fake broker: exit $ST_RC"
  grep -q "device failure" "$ST_DIR/gpu-$op.log" || st_fail "$op: the worker did not log the device failure"
  st_log "$op: DEVICE-class FAIL, next task unstarted, exit 3"
done
op=host_register
st_peer peer-$op.log device "$ST_ARENA-$op" "$FIX/bn128_chain/circuit.zkey"
ZP_TEST_FAULT=$op=EDEVICE st_stage gpu-$op.log "$GPU" --backend cpu --arena "$ST_ARENA-$op" --credits 2
GPID=$SPID
st_wait_exit "$GPID" 120
[ "$ST_RC" = 3 ] || st_fail "$op: the worker exited with $ST_RC, expected 3 (device failure at start)"
grep -q "host_register of the arena .* failed: .*a device error" "$ST_DIR/gpu-$op.log" || st_fail "$op: no clear log line for the failed registration"
grep -q "device failure before HELLO" "$ST_DIR/gpu-$op.log" || st_fail "$op: the worker did not log the device failure before HELLO"
grep -q "connecting to" "$ST_DIR/gpu-$op.log" && st_fail "$op: the worker said HELLO despite the failed registration"
kill "$PEERPID" 2>/dev/null; wait "$PEERPID" 2>/dev/null
grep -q "HELLO from" "$ST_DIR/peer-$op.log" && st_fail "$op: the fake broker got a HELLO"
st_log "$op: device error at start: clear log line, exit 3 before HELLO"
# a new broker epoch (the arena replaced after HELLO): the loop registers the new arena before
# the task runs; the task registers nothing (the key is preloaded)
Z=$FIX/bn128_chain/circuit.zkey
st_peer peer-epoch.log epoch "$ST_ARENA-epoch" "$Z"
st_stage gpu-epoch.log "$GPU" --backend cpu --arena "$ST_ARENA-epoch" --preload "$Z"
GPID=$SPID
st_wait_exit "$PEERPID" 120
[ "$ST_RC" = 0 ] || st_fail "epoch: fake broker: exit $ST_RC"
kill -TERM "$GPID"; st_wait_exit "$GPID" 60
[ "$ST_RC" = 0 ] || st_fail "epoch: the worker exited with $ST_RC"
G=$ST_DIR/gpu-epoch.log
grep -q "new epoch .*: arena .* opened by the loop before its tasks" "$G" || st_fail "epoch: the loop did not open the new arena"
[ "$(grep -c 'registered with the cpu backend .*(before tasks)' "$G")" = 2 ] || st_fail "epoch: expected 2 arena registrations outside tasks"
grep -q "inside a task" "$G" && st_fail "epoch: a task had to register"
grep -q "host registrations: 2 arena(s) outside tasks, 0 inside tasks" "$G" || st_fail "epoch: counters"
st_log "epoch: new arena registered on the loop thread, 0 in tasks"
echo "ipc stage_device: OK"
