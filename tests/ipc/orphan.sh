#!/usr/bin/env bash
# orphan.sh ZKPIPE SOURCE_ROOT - the group's life cycle when `zkpipe up` itself dies (issue 9
# item 5): a second up on the same runtime directory is refused with a message; `kill -9` of up
# takes every child with it (parent-death signal) and the broker's arena goes; the next up on
# the same directory becomes ready and proves; a group that outlived its up (simulated with the
# test hook ZP_TEST_NO_PDEATHSIG=1, as an older up would leave it) is found, named and stopped
# by the next up, which then serves.
. "$(dirname "$0")/lib.sh"
ipc_init orphan "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 100
F=$FIX/bn128_chain
UPARGS=(--arena "$IPC_ARENA" --slots 4 --max-domain 1024 --heartbeat-ms 100)
group_pids() { ipc_status | jq -r '[.pid] + [.workers[].pid] | map(tostring) | join(" ")'; }
alive() { [ -r /proc/$1/stat ] && ! awk '{ sub(/.*\) /, ""); exit !($1 == "Z") }' /proc/$1/stat; }   # zombies count as gone
all_gone() { for p in $1; do alive "$p" && return 1; done; return 0; }
wait_gone() {
  for _ in $(seq 1 300); do all_gone "$1" && return 0; sleep 0.1; done
  ipc_fail "processes still running after their zkpipe up died: $(for p in $1; do alive $p && echo -n "$p "; done)"
}
prove_one() {
  local j
  j=$(ipc_submit --zkey $F/circuit.zkey --request-id "orphan-$1" $F/witness-$1.wtns)
  "$ZKPIPE" await "$j" --timeout 300 --out "$IPC_DIR/out/$1" >/dev/null || ipc_fail "await job $1"
  "$ZKPIPE" verify $F/verification_key.json "$IPC_DIR/out/$1/public-0.json" "$IPC_DIR/out/$1/proof-0.json" >/dev/null ||
    ipc_fail "proof $1"
}

# 1. a second up on the same directory: refused at once, clearly; the first keeps serving
out=$(timeout 60 "$ZKPIPE" up "${UPARGS[@]}" 2>&1); rc=$?
[ $rc = 1 ] || ipc_fail "a second up on $ZP_RUNTIME_DIR exited $rc"
echo "$out" | grep -q "another \`zkpipe up\` (pid $IPC_UP) runs the group in" || ipc_fail "message: $out"
prove_one 0

# 2. kill -9 up: the children die with it
P=$(group_pids)
ipc_log "kill -9 zkpipe up $IPC_UP (group: $P)"
kill -9 "$IPC_UP"; wait "$IPC_UP" 2>/dev/null
wait_gone "$P"
for _ in $(seq 1 100); do [ -e "/dev/shm/zkpipe-$(id -u)-$IPC_ARENA" ] || break; sleep 0.1; done
[ -e "/dev/shm/zkpipe-$(id -u)-$IPC_ARENA" ] && ipc_fail "the arena outlived the group"
ipc_log "every child died with up"

# 3. the next up on the same directory serves
"$ZKPIPE" up "${UPARGS[@]}" >>"$IPC_DIR/up.log" 2>&1 &
IPC_UP=$!
ipc_wait_workers 1 1 1
prove_one 1

# 4. a group that outlived its up is found and stopped by the next one
kill -TERM "$IPC_UP"; wait "$IPC_UP"
ZP_TEST_NO_PDEATHSIG=1 "$ZKPIPE" up "${UPARGS[@]}" >>"$IPC_DIR/up.log" 2>&1 &
IPC_UP=$!
ipc_wait_workers 1 1 1
P=$(group_pids)
kill -9 "$IPC_UP"; wait "$IPC_UP" 2>/dev/null
sleep 0.5
all_gone "$P" && ipc_fail "test hook: the children were expected to outlive up"
: >"$IPC_DIR/up2.log"
"$ZKPIPE" up "${UPARGS[@]}" >"$IPC_DIR/up2.log" 2>&1 &
IPC_UP=$!
wait_gone "$P"
ipc_wait_workers 1 1 1
grep -q "holds a group left by an earlier \`zkpipe up\` (pid [0-9]*, no longer running): 4 process(es)" "$IPC_DIR/up2.log" ||
  { cat "$IPC_DIR/up2.log" >&2; ipc_fail "the stale group was not named"; }
grep -q "the stale group is stopped" "$IPC_DIR/up2.log" || ipc_fail "no word that the stale group was stopped"
cat "$IPC_DIR/up2.log" >>"$IPC_DIR/up.log"
prove_one 2
echo "ipc orphan: OK"
