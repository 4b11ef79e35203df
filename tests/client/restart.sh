#!/usr/bin/env bash
# restart.sh ZKPIPE SOURCE_ROOT - client calls survive a broker restart (issue 9 item 6) and
# exit with distinct codes:
#  - `zkpipe await` running while the broker is killed -9 (and restarted by `zkpipe up`)
#    reconnects, repeats its AWAIT and exits 0 with every proof (before: hung ~70 s, exit 1);
#  - `zkpipe status` issued right after a kill -9 retries until the new broker answers (exit 0);
#  - a submit repeated after the restart with the same request id gets the same job;
#  - broker unreachable = exit 5 (no runtime dir; a socket nobody answers, bounded by
#    --broker-timeout), bad usage = 2 (empty --request-id, with a message that says so), 3 on an
#    await timeout, 1 when a partition failed.
. "$(dirname "$0")/../ipc/durable_lib.sh"
dur_init crestart "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
F=$FIX/bn128_chain

# ---- await across kill -9 of the broker
ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --request-id cr-1 $F/witness-{0..3}.wtns)
"$ZKPIPE" await "$J" --timeout 240 --out "$IPC_DIR/out/j" >"$IPC_DIR/await.out" 2>"$IPC_DIR/await.err" &
AW=$!
ipc_wait_for '.slots.PROVING >= 1'
sleep 1      # the await is parked in the broker now (nothing asserts on time)
dur_kill_broker
ipc_release gpu
wait $AW; rc=$?
[ $rc = 0 ] || { cat "$IPC_DIR/await.err" >&2; ipc_fail "await across a broker restart exited $rc, expected 0"; }
ipc_verify_all "$IPC_DIR/out/j" $F/verification_key.json 4
ipc_oracle $F/verification_key.json "$IPC_DIR/out/j/public-0.json" "$IPC_DIR/out/j/proof-0.json"
ipc_log "await survived a broker restart: $(cat "$IPC_DIR/await.out")"

# ---- status right after a kill -9: retried until the restarted broker answers
old=$(dur_broker_pid)
kill -9 "$old"
"$ZKPIPE" status --json --broker-timeout 60 >"$IPC_DIR/st.json" 2>"$IPC_DIR/st.err"; rc=$?
[ $rc = 0 ] || { cat "$IPC_DIR/st.err" >&2; ipc_fail "status during a broker restart exited $rc"; }
[ "$(jq -r .pid "$IPC_DIR/st.json")" != "$old" ] || ipc_fail "status answered by the killed broker?"
ipc_wait_workers 1 1 1
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id cr-1 $F/witness-0.wtns 2>/dev/null)
[ "$J2" = "$J" ] || ipc_fail "repeated request id after restart gave job $J2, expected $J"

# ---- exit codes
"$ZKPIPE" await "$J" --timeout 30 >/dev/null 2>&1; rc=$?
[ $rc = 0 ] || ipc_fail "await of a done job exited $rc"
"$ZKPIPE" submit --zkey $F/circuit.zkey --request-id "" $F/witness-0.wtns 2>"$IPC_DIR/e.err"; rc=$?
[ $rc = 2 ] || ipc_fail "empty --request-id exited $rc, expected 2"
grep -q "request id is empty" "$IPC_DIR/e.err" || ipc_fail "empty --request-id message: $(cat "$IPC_DIR/e.err")"
grep -q "protocol error" "$IPC_DIR/e.err" && ipc_fail "empty --request-id still reported as a protocol error"
"$ZKPIPE" await 999999 --timeout 5 2>"$IPC_DIR/e.err" >/dev/null; rc=$?
[ $rc = 6 ] || ipc_fail "await of an unknown job exited $rc, expected 6 (refused): $(cat "$IPC_DIR/e.err")"
ipc_hold gpu
J3=$(ipc_submit --zkey $F/circuit.zkey --request-id cr-3 $F/witness-1.wtns)
"$ZKPIPE" await "$J3" --timeout 0.5 >/dev/null 2>&1; rc=$?
[ $rc = 3 ] || ipc_fail "await timeout exited $rc, expected 3"
ipc_release gpu
"$ZKPIPE" await "$J3" --timeout 120 >/dev/null 2>&1 || ipc_fail "await J3"
"$ZKPIPE" submit --zkey $F/circuit.zkey --request-id cr-bad $FIX/bls12381_chain/witness-0.wtns >"$IPC_DIR/jb" || ipc_fail "submit mismatched"
"$ZKPIPE" await "$(cat "$IPC_DIR/jb")" --timeout 120 >/dev/null 2>&1; rc=$?
[ $rc = 1 ] || ipc_fail "await of a job whose partition failed exited $rc, expected 1"

EMPTY=$IPC_DIR/nobroker; mkdir -m 700 "$EMPTY"
"$ZKPIPE" status --runtime-dir "$EMPTY" --broker-timeout 1 2>"$IPC_DIR/e.err"; rc=$?
[ $rc = 5 ] || ipc_fail "status without a broker exited $rc, expected 5"
grep -q "no broker socket" "$IPC_DIR/e.err" || ipc_fail "no-broker message: $(cat "$IPC_DIR/e.err")"
# a socket file nobody serves (a broker that died without cleaning up): bounded by --broker-timeout
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$EMPTY/broker.sock"
"$ZKPIPE" status --runtime-dir "$EMPTY" --broker-timeout 2 2>"$IPC_DIR/e.err"; rc=$?
[ $rc = 5 ] || ipc_fail "status against a dead socket exited $rc, expected 5"
grep -q "no answer from the broker" "$IPC_DIR/e.err" || ipc_fail "dead-socket message: $(cat "$IPC_DIR/e.err")"
"$ZKPIPE" --help | grep -q "5  broker unreachable" || ipc_fail "--help does not list the exit codes"
# issue 9 item 8: an out-of-range --threads says what is wrong, not only the usage line
"$ZKPIPE" prove $F/circuit.zkey $F/witness-0.wtns "$IPC_DIR/x.json" "$IPC_DIR/y.json" --threads 99999 2>"$IPC_DIR/e.err"; rc=$?
[ $rc = 2 ] && grep -q -- "--threads must be a whole number from 0 (all CPUs) to 4096, got '99999'" "$IPC_DIR/e.err" ||
  ipc_fail "--threads 99999: rc $rc: $(cat "$IPC_DIR/e.err")"
ipc_log "restart and exit codes ok"
