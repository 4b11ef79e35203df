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
echo "ipc stage_device: OK"
