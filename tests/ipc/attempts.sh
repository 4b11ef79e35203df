#!/usr/bin/env bash
# attempts.sh ZKPIPE SOURCE_ROOT - a partition whose GPU worker dies under it 3 times
# (ZP_MAX_DEATHS=3: deaths are worker-class failures, not charged as attempts, but bounded)
# fails with the collected reasons; the job reports it; the slot comes back (out of
# quarantine once the dead worker is replaced); the next job still proves. Then: four SIGTERMs of the GPU worker holding a partition (handed
# back unstarted each time) spend no attempt, and the partition proves.
. "$(dirname "$0")/lib.sh"
export ZP_MAX_DEATHS=3
ipc_init attempts "$1" "$2" --slots 2 --max-domain 1024 --max-attempts 3
F=$FIX/bn128_chain
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --request-id doomed $F/witness-0.wtns)
for k in 1 2 3; do
  ipc_wait_for "(.counters.deaths.gpu == $((k - 1))) and .slots.PROVING == 1 and ([.workers[] | select(.role == \"gpu\" and .held == 1)] | length) == 1"
  G=$(ipc_worker_pid gpu)
  ipc_log "attempt $k: kill -9 gpu worker $G"
  kill -9 "$G"
done
"$ZKPIPE" await "$J" --timeout 120 >/dev/null 2>"$IPC_DIR/err"; rc=$?
cat "$IPC_DIR/err" >&2
[ $rc = 1 ] || ipc_fail "await exited $rc, expected 1"
grep -q "partition 0 failed after 1 attempt" "$IPC_DIR/err" || ipc_fail "a worker death was charged as an attempt"
[ "$(grep -o 'gpu worker pid' "$IPC_DIR/err" | wc -l)" = 3 ] || ipc_fail "the three reasons are not all listed"
grep -q "worker class, not charged" "$IPC_DIR/err" || ipc_fail "the reasons do not name the failure class"
grep -q "gave up: 3 workers died" "$IPC_DIR/err" || ipc_fail "no 'gave up' reason"
[ "$(ipc_jq '.counters.failures.worker')" -ge 3 ] || ipc_fail "deaths not counted as worker-class failures"
ipc_release gpu
ipc_all_free
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id next $F/witness-1.wtns)
"$ZKPIPE" await "$J2" --timeout 120 --out "$IPC_DIR/out" >/dev/null || ipc_fail "the next job failed"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 1
# work handed back unstarted (SIGTERM: the worker revokes what it holds and shuts down) spends
# no attempt: four clean stops of the GPU worker holding the partition do not fail it (max 3).
# The broker goes by FAIL.unstarted / FAIL.stopping, not by the message text.
ipc_hold gpu
J3=$(ipc_submit --zkey $F/circuit.zkey --request-id stopped $F/witness-2.wtns)
for k in 1 2 3 4; do
  ipc_wait_for ".slots.PROVING == 1 and ([.workers[] | select(.role == \"gpu\" and .held == 1)] | length) == 1"
  G=$(ipc_jq '[.workers[] | select(.role == "gpu" and .held == 1)][0].pid')
  ipc_log "stop $k: SIGTERM gpu worker $G"
  kill -TERM "$G"
  ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length >= 1" 60
done
ipc_release gpu
"$ZKPIPE" await "$J3" --timeout 120 --out "$IPC_DIR/out3" >/dev/null || ipc_fail "handed-back work was charged attempts"
ipc_verify_all "$IPC_DIR/out3" $F/verification_key.json 1
grep -q "handed back unstarted" "$IPC_DIR/up.log" || ipc_fail "no work was handed back unstarted"
echo "ipc attempts: OK"
