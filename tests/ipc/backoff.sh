#!/usr/bin/env bash
# backoff.sh ZKPIPE SOURCE_ROOT - restart backoff in `zkpipe up` (issue 8 item 9): a stage that
# had started cleanly (READY=1) and is killed comes back at once, however often that happens;
# only a crash loop (dying before ready) backs off, 200 ms doubling. Checked in up's log, not
# by timing anything.
. "$(dirname "$0")/lib.sh"
ipc_init backoff "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 100
for k in 1 2 3; do
  G=$(ipc_worker_pid gpu)
  for _ in $(seq 1 600); do grep -q "gpu #0 (cpu backend) (pid $G) ready" "$IPC_DIR/up.log" && break; sleep 0.05; done
  grep -q "gpu #0 (cpu backend) (pid $G) ready" "$IPC_DIR/up.log" || ipc_fail "gpu worker $G never ready"
  kill -9 "$G"
  ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length == 1" 60
  grep -q "gpu #0 (cpu backend) (pid $G) killed by signal 9 after [0-9.]* s; restarting in 0 ms" "$IPC_DIR/up.log" ||
    { grep "pid $G" "$IPC_DIR/up.log" >&2; ipc_fail "kill $k: a cleanly started gpu worker was not restarted at once"; }
done
ipc_log "3 kills of a ready worker: 3 immediate restarts"

# a crash loop: every stage dies at start (a --preload key that does not exist)
D=$(mktemp -d /tmp/zkpipe-ipc-backoff-loop.XXXXXX)
ZP_RUNTIME_DIR=$D "$ZKPIPE" up --arena "backoff-loop-$$" --preload "$D/missing.zkey" >"$D/up.log" 2>&1 &
L=$!
for _ in $(seq 1 600); do grep -q "synth #0 (pid [0-9]*) exited with status [0-9]* after .* before it was ready (crash loop: backing off); restarting in 800 ms" "$D/up.log" && break; sleep 0.05; done
kill -TERM $L; wait $L
for ms in 200 400 800; do
  grep -q "synth #0 (pid [0-9]*) exited with status [0-9]* after [0-9.]* s before it was ready (crash loop: backing off); restarting in $ms ms" "$D/up.log" ||
    { cat "$D/up.log" >&2; rm -rf "$D"; ipc_fail "crash loop: no $ms ms backoff"; }
done
rm -rf "$D"
ipc_log "crash loop backs off 200, 400, 800 ms"
echo "ipc backoff: OK"
