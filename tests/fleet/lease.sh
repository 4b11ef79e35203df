#!/usr/bin/env bash
# lease.sh ZKPIPE SOURCE_ROOT - the lease epoch fences every late or duplicate result.
#  1. expired lease: box a (test hook ZP_FLEET_TEST_HOLD: while the hold file exists it neither
#     renews, reaps nor commits, and claims nothing once the file has content: a box cut off
#     from the database) claims and proves 3 partitions;
#     its leases expire; box b requeues (reap), proves and commits them; a is let go: its 3
#     commits are refused, counted (boxes.refused_total), its outbox emptied, results stay b's.
#  2. race: a (held again) claims 3 more; box c (test hook ZP_FLEET_TEST_STEAL: claims under a's
#     live lease, as a box with a wrong clock would; also held) proves them too. a commits first,
#     while c's lease is live: refused by the epoch alone (the partitions are still running);
#     then c commits: exactly one result each is accepted (c's, the newer epoch).
#  3. inputs (box d): a witness that no box can read is handed back without spending an attempt, with
#     the reason in `zkpipe status --fleet`; cancel stops the job and await exits 4 (canceled).
#  4. failure classes: a witness that does not satisfy the circuit fails at once, fleet-wide.
#  5. the broker of a box is killed -9 and restarted by `zkpipe up`: it adopts its leases back.
#  6. witnesses in the database above the fleet's limit are refused with a clear error (exit 1).
. "$(dirname "$0")/lib.sh"
fl_init lease "$1" "$2"
BN=$FIX/bn128_chain
HOLD=$FL_DIR/hold
count_res() { ls "$(fl_box_dir "${1:-a}")"/state/*.fleet-outbox/*.res 2>/dev/null | wc -l; }
# wait_outbox BOX N WHY: until BOX's outbox holds N results (safety timeout 60 s)
wait_outbox() {
  for _ in $(seq 1 600); do [ "$(count_res "$1")" = "$2" ] && return 0; sleep 0.1; done
  fl_fail "$3"
}

# ---- 1. expired lease
ZP_FLEET_LEASE_MS=2000 ZP_FLEET_TEST_HOLD=$HOLD fl_box a --slots 4 --max-domain 1024
fl_wait_box a
touch "$HOLD"
J1=$("$ZKPIPE" submit --zkey $BN/circuit.zkey $BN/witness-1.wtns $BN/witness-2.wtns $BN/witness-3.wtns) || fl_fail "submit"
wait_outbox a 3 "box a did not finish its 3 partitions into the outbox"
echo cut-off >"$HOLD"   # now it claims nothing either
fl_log "box a (cut off) holds 3 finished results; its leases expire"
ZP_FLEET_LEASE_MS=2000 fl_box b --slots 4 --max-domain 1024
"$ZKPIPE" await "$J1" --timeout 120 --out "$FL_DIR/out/j1" >/dev/null || fl_fail "await job $J1"
[ "$(fl_psql "SELECT string_agg(DISTINCT box, ',') FROM zkpipe.results WHERE job_id = $J1")" = b ] || fl_fail "results not b's"
[ "$(fl_psql "SELECT bool_and(reasons LIKE '%lease of box a expired%') FROM zkpipe.partitions WHERE job_id = $J1")" = t ] ||
  fl_fail "partitions not requeued by lease expiry"
rm -f "$HOLD"
fl_wait_sql "SELECT refused_total = 3 FROM zkpipe.boxes WHERE name = 'a'" 60
wait_outbox a 0 "box a kept refused results in its outbox"
grep -q "result REFUSED (epoch 1 is no longer the lease): work discarded" "$(fl_box_dir a)/up.log" || fl_fail "no refusal logged"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.results WHERE job_id = $J1 AND box = 'b' AND epoch = 2")" = 3 ] ||
  fl_fail "the accepted results changed"
fl_log "expired lease: a's 3 late commits refused and counted; b's results stand"

# ---- 2. race for the same partitions
fl_stop_box b
touch "$HOLD"
J2=$("$ZKPIPE" submit --zkey $BN/circuit.zkey $BN/witness-4.wtns $BN/witness-5.wtns $BN/witness-6.wtns) || fl_fail "submit"
wait_outbox a 3 "box a did not finish job $J2 into its outbox"
echo cut-off >"$HOLD"
HOLD_C=$FL_DIR/hold-c
touch "$HOLD_C"
ZP_FLEET_LEASE_MS=30000 ZP_FLEET_TEST_STEAL=1 ZP_FLEET_TEST_HOLD=$HOLD_C fl_box c --slots 4 --max-domain 1024
fl_wait_sql "SELECT count(*) = 3 FROM zkpipe.partitions WHERE job_id = $J2 AND lease_owner = 'c' AND state = 'running'" 60
wait_outbox c 3 "box c did not prove the 3 partitions"
# both hold a proof of each; a (the older epoch) commits first, while c's lease is live
rm -f "$HOLD"
fl_wait_sql "SELECT refused_total = 6 FROM zkpipe.boxes WHERE name = 'a'" 60
[ "$(fl_psql "SELECT count(*) FROM zkpipe.results WHERE job_id = $J2")" = 0 ] || fl_fail "a commit under a stale epoch was accepted"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.partitions WHERE job_id = $J2 AND state = 'running' AND lease_owner = 'c'")" = 3 ] ||
  fl_fail "a's refused commits changed the partitions"
rm -f "$HOLD_C"
"$ZKPIPE" await "$J2" --timeout 120 --out "$FL_DIR/out/j2" >/dev/null || fl_fail "await job $J2"
[ "$(fl_psql "SELECT count(*) || ' ' || count(DISTINCT partition_id) || ' ' || string_agg(DISTINCT box, ',')
              FROM zkpipe.results WHERE job_id = $J2")" = "3 3 c" ] || fl_fail "not exactly one result (c's) per raced partition"
[ "$(fl_psql "SELECT done_total FROM zkpipe.boxes WHERE name = 'a'")" = 0 ] || fl_fail "a result of box a was accepted"
for i in 0 1 2; do
  "$ZKPIPE" verify $BN/verification_key.json "$FL_DIR/out/j1/public-$i.json" "$FL_DIR/out/j1/proof-$i.json" >/dev/null &&
    "$ZKPIPE" verify $BN/verification_key.json "$FL_DIR/out/j2/public-$i.json" "$FL_DIR/out/j2/proof-$i.json" >/dev/null ||
    fl_fail "proof $i does not verify"
done
fl_log "race: both boxes proved the 3 partitions, exactly one result each accepted, a's 3 refused"
fl_stop_box a; fl_stop_box c

# ---- 3. an input no box can read (gone after the submit, before any box runs)
cp $BN/witness-7.wtns "$FL_DIR/gone.wtns"
J3=$("$ZKPIPE" submit --zkey $BN/circuit.zkey "$FL_DIR/gone.wtns") || fl_fail "submit"
rm -f "$FL_DIR/gone.wtns"
mkdir -p "$FL_DIR/hold-d"
ZP_TEST_HOLD_DIR=$FL_DIR/hold-d ZP_FLEET_LEASE_MS=4000 fl_box d --slots 4 --max-domain 1024
fl_wait_sql "SELECT handback LIKE 'd: cannot read $FL_DIR/gone.wtns%' AND state = 'queued' AND attempts = 0
             FROM zkpipe.partitions WHERE job_id = $J3" 60
"$ZKPIPE" status --fleet "$ZP_FLEET" | grep -q "handed back: job $J3 partition 0: d: cannot read $FL_DIR/gone.wtns" ||
  fl_fail "status does not say why the partition was handed back"
[ "$("$ZKPIPE" status --json | jq ".handed_back[] | select(.job == $J3) | .attempts")" = 0 ] || fl_fail "status --json"
"$ZKPIPE" await "$J3" --timeout 1 >/dev/null; rc=$?
[ $rc = 3 ] || fl_fail "await of a waiting job past its timeout: exit $rc, not 3"
"$ZKPIPE" cancel "$J3" >/dev/null || fl_fail "cancel"
"$ZKPIPE" await "$J3" --timeout 10 >/dev/null; rc=$?
[ $rc = 4 ] || fl_fail "await of a canceled job: exit $rc, not 4"
"$ZKPIPE" cancel 999999 2>/dev/null; rc=$?
[ $rc = 1 ] || fl_fail "cancel of no job: exit $rc"
fl_log "unreadable input handed back without an attempt, reason in status; cancel/await exit codes"

# ---- a fleet partition canceled on the box itself (`zkpipe cancel` of the local job) goes back
# to the fleet at once, without an attempt, and is proved later
touch "$FL_DIR/hold-d/hold-gpu"   # the box's GPU stage waits (ZP_TEST_HOLD_DIR)
J6=$("$ZKPIPE" submit --zkey $BN/circuit.zkey $BN/witness-3.wtns) || fl_fail "submit"
fl_wait_sql "SELECT state = 'running' AND lease_owner = 'd' FROM zkpipe.partitions WHERE job_id = $J6" 60
pid6=$(fl_psql "SELECT id FROM zkpipe.partitions WHERE job_id = $J6")
for _ in $(seq 1 100); do grep -q "fleet: partition $pid6 (.*) is local job" "$(fl_box_dir d)/up.log" && break; sleep 0.1; done
lj=$(grep "fleet: partition $pid6 (.*) is local job" "$(fl_box_dir d)/up.log" | tail -1 | sed 's/.* is local job //')
[ -n "$lj" ] || fl_fail "no local job for partition $pid6"
"$ZKPIPE" cancel --runtime-dir "$(fl_box_dir d)/run" "$lj" >/dev/null || fl_fail "local cancel of job $lj"
fl_wait_sql "SELECT handback = 'd: canceled on the box' AND attempts = 0 FROM zkpipe.partitions WHERE job_id = $J6" 60
rm -f "$FL_DIR/hold-d/hold-gpu"
"$ZKPIPE" await "$J6" --timeout 120 >/dev/null || fl_fail "await job $J6 after the local cancel"
fl_log "a fleet partition canceled on the box went back to the fleet without an attempt and was proved"

# ---- 4. failure classes: a witness that does not satisfy the circuit fails its partition on
# the first attempt fleet-wide (input class: no other box retries it); the others are proved
J4=$("$ZKPIPE" submit --zkey $BN/circuit.zkey --r1cs $BN/circuit.r1cs $BN/witness-0.wtns $BN/witness-bad.wtns $BN/witness-2.wtns) ||
  fl_fail "submit"
"$ZKPIPE" await "$J4" --timeout 120 --out "$FL_DIR/out/j4" >"$FL_DIR/await.out" 2>"$FL_DIR/await.err"; rc=$?
[ $rc = 1 ] || fl_fail "await of a job with a bad witness: exit $rc, not 1"
grep -q "partition 1 failed after 1 attempt(s): .*does not satisfy" "$FL_DIR/await.err" || fl_fail "no reason: $(cat "$FL_DIR/await.err")"
[ "$(fl_psql "SELECT string_agg(state || ':' || attempts, ',' ORDER BY idx) FROM zkpipe.partitions WHERE job_id = $J4")" = \
  "done:0,failed:1,done:0" ] || fl_fail "partition states/attempts of job $J4"
[ "$(fl_psql "SELECT state FROM zkpipe.jobs WHERE id = $J4")" = failed ] || fl_fail "job $J4 not failed"
for i in 0 2; do
  "$ZKPIPE" verify $BN/verification_key.json "$FL_DIR/out/j4/public-$i.json" "$FL_DIR/out/j4/proof-$i.json" >/dev/null ||
    fl_fail "good partition $i of job $J4"
done
fl_log "a bad witness fails its partition once, fleet-wide, with the reason; the rest of the job is proved"

# ---- 5. the broker of a box dies (kill -9; `zkpipe up` restarts it): its journal brings back
# the fleet partitions it was running, their leases are adopted and renewed, the outbox is sent
J5=$("$ZKPIPE" submit --zkey $BN/circuit.zkey $(for i in $(seq 0 29); do echo $BN/witness-$((i % 8)).wtns; done)) || fl_fail "submit"
fl_wait_sql "SELECT count(*) >= 3 FROM zkpipe.results WHERE job_id = $J5" 120
kill -KILL "$(cat "$(fl_box_dir d)/run/broker.pid")" || fl_fail "no broker pid for box d"
"$ZKPIPE" await "$J5" --timeout 300 >/dev/null || fl_fail "await job $J5 after the broker restart"
[ "$(fl_psql "SELECT count(DISTINCT partition_id) || ' ' || count(*) FROM zkpipe.results WHERE job_id = $J5")" = "30 30" ] ||
  fl_fail "job $J5: not exactly one result per partition"
[ "$(grep -c "fleet: box 'd' joins the fleet" "$(fl_box_dir d)/up.log")" = 2 ] || fl_fail "box d's broker did not rejoin"
fl_log "box d's broker killed -9 and restarted: $(grep "fleet: box 'd' joins" "$(fl_box_dir d)/up.log" | tail -1 | sed 's/.*); //')"

# ---- 6. the size limit of witnesses stored in the database
"$ZKPIPE" fleet init "$FL_URL" --max-db-witness 100 >/dev/null || fl_fail "fleet init --max-db-witness"
out=$("$ZKPIPE" submit --witness-in-db --zkey $BN/circuit.zkey $BN/witness-0.wtns 2>&1); rc=$?
[ $rc = 1 ] || fl_fail "an oversized witness in the database: exit $rc"
echo "$out" | grep -q "a witness stored in the database may have at most 100 bytes" || fl_fail "no clear message: $out"
"$ZKPIPE" submit --fleet "$FL_URL" 2>/dev/null; rc=$?
[ $rc = 2 ] || fl_fail "submit without arguments: exit $rc, not 2"
out=$(ZP_FLEET="host=$FL_DIR/nowhere user=secretuser password=hunter2 dbname=x" "$ZKPIPE" status 2>&1); rc=$?
[ $rc = 1 ] || fl_fail "status with an unreachable database: exit $rc"
echo "$out" | grep -q hunter2 && fl_fail "the password was printed: $out"
echo "$out" | grep -q "cannot connect to the fleet database" || fl_fail "no clear message: $out"
# libpq is loaded at the first connection (session 17): a library that cannot be loaded is
# named, with the package, and the command fails cleanly
out=$(ZP_LIBPQ=$FL_DIR/no-libpq.so.5 "$ZKPIPE" status --fleet "$FL_URL" 2>&1); rc=$?
[ $rc = 1 ] || fl_fail "status without a loadable libpq: exit $rc"
echo "$out" | grep -q "fleet mode needs libpq (Debian: libpq5): $FL_DIR/no-libpq.so.5" || fl_fail "no clear message: $out"
fl_finish
echo "fleet lease: OK"
