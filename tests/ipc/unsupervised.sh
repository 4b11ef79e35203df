#!/usr/bin/env bash
# unsupervised.sh ZKPIPE SOURCE_ROOT - the group as systemd runs it (scripts/systemd): broker
# and stages started on their own, no `zkpipe up`, no tokens (issue 9 items 2, 3). The pid is
# the connection's (SO_PEERCRED); a HELLO naming another pid is refused; a (role, instance)
# held by a live process is refused to a second one; a silent worker is declared dead but
# never signalled by the broker (its unit's watchdog would restart it); real stages prove a job.
set -u
ZKPIPE=$1; SRC=$2; FAKE=${ZP_FAKEPEER:?}; FIX=$SRC/tests/fixtures; F=$FIX/bn128_chain
BIN=$(cd "$(dirname "$ZKPIPE")/.." && pwd)
D=$(mktemp -d /tmp/zkpipe-ipc-unsup.XXXXXX); chmod 700 "$D"
export ZP_RUNTIME_DIR=$D/run ZP_STATE_DIR=$D/state
mkdir -p "$ZP_RUNTIME_DIR" && chmod 700 "$ZP_RUNTIME_DIR"
A=unsup-$$
PIDS=()
fail() { echo "FAIL: $*" >&2; tail -40 "$D/log" >&2; exit 1; }
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
status() { "$ZKPIPE" status --json; }
jqs() { status | jq -r "$1"; }
wait_for() { for _ in $(seq 1 1200); do [ "$(status 2>/dev/null | jq -r "$1" 2>/dev/null)" = true ] && return 0; sleep 0.05; done; fail "timed out: $1"; }

"$BIN/broker/zkpipe-broker" --arena "$A" --slots 4 --max-domain 1024 --heartbeat-ms 100 --liveness 10 >>"$D/log" 2>&1 &
PIDS+=($!)
wait_for '.slots.total == 4'

# a HELLO naming another process's pid is refused
sleep 600 & VICTIM=$!; PIDS+=($VICTIM)
out=$("$FAKE" hello gpu 5 "$VICTIM"); rc=$?
[ $rc = 3 ] || fail "HELLO naming pid $VICTIM accepted (rc $rc: $out)"
echo "$out" | grep -q "connection is from pid" || fail "no reason given: $out"

# one live process per (role, instance): a second claimant is refused while the first lives
"$FAKE" hello gpu 5 self 3 beat >"$D/first" 2>&1 &
FIRST=$!; PIDS+=($FIRST)
for _ in $(seq 1 100); do grep -q accepted "$D/first" && break; sleep 0.05; done
grep -q accepted "$D/first" || fail "first HELLO for gpu #5 (its own pid) not accepted: $(cat "$D/first")"
out=$("$FAKE" hello gpu 5 self); rc=$?
[ $rc = 3 ] || fail "a second live process got gpu #5 (rc $rc: $out)"
echo "$out" | grep -q "held by pid $FIRST, which is still running" || fail "reason: $out"
wait "$FIRST" || fail "first fakepeer failed"
# once it is gone the identity is free again; a silent holder is declared dead, never signalled
"$FAKE" hello gpu 5 self 60 >"$D/second" 2>&1 &
SECOND=$!; PIDS+=($SECOND)
wait_for '.counters.fence_unsupervised >= 1'
grep -q accepted "$D/second" || fail "gpu #5 not free after its holder exited: $(cat "$D/second")"
kill -0 "$SECOND" 2>/dev/null || fail "the broker killed silent worker $SECOND"
grep -q "must be fenced (missed heartbeats.*no supervisor holds it" "$D/log" || fail "no log line about the unfenced worker"
[ "$(jqs .counters.hello_refused)" -ge 2 ] || fail "refused HELLOs not counted"

# real stages, started the way the systemd units start them, prove a job
"$BIN/synth/zkpipe-synth" --arena "$A" --instance 0 --heartbeat-ms 100 >>"$D/log" 2>&1 & PIDS+=($!)
"$BIN/gpu-worker/zkpipe-gpu-worker" --arena "$A" --instance 0 --backend cpu --heartbeat-ms 100 >>"$D/log" 2>&1 & PIDS+=($!)
"$BIN/finalizer/zkpipe-finalizer" --arena "$A" --instance 0 --heartbeat-ms 100 >>"$D/log" 2>&1 & PIDS+=($!)
wait_for '([.workers[] | select(.role == "synth" or .role == "final" or (.role == "gpu" and .instance == 0))] | length) == 3'
J=$("$ZKPIPE" submit --zkey $F/circuit.zkey --request-id unsup $F/witness-{0..1}.wtns) || fail submit
"$ZKPIPE" await "$J" --timeout 300 --out "$D/out" >/dev/null || fail await
for i in 0 1; do "$ZKPIPE" verify $F/verification_key.json "$D/out/public-$i.json" "$D/out/proof-$i.json" >/dev/null || fail "proof $i"; done
echo "ipc unsupervised: OK"
