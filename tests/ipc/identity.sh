#!/usr/bin/env bash
# identity.sh ZKPIPE SOURCE_ROOT - a worker's identity comes from the group, not from its HELLO
# (issue 9 items 2, 3, 8), against a real `zkpipe up` group, with fakepeer speaking the protocol:
#  - a HELLO reusing the live GPU worker's (role, instance) is refused and counted; the real
#    worker keeps its slots (no death, no requeue) and the job completes;
#  - a real finalizer started by hand as the group's final #0 is refused, logs the broker's
#    reason and exits 5 (not a HELLO loop);
#  - a HELLO naming an unrelated process's pid, then silence past the liveness limit: that
#    process is not signalled (the broker never kills a pid from a message);
#  - a raw SUBMIT with a relative witness path is refused at submit, naming the field;
#  - a 17 MiB frame is counted as oversized and answered (not dropped by the transport).
. "$(dirname "$0")/lib.sh"
FAKE=${ZP_FAKEPEER:?ZP_FAKEPEER not set}
ipc_init identity "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 100 --liveness 20
F=$FIX/bn128_chain

ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id ident-job $F/witness-{0..3}.wtns)
ipc_wait_for '([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
G=$(ipc_worker_pid gpu)

# 0. the token up handed the worker cannot be read back from its environment block
# (/proc/PID/environ: zp_identity_hello wipes the value; the process title may overwrite it too)
tr '\0' '\n' </proc/$G/environ | grep -aq 'ZP_IDENTITY=[0-9a-fA-F]\{32\}' &&
  ipc_fail "the gpu worker's identity token is readable in /proc/$G/environ"

# 1. impersonation: same (role, instance), the real worker's pid, a new incarnation, no token
out=$("$FAKE" hello gpu 0 "$G"); rc=$?
[ $rc = 3 ] || ipc_fail "a HELLO impersonating gpu #0 was not refused (rc $rc: $out)"
ipc_log "impersonating HELLO: $out"
# ... with our own pid (the claim matches the connection, still no identity)
out=$("$FAKE" hello gpu 0 self); rc=$?
[ $rc = 3 ] || ipc_fail "a token-less HELLO for gpu #0 was accepted (rc $rc: $out)"
# ... and the synthesizer's identity, likewise
out=$("$FAKE" hello synth 0 self); rc=$?
[ $rc = 3 ] || ipc_fail "a token-less HELLO for synth #0 was accepted (rc $rc: $out)"
echo "$out" | grep -q "belongs to a process the supervisor started" || ipc_fail "reason: $out"
[ "$(ipc_jq '.counters.hello_refused')" -ge 3 ] || ipc_fail "refused HELLOs not counted"
[ "$(ipc_jq '.counters.deaths.gpu')" = 0 ] || ipc_fail "the real gpu worker was declared dead"
[ "$(ipc_worker_pid gpu)" = "$G" ] || ipc_fail "gpu worker changed"
ipc_wait_for "([.workers[] | select(.role == \"gpu\" and .pid == $G and .held >= 1)] | length) == 1" 10

# 1b. a real finalizer started by hand as the group's final #0 (no identity): refused, it says
# why (the broker's reason) and exits ZP_STAGE_EXIT_REFUSED (5); it used to drop the ERROR as
# "unknown command 34" and say HELLO forever
FINBIN=$(dirname "$ZKPIPE")/../finalizer/zkpipe-finalizer
timeout 60 "$FINBIN" --arena "$IPC_ARENA" --instance 0 --threads 1 >"$IPC_DIR/dup-final.log" 2>&1; rc=$?
[ $rc = 5 ] || ipc_fail "a duplicate final #0 exited $rc, want 5 (refused): $(tail -5 "$IPC_DIR/dup-final.log")"
grep -q "the broker refused this final #0: .*belongs to a process the supervisor started" "$IPC_DIR/dup-final.log" ||
  ipc_fail "the refused finalizer does not log the broker's reason: $(tail -5 "$IPC_DIR/dup-final.log")"
grep -q "unknown command" "$IPC_DIR/dup-final.log" && ipc_fail "the broker's ERROR was dropped as unknown"
[ "$(ipc_jq '[.workers[] | select(.role == "final")] | length')" = 1 ] || ipc_fail "the duplicate finalizer joined"
ipc_log "duplicate finalizer refused and exited 5"

# 2. kill by message: a HELLO naming an unrelated process, then silence past the liveness
# limit (20 x 100 ms; the HELLO, accepted before the fix, got the victim killed after 2 s)
sleep 600 & VICTIM=$!
"$FAKE" hello final 3 "$VICTIM" 3 >/dev/null
sleep 1.5
kill -0 "$VICTIM" 2>/dev/null || ipc_fail "the broker killed pid $VICTIM named in a HELLO"
kill "$VICTIM"; wait "$VICTIM" 2>/dev/null
ipc_log "pid named in a HELLO survived"

# 3. relative paths at submit
out=$("$FAKE" submit-relative) || ipc_fail "relative SUBMIT: $out"
ipc_log "relative SUBMIT: $out"

# 4. a 17 MiB frame: counted and answered
O0=$(ipc_jq .counters.oversized)
out=$("$FAKE" oversize $((17 << 20))) || ipc_fail "17 MiB frame: $out"
[ $(( $(ipc_jq .counters.oversized) - O0 )) = 1 ] || ipc_fail "17 MiB frame not counted"
ipc_log "17 MiB frame: $out"

ipc_release gpu
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 4
ipc_all_free
[ "$(ipc_jq '.counters.deaths.gpu')" = 0 ] || ipc_fail "gpu deaths after impersonation"
[ "$(ipc_jq '.counters.requeued.gpu')" = 0 ] || ipc_fail "gpu work requeued after impersonation"
[ "$(ipc_jq '.counters.parts_failed')" = 0 ] || ipc_fail "a partition failed"
echo "ipc identity: OK"
