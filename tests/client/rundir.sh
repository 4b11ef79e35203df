#!/usr/bin/env bash
# rundir.sh ZKPIPE SOURCE_ROOT - clients trust only a runtime directory they should (issue 9
# item 4), and say "permission denied" when they may not reach the socket.
#  - XDG_RUNTIME_DIR/zkpipe (a default location) owned by another user, with a listening fake
#    broker socket in it: `zkpipe status` refuses (exit 5, "not trusted") and the fake sees no
#    connection (before: the client talked to it);
#  - our own directory made group/other writable: refused the same way;
#  - another user (nobody) aimed at our group's runtime directory (mode 0700): "permission
#    denied", exit 5 (before: "no broker socket").
# Runs as root (CI does): it needs chown and setpriv; skipped otherwise.
. "$(dirname "$0")/../ipc/lib.sh"
[ "$(id -u)" = 0 ] || ipc_skip "needs root (chown, setpriv)"
command -v setpriv >/dev/null || ipc_skip "setpriv not installed"
NOBODY=$(id -u nobody 2>/dev/null) || ipc_skip "no user nobody"
ipc_init crundir "$1" "$2" --slots 2 --max-domain 1024
T=$IPC_DIR/t
mkdir -p "$T/xdg/zkpipe"
chmod 755 "$T" "$T/xdg"; chmod 700 "$T/xdg/zkpipe"
# the fake broker: accepts and records any connection
python3 - "$T/xdg/zkpipe/broker.sock" "$T/fake.log" <<'PY' &
import socket, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(4)
os.chmod(sys.argv[1], 0o777)
open(sys.argv[2] + ".ready", "w").close()
s.settimeout(30)
try:
    c, _ = s.accept(); open(sys.argv[2], "w").write("connected\n")
except socket.timeout:
    pass
PY
FAKE=$!
for _ in $(seq 1 100); do [ -f "$T/fake.log.ready" ] && break; sleep 0.05; done
chown -R "$NOBODY" "$T/xdg/zkpipe"
env -u ZP_RUNTIME_DIR XDG_RUNTIME_DIR="$T/xdg" timeout 60 "$ZKPIPE" status >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 5 ] || ipc_fail "status with a runtime dir owned by uid $NOBODY exited $rc, expected 5: $(cat "$T/err")"
grep -q "belongs to uid $NOBODY" "$T/err" && grep -q "not trusted" "$T/err" || ipc_fail "message: $(cat "$T/err")"
env -u ZP_RUNTIME_DIR XDG_RUNTIME_DIR="$T/xdg" timeout 60 "$ZKPIPE" submit --zkey $FIX/bn128_chain/circuit.zkey \
  $FIX/bn128_chain/witness-0.wtns >/dev/null 2>&1; rc=$?
[ $rc = 5 ] || ipc_fail "submit to an untrusted runtime dir exited $rc, expected 5"
sleep 0.5
[ -f "$T/fake.log" ] && ipc_fail "the client connected to the fake broker"
kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null
ipc_log "untrusted runtime directory refused; the fake broker saw nothing"

# our own directory, but group/other writable
chown -R 0 "$T/xdg/zkpipe"; chmod 777 "$T/xdg/zkpipe"
env -u ZP_RUNTIME_DIR XDG_RUNTIME_DIR="$T/xdg" "$ZKPIPE" status --broker-timeout 1 2>"$T/err"; rc=$?
[ $rc = 5 ] && grep -q "writable by group or others" "$T/err" || ipc_fail "world-writable runtime dir: rc $rc: $(cat "$T/err")"

# another user aimed at our broker: permission denied (the zkpipe binary must be reachable for nobody)
setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$ZKPIPE" --help >/dev/null 2>&1 ||
  ipc_skip "the zkpipe binary is not executable by nobody here"
chmod 711 "$IPC_DIR"        # nobody may pass through the test dir, not into the runtime dir
setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$ZKPIPE" status --runtime-dir "$ZP_RUNTIME_DIR" \
  --broker-timeout 2 >/dev/null 2>"$T/err"; rc=$?
chmod 700 "$IPC_DIR"
[ $rc = 5 ] || ipc_fail "another user's status exited $rc, expected 5: $(cat "$T/err")"
grep -q "permission denied" "$T/err" || ipc_fail "another user is not told 'permission denied': $(cat "$T/err")"
grep -q "no broker socket" "$T/err" && ipc_fail "another user is told 'no broker socket'"
"$ZKPIPE" status >/dev/null || ipc_fail "the owner's own status fails"
ipc_log "runtime directory checks ok"
