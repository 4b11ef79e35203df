#!/usr/bin/env bash
# up_gpus.sh ZKPIPE SOURCE_ROOT - `zkpipe up --gpu-workers-per-card 2` places GPU workers by
# device: with ZP_TEST_FAKE_GPUS=2 (test hook: pretend two CUDA devices) it starts exactly four,
# with --device 0-0 0-1 1-0 1-1 for instances 0..3, says so in its log, and all four register
# with the broker (without a real device each falls back to the CPU backend by itself).
# Also: zkpipe-gpu-worker rejects a malformed --device, and --device N-K alone (systemd's
# zkpipe-gpu@N-K) registers as instance N*64+K.
. "$(dirname "$0")/lib.sh"
GPUW=$(dirname "$1")/../gpu-worker/zkpipe-gpu-worker
[ -x "$GPUW" ] || { echo "FAIL: no $GPUW" >&2; exit 1; }
for bad in x 1- 1-x -1 1-64 1-2-3 "1 "; do
  "$GPUW" --device "$bad" --help >/dev/null 2>&1 && { echo "FAIL: --device '$bad' accepted" >&2; exit 1; }
done
"$GPUW" --device 1-2 --help >/dev/null || { echo "FAIL: --device 1-2 refused" >&2; exit 1; }
"$GPUW" --backends | grep -qx 'cuda cpu\|cpu' || { echo "FAIL: --backends" >&2; exit 1; }

export ZP_TEST_FAKE_GPUS=2
ipc_init upgpus "$1" "$2" --gpu-workers-per-card 2 --heartbeat-ms 200
unset ZP_TEST_FAKE_GPUS
ipc_wait_for '[.workers[] | select(.role == "gpu")] | length == 4' 60
for _ in $(seq 1 200); do grep -q "all 7 processes ready" "$IPC_DIR/up.log" && break; sleep 0.05; done
grep -q "all 7 processes ready" "$IPC_DIR/up.log" || ipc_fail "up did not get READY=1 from all 7 processes"
grep -q "2 CUDA device(s) (ZP_TEST_FAKE_GPUS=2 (test hook)): starting 4 gpu worker(s), several per device" \
  "$IPC_DIR/up.log" || ipc_fail "no log line about the 2 devices x 2 workers"
# the worker rewrites its argv (process title): read what up started from up's log, and tie
# each line to a registered worker by pid and instance
got=""
for i in 0 1 2 3; do
  line=$(grep -o "started gpu #$i (device [0-9-]*): pid [0-9]*" "$IPC_DIR/up.log" | tail -1)
  [ -n "$line" ] || ipc_fail "up did not log starting gpu #$i"
  pid=${line##* }
  dev=$(echo "$line" | sed 's/.*(device \([0-9-]*\)).*/\1/')
  [ "$(ipc_jq "[.workers[] | select(.role == \"gpu\" and .pid == $pid and .instance == $i)] | length")" = 1 ] ||
    ipc_fail "gpu #$i (pid $pid) is not registered with the broker"
  got="$got $i:$dev"
done
[ "$got" = " 0:0-0 1:0-1 2:1-0 3:1-1" ] || ipc_fail "gpu workers (instance:device) are$got"
[ "$(ipc_jq '[.workers[] | select(.role == "synth")] | length')" = 1 ] || ipc_fail "not one synth"
[ "$(ipc_jq '[.workers[] | select(.role == "final")] | length')" = 1 ] || ipc_fail "not one finalizer"
ipc_log "gpu workers (instance:device):$got"
# a worker started as systemd's zkpipe-gpu@2-3 would be (`--device %i`, no --instance):
# device 2, instance 2*64+3
"$GPUW" --arena "$IPC_ARENA" --device 2-3 --backend cpu --heartbeat-ms 200 >"$IPC_DIR/gpu23.log" 2>&1 &
W=$!
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid == $W and .instance == 131)] | length == 1" 60
kill -TERM $W; wait $W || ipc_fail "gpu worker 2-3 did not exit cleanly"
echo "ipc up_gpus: OK"
