#!/usr/bin/env bash
# keystore_hot.sh ZKPIPE SOURCE_ROOT - the proving key's hot tier (shm/keystore.c): the first
# stage process that needs a key parses it into one shared-memory object, every other process
# maps it (log "hot (shm)"); a GPU worker killed with -9 and restarted by `zkpipe up` finds the
# key there instead of re-parsing it, and the proofs made after the restart still verify.
# The test removes its key objects on exit (the broker does not yet: see shm/keystore.h).
. "$(dirname "$0")/lib.sh"
ipc_init keystore "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
KEYGLOB="/dev/shm/zkpipe-$(id -u)-$IPC_ARENA-key-"
trap 'ipc_cleanup; rm -f "$KEYGLOB"*' EXIT
LOG=$IPC_DIR/up.log
prove() {   # $1 = fixture, $2 = tag: one job of the fixture's witnesses, awaited and verified
  local F=$FIX/$1 n=0 w=()
  for x in "$F"/witness-[0-9].wtns "$F"/witness.wtns; do [ -f "$x" ] && w+=("$x"); done
  n=${#w[@]}
  [ "$n" -gt 0 ] || ipc_fail "no witness in $F"
  J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --priority normal --request-id ks-$2 "${w[@]}")
  "$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/$2" || ipc_fail "await $2"
  ipc_verify_all "$IPC_DIR/out/$2" $F/verification_key.json "$n"
}
Z=$FIX/bn128_chain/circuit.zkey
prove bn128_chain first
ls "$KEYGLOB"* >/dev/null 2>&1 || ipc_fail "no key object $KEYGLOB* in /dev/shm"
cold=$(grep -c "key $Z: cold: parsed" "$LOG")
hot=$(grep -c "key $Z: hot (shm)" "$LOG")
[ "$cold" = 1 ] || ipc_fail "key parsed $cold times (want once, by the first process)"
[ "$hot" -ge 2 ] || ipc_fail "only $hot processes mapped the key hot"

G=$(ipc_worker_pid gpu)
grep -q "gpu-worker\[$G\] .*key $Z: \(hot\|cold\)" "$LOG" || ipc_fail "gpu worker $G did not log the key's tier"
ipc_log "kill -9 gpu worker $G"
kill -9 "$G"
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length == 1"
G2=$(ipc_worker_pid gpu)
prove bn128_chain after-restart
grep -q "gpu-worker\[$G2\] info: key $Z: hot (shm)" "$LOG" || ipc_fail "restarted gpu worker $G2 did not find the key hot"
grep -q "gpu-worker\[$G2\] .*key $Z: cold" "$LOG" && ipc_fail "restarted gpu worker $G2 parsed the key again"
grep "gpu-worker\[$G2\] info: key $Z" "$LOG" | sed 's/^/  /' >&2
# a second key: a separate object
prove bn128_poseidon2 second-key
[ "$(ls "$KEYGLOB"* | wc -l)" = 2 ] || ipc_fail "want 2 key objects, have: $(ls "$KEYGLOB"*)"
ipc_all_free
echo "ipc keystore_hot: OK"
