#!/usr/bin/env bash
# durable_corrupt.sh ZKPIPE SOURCE_ROOT - a journal that cannot be trusted stops the broker
# at start with a clear message (never a silent empty start): garbage over the header, a
# file truncated to zero, a file cut in the middle, a foreign SQLite file. --reset-state
# moves the bad file aside and starts empty.
. "$(dirname "$0")/durable_lib.sh"
dur_init dcorrupt "$1" "$2" --slots 2 --max-domain 1024
F=$FIX/bn128_chain
BROKER=$(dirname "$ZKPIPE")/../broker/zkpipe-broker
[ -x "$BROKER" ] || ipc_fail "no broker binary at $BROKER"
for i in $(seq 0 7); do
  J=$(ipc_submit --zkey $F/circuit.zkey --request-id dc-$i $F/witness-$i.wtns)
done
"$ZKPIPE" await "$J" --timeout 300 >/dev/null || ipc_fail "await"
JR=$(ipc_jq .journal.path)
[ -f "$JR" ] || ipc_fail "no journal at $JR"
[ "$(stat -c %a "$JR")" = 600 ] || ipc_fail "journal mode is $(stat -c %a "$JR"), expected 600"
dur_stop_group
cp "$JR" "$IPC_DIR/good.journal"

# start the broker alone on the journal; it must fail and name the journal
expect_refusal() {
  local what=$1 out rc
  out=$(timeout 20 "$BROKER" --runtime-dir "$ZP_RUNTIME_DIR" --arena "$IPC_ARENA" --slots 2 --max-domain 1024 2>&1); rc=$?
  [ $rc = 1 ] || ipc_fail "$what: broker exited $rc (expected 1): $out"
  echo "$out" | grep -q "cannot use the journal" || ipc_fail "$what: unclear message: $out"
  echo "$out" | grep -q -- "--reset-state" || ipc_fail "$what: message does not name --reset-state: $out"
  ipc_log "$what: $(echo "$out" | head -1)"
}
printf 'this is not a database, it is garbage that overwrote the header' | dd of="$JR" conv=notrunc status=none
expect_refusal "garbage header"
: > "$JR"
expect_refusal "truncated to zero"
cp "$IPC_DIR/good.journal" "$JR"; truncate -s $(( $(stat -c %s "$JR") / 2 )) "$JR"
expect_refusal "cut in half"
rm -f "$JR"; command -v sqlite3 >/dev/null && { sqlite3 "$JR" 'CREATE TABLE t (x); PRAGMA user_version=7;'; expect_refusal "foreign database"; }
cp "$IPC_DIR/good.journal" "$JR"
dd if=/dev/urandom of="$JR" bs=1 seek=5000 count=3000 conv=notrunc status=none
expect_refusal "garbled pages"

# --reset-state: the bad file is moved aside, the broker starts empty and serves
timeout 60 "$BROKER" --runtime-dir "$ZP_RUNTIME_DIR" --arena "$IPC_ARENA" --slots 2 --max-domain 1024 --reset-state \
  >"$IPC_DIR/reset.log" 2>&1 &
B=$!
ipc_wait_for '.jobs.total == 0' 30
ls "$JR".bad-* >/dev/null 2>&1 || ipc_fail "--reset-state did not keep the old journal aside"
kill -TERM $B; wait $B || ipc_fail "broker after --reset-state exited with an error"
# and the good journal still loads: the 8 jobs are back
cp "$IPC_DIR/good.journal" "$JR"
dur_start_group --slots 2 --max-domain 1024
[ "$(ipc_jq '.jobs.done')" = 8 ] || ipc_fail "the good journal did not load 8 finished jobs"
echo "ipc durable_corrupt: OK"
