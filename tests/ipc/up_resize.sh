#!/usr/bin/env bash
# up_resize.sh ZKPIPE SOURCE_ROOT - a running group re-sizes its finalizers from the broker's
# measured stage rates (cli/up_size.c up_resize_want, cli/up.c resize_poll):
#   - started with rates that claim a cheap finalizer (--stage-ms final=10@1), the plan is one
#     finalizer of one thread; the finalizers are then made slow for real
#     (ZP_TEST_FINAL_EXTRA_MS: 400 ms more per task), so the finalizer stage limits;
#   - the group grows to what the measured rates call for, capped by --cores 4 at 4
#     finalizers of 1 thread (the log says it was capped), never beyond;
#   - the growth is logged with the measured rates, every partition of the job completes and
#     verifies (nothing is lost while finalizers join), and status shows the new finalizers.
. "$(dirname "$0")/lib.sh"
export ZP_TEST_FINAL_EXTRA_MS=400
ipc_init upresize "$1" "$2" --slots 8 --max-domain 1024 --threads 1 --finalizers auto \
  --stage-ms gpu=1000,final=10@1 --final-threads 1 --cores 4 --resize-every 1
unset ZP_TEST_FINAL_EXTRA_MS
grep -q "finalizers: 1 x 1 thread(s)" "$IPC_DIR/up.log" || ipc_fail "the plan is not 1 finalizer x 1 thread"
[ "$(ipc_jq '[.workers[] | select(.role == "final")] | length')" = 1 ] || ipc_fail "want 1 finalizer at start"
F=$FIX/bn128_chain
W=()
for i in $(seq 1 24); do W+=("$F/witness-$((i % 2)).wtns"); done
J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs "${W[@]}")
ipc_wait_for '[.workers[] | select(.role == "final")] | length >= 2' 180
grep -q "finalizers: 1 -> [2-4] (measured: the finalizer stage limits" "$IPC_DIR/up.log" ||
  ipc_fail "no log line for the growth with the measured rates"
"$ZKPIPE" await "$J" --timeout 600 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 24
n=$(ipc_jq '[.workers[] | select(.role == "final")] | length')
[ "$n" -le 4 ] || ipc_fail "$n finalizers: more than --cores 4 / 1 thread allow"
[ "$n" = 4 ] || ipc_fail "the group stopped at $n finalizers, want 4 (the slow finalizer limits until the cap)"
grep -q "capped by the cores" "$IPC_DIR/up.log" || ipc_fail "the cap is not logged"
[ "$(ipc_jq '[.workers[] | select(.role == "final") | .done >= 1] | all')" = true ] || ipc_fail "a new finalizer got no work"
echo "ipc up_resize: OK"
