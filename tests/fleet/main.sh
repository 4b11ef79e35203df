#!/usr/bin/env bash
# main.sh ZKPIPE SOURCE_ROOT - three boxes (`zkpipe up --fleet`, each its own runtime dir,
# state and arena) and a client on one private PostgreSQL, under the least-privilege roles of
# doc/fleet-roles.sql. 50 one-partition jobs on an idle fleet (claim latency), then 220
# partitions on both curves (BLS12-381 witnesses stored in the database); mid-run one whole
# box is killed -9 and PostgreSQL is restarted. Checks: every partition has exactly one result
# (0 lost, 0 duplicated), the killed box's partitions were proved by the others after its
# leases expired, the boxes reconnected, and every proof verifies with snarkjs (one node
# process for all). Prints the numbers for the README (claim latency, round trips and bytes
# per partition, lease-expiry recovery time).
. "$(dirname "$0")/lib.sh"
fl_init main "$1" "$2"
ORACLE=$("$FL_SRC/tests/oracle/ensure.sh") || fl_fail "tests/oracle/ensure.sh (snarkjs)"
fl_psql "$(cat "$FL_SRC/doc/fleet-roles.sql")" >/dev/null || fl_fail "doc/fleet-roles.sql"
# a password in the boxes' connection string (trust authentication ignores it): it must never
# appear in a log or on a command line
BOX_URL="host=$FL_SOCK user=zkpipe_box password=s3cr3t-$$ dbname=fleet"
export ZP_FLEET="host=$FL_SOCK user=zkpipe_client dbname=fleet"   # the client's role
export ZP_FLEET_LEASE_MS=4000 ZP_FLEET_POLL_MS=5000
for b in a b c; do ZP_FLEET=$BOX_URL fl_box $b --slots 4 --max-domain 1024; done
for b in a b c; do fl_wait_box $b; done
fl_log "3 boxes in the fleet"
ps -eo args | grep -v grep | grep -q "s3cr3t-$$" && fl_fail "the password is on a command line: $(ps -eo args | grep "s3cr3t-$$")"
BN=$FIX/bn128_chain; BLS=$FIX/bls12381_chain
: >"$FL_DIR/verify.list"

# ---- claim latency on an idle fleet: submit -> first claim, from the database's clock
for i in $(seq 1 50); do
  J=$("$ZKPIPE" submit --zkey $BN/circuit.zkey --r1cs $BN/circuit.r1cs $BN/witness-$((i % 8)).wtns) || fl_fail "submit $i"
  "$ZKPIPE" await "$J" --timeout 120 --out "$FL_DIR/out/lat-$i" >/dev/null || fl_fail "await latency job $J"
  echo "$BN/verification_key.json $FL_DIR/out/lat-$i/public-0.json $FL_DIR/out/lat-$i/proof-0.json" >>"$FL_DIR/verify.list"
done
LAT=$(fl_psql "SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY d) * 1000)::numeric, 2) || ' ms p50, ' ||
                      round((percentile_cont(0.99) WITHIN GROUP (ORDER BY d) * 1000)::numeric, 2) || ' ms p99, max ' ||
                      round((max(d) * 1000)::numeric, 2) || ' ms'
               FROM (SELECT extract(epoch FROM p.first_claimed_at - j.submitted_at)::float8 AS d
                     FROM zkpipe.jobs j JOIN zkpipe.partitions p ON p.job_id = j.id) x")
fl_log "claim latency (submit to first claim, idle fleet, 50 jobs): $LAT"

# ---- the load: 120 BN254 partitions (witness paths) + 100 BLS12-381 (witness bytes in the DB)
wb=(); wl=()
for i in $(seq 0 119); do wb+=("$BN/witness-$((i % 8)).wtns"); done
for i in $(seq 0 99); do wl+=("$BLS/witness-$((i % 8)).wtns"); done
JB=$("$ZKPIPE" submit --request-id "main-bn-$$" --max-attempts 5 --zkey $BN/circuit.zkey --r1cs $BN/circuit.r1cs "${wb[@]}") ||
  fl_fail "submit bn254"
JL=$("$ZKPIPE" submit --request-id "main-bls-$$" --priority high --max-attempts 5 --witness-in-db --zkey $BLS/circuit.zkey "${wl[@]}") ||
  fl_fail "submit bls12-381"
# idempotent: the same request id is the same job
[ "$("$ZKPIPE" submit --request-id "main-bn-$$" --zkey $BN/circuit.zkey $BN/witness-0.wtns 2>/dev/null)" = "$JB" ] ||
  fl_fail "a repeated request id made a new job"
fl_log "jobs $JB (bn254, 120) and $JL (bls12-381, 100, witnesses in the database) submitted"

# ---- kill -9 box b (its up and every child) while it holds leases, whatever the machine's
# speed: a fast one proves these 220 partitions in well under a second, faster than a
# wait-then-look sees box b holding one. So: freeze the whole box (what it holds cannot change
# between the look and the kill), look, and thaw it to try again when it held nothing; when the
# queue has drained first, submit more work (jobs JK, awaited and counted below)
fl_wait_sql "SELECT count(*) >= 1 FROM zkpipe.results r WHERE r.job_id IN ($JB, $JL)" 300
JK=""; HELD=""
for _ in $(seq 1 400); do
  fl_signal_box b STOP
  sleep 0.05
  HELD=$(fl_psql "SELECT string_agg(id::text, ',') FROM zkpipe.partitions WHERE state = 'running' AND lease_owner = 'b'")
  [ -n "$HELD" ] && break
  fl_signal_box b CONT
  if [ "$(fl_psql "SELECT count(*) FROM zkpipe.partitions WHERE state IN ('queued', 'running')")" = 0 ]; then
    wk=(); for i in $(seq 0 59); do wk+=("$BN/witness-$((i % 8)).wtns"); done
    JK="$JK${JK:+ }$("$ZKPIPE" submit --zkey $BN/circuit.zkey --r1cs $BN/circuit.r1cs "${wk[@]}")" || fl_fail "submit more load"
  fi
  sleep 0.05
done
fl_kill_box b
T_KILL=$(fl_psql "SELECT extract(epoch FROM clock_timestamp())")
[ -n "$HELD" ] || fl_fail "box b held no partition when it was killed"
fl_log "box b killed -9 holding partitions $HELD"

# the others take its partitions once the leases expire
fl_wait_sql "SELECT bool_and(lease_owner IS DISTINCT FROM 'b' AND claimed_at > to_timestamp($T_KILL)) FROM zkpipe.partitions WHERE id IN ($HELD)" 300
RECOV=$(fl_psql "SELECT round((max(extract(epoch FROM queued_at)) - $T_KILL)::numeric, 2) || ' s after the kill, claimed again ' ||
                      round((max(extract(epoch FROM claimed_at)) - $T_KILL)::numeric, 2) || ' s after it'
               FROM zkpipe.partitions WHERE id IN ($HELD)")
fl_log "lease-expiry recovery (lease $ZP_FLEET_LEASE_MS ms, reaped every $((ZP_FLEET_LEASE_MS / 2)) ms by each box): the killed box's $(echo "$HELD" | tr ',' '\n' | wc -l) partition(s) requeued $RECOV (behind queued work of their priority)"

# ---- restart PostgreSQL while the other two work
fl_wait_sql "SELECT count(*) >= 120 FROM zkpipe.results r WHERE r.job_id IN ($JB, $JL)" 300
# work the boxes hold while the database is away, whatever the machine's speed: a fresh job, and
# PostgreSQL stops as soon as one of its partitions is claimed
wr=(); for i in $(seq 0 59); do wr+=("$BN/witness-$((i % 8)).wtns"); done
JR=$("$ZKPIPE" submit --request-id "main-restart-$$" --zkey $BN/circuit.zkey --r1cs $BN/circuit.r1cs "${wr[@]}") ||
  fl_fail "submit the restart job"
fl_wait_sql "SELECT count(*) >= 1 FROM zkpipe.partitions WHERE job_id = $JR AND state = 'running'" 300
# a fast machine finishes what a box holds before PostgreSQL is down: freeze boxes a and c
# while they hold partitions of the job (thaw and look again while they hold none), stop the
# database, then thaw them, so their results meet a database that is away
# (of any job: when the queue has drained first, more work is submitted, jobs JK as above)
HELD_R=""
for _ in $(seq 1 400); do
  fl_signal_box a STOP; fl_signal_box c STOP
  sleep 0.05
  HELD_R=$(fl_psql "SELECT string_agg(id::text, ',') FROM zkpipe.partitions WHERE state = 'running'")
  [ -n "$HELD_R" ] && break
  fl_signal_box a CONT; fl_signal_box c CONT
  if [ "$(fl_psql "SELECT count(*) FROM zkpipe.partitions WHERE state IN ('queued', 'running')")" = 0 ]; then
    wk=(); for i in $(seq 0 59); do wk+=("$BN/witness-$((i % 8)).wtns"); done
    JK="$JK${JK:+ }$("$ZKPIPE" submit --zkey $BN/circuit.zkey --r1cs $BN/circuit.r1cs "${wk[@]}")" || fl_fail "submit more load"
  fi
  sleep 0.05
done
[ -n "$HELD_R" ] || fl_fail "boxes a and c never held a partition"
fl_log "restarting PostgreSQL (boxes a and c hold partitions $HELD_R)"
fl_pg_stop fast || fl_fail "pg_ctl stop"
fl_signal_box a CONT; fl_signal_box c CONT
# the boxes keep finishing what they hold: those results wait in their outboxes
outbox() { ls "$(fl_box_dir a)"/state/*.fleet-outbox/*.res "$(fl_box_dir c)"/state/*.fleet-outbox/*.res 2>/dev/null | wc -l; }
for _ in $(seq 1 100); do [ "$(outbox)" -ge 1 ] && break; sleep 0.1; done
N_OUT=$(outbox)
[ "$N_OUT" -ge 1 ] || fl_fail "no finished result waits in an outbox while the database is down"
fl_log "PostgreSQL is down; $N_OUT finished result(s) wait in the boxes' outboxes"
fl_pg_start
fl_log "PostgreSQL is back"

"$ZKPIPE" await "$JB" --timeout 600 --out "$FL_DIR/out/bn" >/dev/null || fl_fail "await bn254 job $JB"
"$ZKPIPE" await "$JL" --timeout 600 --out "$FL_DIR/out/bls" >/dev/null || fl_fail "await bls12-381 job $JL"
"$ZKPIPE" await "$JR" --timeout 600 --out "$FL_DIR/out/rs" >/dev/null || fl_fail "await the restart job $JR"
[ "$(fl_psql "SELECT count(*) || ' ' || count(DISTINCT partition_id) FROM zkpipe.results WHERE job_id = $JR")" = "60 60" ] ||
  fl_fail "the restart job: not 60 results, one per partition"
for J in $JK; do   # the extra load of the kill, if any: all there, once
  "$ZKPIPE" await "$J" --timeout 600 --out "$FL_DIR/out/k-$J" >/dev/null || fl_fail "await the extra job $J"
  [ "$(fl_psql "SELECT count(*) || ' ' || count(DISTINCT partition_id) FROM zkpipe.results WHERE job_id = $J")" = "60 60" ] ||
    fl_fail "the extra job $J: not 60 results, one per partition"
done

# ---- 0 lost, 0 duplicated, the killed box's work redone by the others
[ "$(outbox)" = 0 ] || fl_fail "results left in an outbox after the jobs finished"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.results WHERE job_id IN ($JB, $JL)")" = 220 ] || fl_fail "not 220 results"
[ "$(fl_psql "SELECT count(DISTINCT partition_id) FROM zkpipe.results WHERE job_id IN ($JB, $JL)")" = 220 ] || fl_fail "duplicates"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.partitions WHERE job_id IN ($JB, $JL) AND state = 'done'")" = 220 ] || fl_fail "not all done"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.results r JOIN zkpipe.partitions p ON p.id = r.partition_id
              WHERE r.epoch <> p.lease_epoch")" = 0 ] || fl_fail "a result from a stale lease epoch was accepted"
[ "$(fl_psql "SELECT sum(done_total) FROM zkpipe.boxes")" = "$(fl_psql "SELECT count(*) FROM zkpipe.results")" ] ||
  fl_fail "accepted commits != results"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.results WHERE partition_id IN ($HELD) AND box = 'b'")" = 0 ] ||
  fl_fail "a result of the killed box for a partition it held at the kill"
[ "$(fl_psql "SELECT bool_and(reasons LIKE '%lease of box b expired%') FROM zkpipe.partitions WHERE id IN ($HELD)")" = t ] ||
  fl_fail "the killed box's partitions were not requeued by lease expiry: $(fl_psql "SELECT reasons FROM zkpipe.partitions WHERE id IN ($HELD)")"
[ "$(fl_psql "SELECT count(*) FROM zkpipe.results WHERE box = 'b' AND finished_at > to_timestamp($T_KILL)")" = 0 ] ||
  fl_fail "results from the killed box after the kill"
for b in a c; do
  grep -q "fleet: reconnected to" "$(fl_box_dir $b)/up.log" || fl_fail "box $b did not log a reconnect after the PostgreSQL restart"
done
for i in $(seq 0 119); do
  echo "$BN/verification_key.json $FL_DIR/out/bn/public-$i.json $FL_DIR/out/bn/proof-$i.json" >>"$FL_DIR/verify.list"
done
for i in $(seq 0 99); do
  echo "$BLS/verification_key.json $FL_DIR/out/bls/public-$i.json $FL_DIR/out/bls/proof-$i.json" >>"$FL_DIR/verify.list"
done
for i in $(seq 0 59); do
  echo "$BN/verification_key.json $FL_DIR/out/rs/public-$i.json $FL_DIR/out/rs/proof-$i.json" >>"$FL_DIR/verify.list"
done
node "$FL_SRC/tests/fleet/verify_batch.mjs" "$ORACLE" "$FL_DIR/verify.list" || fl_fail "snarkjs rejects a proof"

# ---- numbers: database round trips and bytes per partition (boxes' own counters at stop)
fl_stop_box a; fl_stop_box c
for b in a c; do
  line=$(grep "fleet: stopped;" "$(fl_box_dir $b)/up.log" | tail -1)
  [ -n "$line" ] || fl_fail "box $b did not log its fleet counters"
  fl_log "box $b: ${line#*fleet: stopped; }"
done
echo "$(grep -h "fleet: stopped;" "$(fl_box_dir a)/up.log" "$(fl_box_dir c)/up.log")" | python3 -c '
import re, sys
rt = bo = bi = com = 0
for l in sys.stdin:
    m = re.search(r"(\d+) committed.* (\d+) round trips, (\d+) bytes out, (\d+) bytes in", l)
    if m: com += int(m[1]); rt += int(m[2]); bo += int(m[3]); bi += int(m[4])
print(f"per committed partition (boxes a, c, whole run incl. idle heartbeats): {rt/com:.1f} round trips, "
      f"{bo/com:.0f} bytes out, {bi/com:.0f} bytes in ({com} partitions)", file=sys.stderr)'
fl_finish
grep -l "s3cr3t-$$" "$FL_DIR"/box-*/up.log "$FL_DIR/pg/server.log" && fl_fail "the password was logged"
echo "fleet main: OK"
