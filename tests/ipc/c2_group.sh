#!/usr/bin/env bash
# c2_group.sh ZKPIPE SOURCE_ROOT C2_CIRCOM - libzkpipe_c2 with ZKPIPE_C2_MODE=group against a
# running group (found through ZP_RUNTIME_DIR, as libzkpipe-client finds it): the cuzk-role
# harness tests/test_c2_circom.c at 2^10 (group) and 2^11 (auto) sends its circuits as pre-synthesized
# partitions (vectors files) of jobs naming the .params and a density file. The group runs
# WITHOUT the finalizer's test hook: the caller's r, s (a different pair per circuit) travel in
# the vectors files and the slot, so every group proof must equal `zkpipe prove`'s at the same
# r, s (and the in-process library's, r = s = 0 included) byte for byte, besides being
# pairing-checked. Between start and finalize of the 2^10 batch the GPU
# worker is killed (-9) while it holds a partition and then the broker is killed (-9, restarted
# by `zkpipe up`): finalize still returns the three proofs. Bad input (the harness's section 5)
# and the rest leave no vectors file in /dev/shm (one left by a dead caller is swept), and the
# group keeps serving a zkey job.
. "$(dirname "$0")/durable_lib.sh"
C2=$3
unset ZP_TEST_FIXED_RS ZP_TEST_R ZP_TEST_S
dur_init c2_group "$1" "$2" --slots 4 --max-domain 2048 --heartbeat-ms 200 --liveness 10
SYNC=$IPC_DIR/sync
mkdir -p "$SYNC"
wait_file() { for _ in $(seq 1 3000); do [ -e "$1" ] && return 0; kill -0 "$H" 2>/dev/null || break; sleep 0.1; done
              cat "$IPC_DIR/c2.out" >&2; ipc_fail "the harness did not reach $(basename "$1")"; }
# a vectors file left by a caller that died (a pid that does not exist): swept by the next caller
sleep 0 & DEAD=$!; wait $DEAD
ORPHAN=/dev/shm/zkpipe-c2-$(id -u)-$DEAD-0.vecs
: >"$ORPHAN"
ZKPIPE_C2_MODE=group ZP_C2_SYNC_DIR=$SYNC ZKPIPE_C2_THREADS=2 "$C2" "$ZKPIPE" 10 >"$IPC_DIR/c2.out" 2>&1 &
H=$!
wait_file "$SYNC/ready"
ipc_hold gpu
touch "$SYNC/go"
wait_file "$SYNC/started"
ipc_wait_for '.slots.PROVING >= 1 and ([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
G=$(ipc_worker_pid gpu)
ipc_log "kill -9 gpu worker $G (a c2 partition in hand)"
kill -9 "$G"
ipc_wait_for "[.workers[] | select(.role == \"gpu\" and .pid != $G)] | length == 1"
ipc_wait_for '.counters.requeued.gpu >= 1 and .counters.deaths.gpu >= 1'
dur_kill_broker
ipc_release gpu
touch "$SYNC/finalize"
wait "$H" || { cat "$IPC_DIR/c2.out" >&2; ipc_fail "the c2 harness in group mode (kills between start and finalize)"; }
cat "$IPC_DIR/c2.out" >&2
grep -q "group): .*== zkpipe prove's at the same r, s" "$IPC_DIR/c2.out" || ipc_fail "the group's proofs were not compared byte for byte"
# a second size, no kills, ZKPIPE_C2_MODE=auto: a group answers, so the group proves
J0=$(ipc_jq '.jobs.total')
ZKPIPE_C2_MODE=auto ZP_C2_EXPECT_GROUP=1 ZKPIPE_C2_THREADS=2 "$C2" "$ZKPIPE" 11 >"$IPC_DIR/c2b.out" 2>&1 &
H2=$!
wait "$H2" || { cat "$IPC_DIR/c2b.out" >&2; ipc_fail "the c2 harness in auto mode at 2^11"; }
cat "$IPC_DIR/c2b.out" >&2
[ "$(ipc_jq '.jobs.total')" -gt "$J0" ] || ipc_fail "auto mode did not use the running group"
[ ! -e "$ORPHAN" ] || ipc_fail "the dead caller's vectors file $ORPHAN was not swept"
left=$(ls /dev/shm | grep -E "^zkpipe-c2-$(id -u)-($H|$H2)-" || true)
[ -z "$left" ] || ipc_fail "vectors files left in /dev/shm by the harness: $left"
# the circuits' densities went to the group as density files named in the jobs
D=$(ls -t /dev/shm/zkpipe-c2-"$(id -u)"-*.dens 2>/dev/null | head -1)
[ -n "$D" ] && [ "$(head -c 8 "$D")" = ZPBDENS1 ] || ipc_fail "no ZPBDENS1 density file in /dev/shm"
# a density file under the shared name that holds other bits (another local user's, or a torn
# one) is not reused: the library writes the right one and the group proves with it
D=$(grep -o "circuit /dev/shm/zkpipe-c2-$(id -u)-[0-9a-f]*\.dens" "$IPC_DIR/up.log" | tail -1 | cut -d' ' -f2)
[ -f "$D" ] || ipc_fail "no stage logged the 2^11 circuit's density file"
cp "$D" "$IPC_DIR/dens.orig"
sz=$(stat -c %s "$D")
printf '\xff' | dd of="$D" bs=1 seek=$((sz - 1)) conv=notrunc status=none
cmp -s "$D" "$IPC_DIR/dens.orig" && ipc_fail "could not tamper with $D"
ZKPIPE_C2_MODE=group ZKPIPE_C2_THREADS=2 "$C2" "$ZKPIPE" 11 >"$IPC_DIR/c2c.out" 2>&1 ||
  { cat "$IPC_DIR/c2c.out" >&2; ipc_fail "the c2 harness in group mode with a tampered density file in /dev/shm"; }
grep -q "group): .*== zkpipe prove's at the same r, s" "$IPC_DIR/c2c.out" || ipc_fail "tampered density: proofs not compared"
cmp -s "$D" "$IPC_DIR/dens.orig" || ipc_fail "the tampered density file $D was not replaced by the right one"
F=$FIX/bls12381_chain
JG=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs $F/witness-0.wtns)
"$ZKPIPE" await "$JG" --timeout 300 --out "$IPC_DIR/out/good" >/dev/null || ipc_fail "the zkey job after the c2 jobs"
ipc_verify_all "$IPC_DIR/out/good" $F/verification_key.json 1
ipc_all_free
echo "ipc c2_group: OK"
