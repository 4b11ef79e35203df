#!/usr/bin/env bash
# input.sh ZKPIPE SOURCE_ROOT - jobs submitted with input.json files (issue 28), two synthesizers: a synthesizer
# computes each witness from its input with the circuit's wasm (registered once, cached under
# the state directory) straight into the slot; every proof verifies and its public.json is
# snarkjs's; the job survives a kill -9 of the broker while its inputs wait (journal schema 2
# keeps the wasm, the inline inputs stay under <state dir>/inline); the witness time shows in
# status / metrics / trace; a job mixing good and bad inputs (unknown signal, missing signal,
# failed circom assert, a generator that never ends) fails exactly the bad partitions with an
# input error carrying the reason, and the group keeps serving.
. "$(dirname "$0")/durable_lib.sh"
dur_init input "$1" "$2" --synths 2 --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10 --witness-timeout-ms 3000 \
  --http-listen 127.0.0.1:0
ipc_wait_workers 2 1 1   # two synthesizers: both register the wasm into one cache

# 1. good inputs on both curves, through the CLI (inline bodies), one job held across a broker kill -9
for c in bn128_chain bls12381_chain; do
  F=$FIX/$c
  [ $c = bn128_chain ] && ipc_hold synth
  J=$(ipc_submit --zkey $F/circuit.zkey --wasm $F/circuit.wasm --input --request-id in-$c $F/input-{0..7}.json)
  if [ $c = bn128_chain ]; then
    dur_kill_broker      # the accepted inputs must come back from the journal
    ipc_release synth
  fi
  "$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/$c" || ipc_fail "await $c"
  ipc_verify_all "$IPC_DIR/out/$c" $F/verification_key.json 8
  for i in 0 1 2 3 4 5 6 7; do
    cmp -s "$IPC_DIR/out/$c/public-$i.json" "$F/public_rs0-$i.json" || ipc_fail "$c public-$i.json differs from snarkjs"
  done
  ipc_log "$c: 8/8 proofs from inputs verify"
done
ls "$ZP_STATE_DIR/wasm/"*.so >/dev/null 2>&1 || ipc_fail "no registered generator under the state directory's wasm/"
[ "$(ipc_jq '[.workers[] | select(.role == "synth" and .done > 0)] | length')" = 2 ] ||
  ipc_log "note: one synthesizer took all partitions (allowed; both registered)"
# witness time in the stage timings: status, metrics, trace
ipc_status | jq -e '.' >/dev/null
"$ZKPIPE" metrics > "$IPC_DIR/metrics.txt" || ipc_fail "metrics"
grep -q 'zkpipe_stage_phase_seconds_total{stage="synth",phase="witness"}' "$IPC_DIR/metrics.txt" || ipc_fail "no witness phase in the metrics"
"$ZKPIPE" trace --out "$IPC_DIR/trace.json" 2>/dev/null || ipc_fail "trace"
jq -e '[.traceEvents[] | select(.args.witness_ns != null)] | length >= 16' "$IPC_DIR/trace.json" >/dev/null ||
  ipc_fail "trace: synth slices without witness_ns"
"$ZKPIPE" status > "$IPC_DIR/status.txt"; cat "$IPC_DIR/status.txt" >&2
grep 'limiting stage' "$IPC_DIR/status.txt" | grep -q 'witness generation' || ipc_fail "no witness time on the limiting-stage line"

RQ0=$(ipc_jq '.counters.requeued.synth')   # the broker's kill -9 requeued the held partition
# 2. bad inputs beside good ones, on the guard generator (the chain's constraints, plus an
# assert failing for x == 3 and an endless loop for x == 4)
F=$FIX/bn128_chain
B=$IPC_DIR/bad; mkdir -p "$B"
echo '{"x":"2","k":["5","7","11"],"zz":"1"}' > "$B/unknown.json"
echo '{"x":"2"}' > "$B/missing.json"
echo '{"x":"3","k":["5","7","11"]}' > "$B/assert.json"
echo '{"x":"4","k":["5","7","11"]}' > "$B/loop.json"
echo '{"x":"2","k":["5","7"]}' > "$B/short.json"
JB=$(ipc_submit --zkey $F/circuit.zkey --wasm $F/guard.wasm --input --request-id bad-inputs \
     $F/input-0.json "$B/unknown.json" "$B/assert.json" $F/input-2.json "$B/loop.json" "$B/missing.json" "$B/short.json")
"$ZKPIPE" await "$JB" --timeout 300 --out "$IPC_DIR/out/bad" >"$IPC_DIR/await.out" 2>"$IPC_DIR/await.err"; rc=$?
cat "$IPC_DIR/await.err" >&2
[ $rc = 1 ] || ipc_fail "await on the job with bad inputs exited $rc, expected 1"
line() { grep "partition $1 failed" "$IPC_DIR/await.err" || ipc_fail "partition $1 did not fail"; }
line 1 | grep -q 'zz' || ipc_fail "unknown signal: the message does not name it"
line 2 | grep -q 'Error in template' || ipc_fail "failed assert: circom's message is missing"
line 4 | grep -qi 'ms\|time' || ipc_fail "endless loop: no timeout reported"
line 5 | grep -q 'signal "k" missing' || ipc_fail "missing signal: not named"
line 6 | grep -q 'signal "k"' || ipc_fail "wrong length: the signal is not named"
for i in 1 2 4 5 6; do line $i | grep -q 'after 1 attempt' || ipc_fail "bad input $i was retried"; done
for i in 0 3; do
  "$ZKPIPE" verify $F/verification_key.json "$IPC_DIR/out/bad/public-$i.json" "$IPC_DIR/out/bad/proof-$i.json" >/dev/null ||
    ipc_fail "good partition $i of the job with bad inputs does not verify"
done

# 3. a refused body: not JSON
echo '{"x": 2,' > "$B/broken.json"
"$ZKPIPE" submit --zkey $F/circuit.zkey --wasm $F/guard.wasm --input "$B/broken.json" 2>"$IPC_DIR/sub.err" &&
  ipc_fail "a broken input.json was accepted"
grep -q 'input 0' "$IPC_DIR/sub.err" || { cat "$IPC_DIR/sub.err" >&2; ipc_fail "the refusal does not name the input"; }

# 3b. a wasm that is no module: a registration error for each partition, never a crash
head -c 3000 /dev/urandom > "$B/junk.wasm"
printf '\0asm\1\0\0\0\377\377' > "$B/trunc.wasm"
for w in junk trunc; do
  JW=$(ipc_submit --zkey $F/circuit.zkey --wasm "$B/$w.wasm" --input --request-id bad-wasm-$w $F/input-0.json $F/input-1.json)
  "$ZKPIPE" await "$JW" --timeout 300 >/dev/null 2>"$IPC_DIR/await-$w.err"; rc=$?
  cat "$IPC_DIR/await-$w.err" >&2
  [ $rc = 1 ] || ipc_fail "$w.wasm: await exited $rc, expected 1"
  [ "$(grep -c 'witness generator' "$IPC_DIR/await-$w.err")" = 2 ] || ipc_fail "$w.wasm: no registration error on both partitions"
done
[ "$(ipc_jq '.counters.deaths.synth')" = 0 ] || ipc_fail "a synthesizer died on a hostile wasm"

# 4. the HTTP API takes inputs inline too ("wasm" + "inputs"), and refuses bad bodies by name
ADDR=$(ipc_jq '.metrics_listen // empty')
case "$ADDR" in 127.0.0.1:[0-9]*) ;; *) ipc_fail "no HTTP listener in status: '$ADDR'";; esac
code() { curl -s -o "$IPC_DIR/body" -w '%{http_code}' "$@"; }
BODY="{\"zkey\": \"$F/circuit.zkey\", \"wasm\": \"$F/circuit.wasm\", \"inputs\": [$(cat $F/input-6.json), $(cat $F/input-7.json)], \"request_id\": \"http-in\"}"
[ "$(code -X POST -d "$BODY" http://$ADDR/v1/jobs)" = 201 ] || { cat "$IPC_DIR/body" >&2; ipc_fail "POST with inputs"; }
JH=$(jq -r .id "$IPC_DIR/body")
"$ZKPIPE" await "$JH" --timeout 300 --out "$IPC_DIR/out/http" >/dev/null || ipc_fail "the HTTP job with inputs failed"
ipc_verify_all "$IPC_DIR/out/http" $F/verification_key.json 2
cmp -s "$IPC_DIR/out/http/public-1.json" "$F/public_rs0-7.json" || ipc_fail "HTTP job: public.json differs from snarkjs"
[ "$(code -X POST -d "{\"zkey\": \"$F/circuit.zkey\", \"inputs\": [{\"x\": 1}]}" http://$ADDR/v1/jobs)" = 400 ] &&
  grep -q 'wasm' "$IPC_DIR/body" || ipc_fail "inputs without wasm: not refused by name"
[ "$(code -X POST -d "{\"zkey\": \"$F/circuit.zkey\", \"wasm\": \"$F/circuit.wasm\", \"inputs\": [{\"x\": [1,}]}" http://$ADDR/v1/jobs)" = 400 ] &&
  grep -q 'inputs\[0\]' "$IPC_DIR/body" || { cat "$IPC_DIR/body" >&2; ipc_fail "a malformed input: not refused by name"; }

# 5. the group still serves after all that
J=$(ipc_submit --zkey $F/circuit.zkey --wasm $F/circuit.wasm --input --request-id after $F/input-{4..5}.json)
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/after" >/dev/null || ipc_fail "the job after the bad inputs failed"
ipc_verify_all "$IPC_DIR/out/after" $F/verification_key.json 2
ipc_all_free
[ "$(ipc_jq '.counters.requeued.synth')" = "$RQ0" ] || ipc_fail "a bad input was requeued"

# 6. a schema-1 journal (before jobs.wasm) is upgraded in place at open, its jobs kept
JR=$(ipc_jq .journal.path)
dur_stop_group
python3 - "$JR" <<'PY' || ipc_fail "could not make a schema-1 journal"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("ALTER TABLE jobs DROP COLUMN wasm"); db.execute("PRAGMA user_version=1"); db.commit(); db.close()
PY
dur_start_group --synths 2 --slots 4 --max-domain 1024 --heartbeat-ms 200 --liveness 10
grep -q 'upgraded from schema 1 to 2' "$IPC_DIR/up.log" || ipc_fail "no upgrade logged"
"$ZKPIPE" await "$JH" --timeout 60 --out "$IPC_DIR/out/http2" >/dev/null || ipc_fail "a job of the schema-1 journal is lost"
ipc_verify_all "$IPC_DIR/out/http2" $F/verification_key.json 2
J=$(ipc_submit --zkey $F/circuit.zkey --wasm $F/circuit.wasm --input --request-id after-upgrade $F/input-3.json)
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/up2" >/dev/null || ipc_fail "a job with inputs after the upgrade failed"
ipc_verify_all "$IPC_DIR/out/up2" $F/verification_key.json 1
echo "ipc input: OK"
