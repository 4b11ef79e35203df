#!/usr/bin/env bash
# notify.sh ZKPIPE SOURCE_ROOT - service-manager notifications (proto/notify.c, the loop in
# stage/stage_loop.c, cli/up.c) end to end, with real processes and a stand-in for systemd's socket
# (notify_recv.py, which names each sender by SCM_CREDENTIALS):
#  1. `zkpipe up` under NOTIFY_SOCKET + WATCHDOG_USEC: READY=1 once every child is up, STATUS=,
#     WATCHDOG=1 pings, STOPPING=1 on SIGTERM (checked at the end);
#  2. a finalizer started by hand on a path socket with WATCHDOG_USEC=400000: READY=1 (after its
#     HELLO reached the broker), then at least two WATCHDOG=1, STOPPING=1 after SIGTERM, exit 0;
#  3. a synthesizer on an abstract socket (@name) whose WATCHDOG_PID names another process:
#     READY=1 and STATUS=, but no WATCHDOG=1; STOPPING=1 after SIGTERM;
#  4. up as the children's service manager: a synthesizer that stops answering (SIGSTOP)
#     misses its watchdog, up kills it (SIGABRT, then SIGKILL) and starts a new one.
. "$(dirname "$0")/lib.sh"
N=$(mktemp -d /tmp/zkpipe-notify.XXXXXX)
RECV="$(dirname "$0")/notify_recv.py"
command -v python3 >/dev/null || ipc_skip "python3 not installed"
RPIDS=""
start_recv() {   # ADDR LOG: a receiver that cannot outlive the test by more than 10 minutes
  timeout 600 python3 "$RECV" "$1" "$2" & RPIDS="$RPIDS $!"
  for _ in $(seq 1 200); do grep -q LISTENING "$2" 2>/dev/null && return 0; sleep 0.05; done
  ipc_fail "notify receiver on $1 did not start"
}
# count lines "<pid> <t> <msg>" of log $1 from pid $2 matching message regex $3
nlines() { awk -v p="$2" -v re="^($3)\$" '$1 == p { m = $0; sub(/^[^ ]+ [^ ]+ /, "", m); if (m ~ re) n++ } END { print n + 0 }' "$1"; }
# line number of the first match (0 = none)
nfirst() { awk -v p="$2" -v re="^($3)\$" '$1 == p { m = $0; sub(/^[^ ]+ [^ ]+ /, "", m); if (m ~ re) { print NR; f = 1; exit } } END { if (!f) print 0 }' "$1"; }
wait_n() {   # LOG PID REGEX COUNT
  for _ in $(seq 1 600); do [ "$(nlines "$1" "$2" "$3")" -ge "$4" ] && return 0; sleep 0.05; done
  echo "---- $1" >&2; cat "$1" >&2
  ipc_fail "pid $2 did not send $4 x '$3'"
}

start_recv "$N/up.sock" "$N/up.log"
export NOTIFY_SOCKET=$N/up.sock WATCHDOG_USEC=1000000
ipc_init notify "$1" "$2" --heartbeat-ms 200 --liveness 100 --watchdog-sec 3
unset NOTIFY_SOCKET WATCHDOG_USEC
trap 'kill $RPIDS 2>/dev/null; ipc_cleanup; rm -rf "$N"' EXIT
ZBIN=$(dirname "$ZKPIPE")/..
FINAL=$ZBIN/finalizer/zkpipe-finalizer SYNTH=$ZBIN/synth/zkpipe-synth
[ -x "$FINAL" ] && [ -x "$SYNTH" ] || ipc_fail "no worker binaries next to $ZKPIPE"

# 1. up: READY=1 once every child is up (after the workers registered with the broker)
wait_n "$N/up.log" "$IPC_UP" 'READY=1' 1
grep -q "all 4 processes ready" "$IPC_DIR/up.log" || ipc_fail "up sent READY=1 but did not log all 4 ready"
[ "$(nlines "$N/up.log" "$IPC_UP" 'STATUS=4/4 processes ready.*')" -ge 1 ] || ipc_fail "no STATUS=4/4 from up"
wait_n "$N/up.log" "$IPC_UP" 'WATCHDOG=1' 2
ipc_log "up: READY=1, STATUS and WATCHDOG=1 received"

# 2. a finalizer on a path socket with a 400 ms watchdog
start_recv "$N/f.sock" "$N/f.log"
NOTIFY_SOCKET=$N/f.sock WATCHDOG_USEC=400000 "$FINAL" --arena "$IPC_ARENA" --instance 7 --heartbeat-ms 200 \
  >"$IPC_DIR/final7.log" 2>&1 &
F=$!
wait_n "$N/f.log" $F 'READY=1' 1
ipc_wait_for "[.workers[] | select(.role == \"final\" and .pid == $F)] | length == 1" 30
r=$(nfirst "$N/f.log" $F 'READY=1')
for _ in $(seq 1 600); do
  [ "$(awk -v p=$F -v r="$r" 'NR > r && $1 == p && $3 == "WATCHDOG=1"' "$N/f.log" | wc -l)" -ge 2 ] && break
  sleep 0.05
done
[ "$(awk -v p=$F -v r="$r" 'NR > r && $1 == p && $3 == "WATCHDOG=1"' "$N/f.log" | wc -l)" -ge 2 ] ||
  { cat "$N/f.log" >&2; ipc_fail "finalizer: fewer than 2 WATCHDOG=1 after READY=1"; }
[ "$(nlines "$N/f.log" $F 'STOPPING=1')" = 0 ] || ipc_fail "finalizer said STOPPING=1 before SIGTERM"
kill -TERM $F
wait $F; rc=$?
[ $rc = 0 ] || ipc_fail "finalizer exit status $rc after SIGTERM"
wait_n "$N/f.log" $F 'STOPPING=1' 1
[ "$(nfirst "$N/f.log" $F 'STOPPING=1')" -gt "$r" ] || ipc_fail "STOPPING=1 before READY=1"
[ "$(nlines "$N/f.log" $F 'READY=1')" = 1 ] || ipc_fail "finalizer sent READY=1 more than once"
[ "$(nlines "$N/f.log" $F 'STATUS=final #7: .*')" -ge 1 ] || ipc_fail "finalizer sent no STATUS="
ipc_log "finalizer: READY=1, $(nlines "$N/f.log" $F 'WATCHDOG=1') x WATCHDOG=1, STOPPING=1, exit 0"

# 3. a synthesizer on an abstract socket; WATCHDOG_PID names another process: no pings
A="@zkpipe-test-notify-$$"
start_recv "$A" "$N/s.log"
NOTIFY_SOCKET=$A WATCHDOG_USEC=200000 WATCHDOG_PID=1 "$SYNTH" --arena "$IPC_ARENA" --instance 7 --heartbeat-ms 200 \
  >"$IPC_DIR/synth7.log" 2>&1 &
S=$!
wait_n "$N/s.log" $S 'READY=1' 1
wait_n "$N/s.log" $S 'STATUS=synth #7: .*' 1
sleep 1   # five watchdog intervals: a watchdog wrongly armed would have pinged by now
[ "$(nlines "$N/s.log" $S 'WATCHDOG=1')" = 0 ] || ipc_fail "synth pinged a watchdog meant for pid 1"
kill -TERM $S
wait $S; rc=$?
[ $rc = 0 ] || ipc_fail "synth exit status $rc after SIGTERM"
wait_n "$N/s.log" $S 'STOPPING=1' 1
ipc_log "synth on $A: READY=1, no WATCHDOG=1 (WATCHDOG_PID not ours), STOPPING=1"

# 4. up's own watchdog over its children (--watchdog-sec 3; the broker's liveness, 100 x 200 ms,
#    is longer, so up is the one that notices): a stopped synthesizer is replaced
V=$(ipc_jq '[.workers[] | select(.role == "synth" and .instance == 0)][0].pid')
[ -n "$V" ] && [ "$V" != null ] || ipc_fail "no synth #0"
ipc_log "SIGSTOP synth $V"
kill -STOP "$V"
for _ in $(seq 1 600); do grep -q "synth #0 (pid $V): watchdog timeout" "$IPC_DIR/up.log" && break; sleep 0.05; done
grep -q "synth #0 (pid $V): watchdog timeout" "$IPC_DIR/up.log" || ipc_fail "up did not notice the stopped synth"
ipc_wait_for "[.workers[] | select(.role == \"synth\" and .instance == 0 and .pid != $V)] | length == 1" 60
kill -0 "$V" 2>/dev/null && ipc_fail "the stopped synth $V is still there"
ipc_log "up killed the stopped synth $V and started another"

# 1 (end). SIGTERM to up: STOPPING=1
kill -TERM "$IPC_UP"
wait "$IPC_UP"; rc=$?
[ $rc = 0 ] || ipc_fail "zkpipe up exit status $rc"
wait_n "$N/up.log" "$IPC_UP" 'STOPPING=1' 1
[ "$(nlines "$N/up.log" "$IPC_UP" 'READY=1')" = 1 ] || ipc_fail "up sent READY=1 more than once"
IPC_UP=""
echo "ipc notify: OK"
