#!/usr/bin/env bash
# stages_limit.sh ZKPIPE SOURCE_ROOT - issue 10 item 8 and the synth part of item 7, through
# real processes:
#   1. the finalizer sizing rule of `zkpipe up` (cli/up_size.c) picks the count and threads
#      expected for given rates (`--dry-run` plans), and a group started with measured rates
#      really runs that many finalizers;
#   2. `zkpipe status` (text and JSON, also what GET /v1/status serves) names the stage that
#      limits throughput: none while idle ("nothing is queued or running"), the stage whose
#      work is held while it has not finished a task, and once every stage is measured the one
#      with the lowest workers / mean task time;
#   3. no per-partition O(n) heap allocation in the synthesizer and the finalizer: with the
#      LD_PRELOAD counter tests/alloc_count.c, 5 more partitions (with the r1cs check) add no
#      allocation of n_constraints*4 bytes or more in those processes (skipped in sanitizer
#      builds, whose malloc is ASan's).
. "$(dirname "$0")/lib.sh"

ZK=$1
plan() { ZP_RUNTIME_DIR=$PLAN_DIR "$ZK" up --dry-run "$@" 2>/dev/null | head -1; }
expect_plan() {   # expect_plan "N finalizer(s) x T thread(s)" up-options...
  local want=$1; shift
  local got; got=$(plan "$@")
  case $got in *"$want"*) ;; *) echo "FAIL: zkpipe up $* --dry-run: want '$want', got '$got'" >&2; exit 1;; esac
}
PLAN_DIR=$(mktemp -d /tmp/zkpipe-ipc-plan.XXXXXX)
trap 'rm -rf "$PLAN_DIR"' EXIT
# measured: 1 GPU task/s, a finalizer task 2.5 s on 1 thread: 1.2 x 2.5 = 3 threads
expect_plan "3 finalizer(s) x 1 thread(s)" --backend cpu --stage-ms gpu=1000,final=2500@1 --final-threads 1 --cores 16
expect_plan "1 finalizer(s) x 3 thread(s)" --backend cpu --stage-ms gpu=1000,final=2500@1 --cores 16
# 2 workers at 0.2 s, finalizer 1 s on 4 threads: 1.2 x 10/s x 4 thread-s = 48 threads; 8 a finalizer, 32 cores
expect_plan "4 finalizer(s) x 8 thread(s)" --backend cpu --gpu 2 --stage-ms gpu=200,final=1000@4 --cores 32
ZP_RUNTIME_DIR=$PLAN_DIR "$ZK" up --dry-run --backend cpu --gpu 2 --stage-ms gpu=200,final=1000@4 --cores 32 2>/dev/null |
  grep -q "SHORT OF CORES" || { echo "FAIL: 48 threads on 32 cores not called short" >&2; exit 1; }
# the CPU backend's model: 1.2 x 0.75 x T_g
expect_plan "1 finalizer(s) x 2 thread(s)" --backend cpu --threads 2 --cores 2
expect_plan "1 finalizer(s) x 4 thread(s)" --backend cpu --threads 4 --cores 8
# explicit overrides win
expect_plan "5 finalizer(s) x 2 thread(s)" --backend cpu --finalizers 5 --final-threads 2 --stage-ms gpu=1000,final=1000@1
# CUDA devices without measurements: the device model (4 fake devices x 64 x 0.75 x 1.2 = 230 threads)
ZP_TEST_FAKE_GPUS=4 expect_plan "8 finalizer(s) x 8 thread(s)" --cores 64
ZP_TEST_FAKE_GPUS=1 expect_plan "1 finalizer(s) x 7 thread(s)" --cores 64 --device-speedup 7
# malformed rates are refused with a message
ZP_RUNTIME_DIR=$PLAN_DIR "$ZK" up --dry-run --stage-ms gpu=0,final=5 2>&1 | grep -q "expected gpu=MS,final=MS" ||
  { echo "FAIL: --stage-ms gpu=0 accepted" >&2; exit 1; }
rm -rf "$PLAN_DIR"
trap - EXIT

# ---- a real group sized by the rule: 3 finalizers of 1 thread
SANITIZED=0
ldd "$ZK" 2>/dev/null | grep -q "libasan\|libubsan" && SANITIZED=1
KEYS=$(mktemp -d /tmp/zkpipe-ipc-stagekey.XXXXXX)
"$ZK" testkey --curve bn128 --power 13 --publics 1 --witnesses 2 --seed 12 --threads 1 --out "$KEYS" \
  --insecure-known-tau >/dev/null 2>&1 || { rm -rf "$KEYS"; echo "FAIL: testkey" >&2; exit 1; }
NCONS=$((8192 - 2))   # threshold 4 bytes a constraint: above every fixed-size per-task allocation (a task is ~18 KiB)
if [ $SANITIZED = 0 ] && [ -n "${ZP_ALLOC_SHIM:-}" ] && [ -f "$ZP_ALLOC_SHIM" ]; then
  ALLOC_LOG=$KEYS/alloc.log
  export LD_PRELOAD=$ZP_ALLOC_SHIM ZP_ALLOC_LOG=$ALLOC_LOG ZP_ALLOC_MIN=$((NCONS * 4))
fi
TOK=$KEYS/tokens; echo "tok-$$" >"$TOK"
ipc_init stages "$ZK" "$2" --http-listen 127.0.0.1:0 --http-token-file "$TOK" --slots 4 --max-domain 8192 --max-vars 8193 --threads 1 \
  --stage-ms gpu=1000,final=2500@1 --final-threads 1 --cores 16
unset LD_PRELOAD
trap 'ipc_cleanup; rm -rf "$KEYS"' EXIT
ipc_wait_workers 1 1 3
[ "$(ipc_jq '[.workers[] | select(.role == "final")] | length')" = 3 ] || ipc_fail "want exactly 3 finalizers"
grep -q "finalizers: 3 x 1 thread(s)" "$IPC_DIR/up.log" || ipc_fail "up did not log its sizing decision"

ADDR=$(ipc_jq '.metrics_listen // empty')
http_status() {   # GET /v1/status (the HTTP status): the same JSON
  command -v curl >/dev/null || { ipc_status; return; }
  curl -sf -H "Authorization: Bearer tok-$$" "http://$ADDR/v1/status"
}
# idle: no stage limits
[ "$(http_status | jq -r '.stages.limiting')" = null ] || ipc_fail "HTTP status: idle group names a limiting stage"
[ "$(ipc_jq '.stages.limiting')" = null ] || ipc_fail "idle group names a limiting stage"
ipc_jq '.stages.limiting_why' | grep -q "nothing is queued or running" || ipc_fail "idle reason"
"$ZK" status | grep -q "^limiting stage: none (no stage is limiting: nothing is queued or running)" ||
  ipc_fail "text status: idle line"

W=("$KEYS"/witness-0.wtns "$KEYS"/witness-1.wtns)
# warm-up: one partition on each finalizer (held until all three hold one), so that every
# process has loaded the key and r1cs and grown its scratch: the allocation baseline
# (first the synth held too: a stage with work and no finished task limits, the most upstream)
ipc_hold synth
ipc_hold final
J=$(ipc_submit --zkey "$KEYS/circuit.zkey" --r1cs "$KEYS/circuit.r1cs" --request-id stages-warm "${W[0]}" "${W[1]}" "${W[0]}")
ipc_wait_for '.queues.synth.running >= 1' 120
[ "$(ipc_jq '.stages.limiting')" = synth ] || ipc_fail "held synth not limiting: $(ipc_jq -c .stages)"
ipc_jq '.stages.limiting_why' | grep -q "has work and has not finished a task yet" || ipc_fail "synth reason"
ipc_release synth
ipc_wait_for '.queues.final.running == 3' 300
[ "$(ipc_jq '.stages.limiting')" = final ] || ipc_fail "held finalizers not limiting: $(ipc_jq -c .stages)"
"$ZK" status | grep -q "^limiting stage: final (it has work and has not finished a task yet)" || ipc_fail "text: final"
[ "$(http_status | jq -r '.stages.limiting')" = final ] || ipc_fail "HTTP status: final not limiting"
ipc_release final
"$ZK" await "$J" --timeout 300 --out "$IPC_DIR/out/w" >/dev/null || ipc_fail "await warm-up"
ipc_verify_all "$IPC_DIR/out/w" "$KEYS/verification_key.json" 3
[ "$(ipc_jq '[.workers[] | select(.role == "final") | .done >= 1] | all')" = true ] || ipc_fail "a finalizer got no work"
sleep 0.5
pid_of() { ipc_jq "[.workers[] | select(.role == \"$1\")] | map(.pid) | join(\" \")"; }
count_allocs() {   # allocations >= ZP_ALLOC_MIN logged by the pids $*
  local n=0 p
  for p in "$@"; do n=$((n + $(awk -v p="$p" '$1 == p' "$ALLOC_LOG" 2>/dev/null | wc -l))); done
  echo $n
}
if [ -n "${ALLOC_LOG:-}" ]; then
  SYN=$(pid_of synth); FIN=$(pid_of final); GPU=$(pid_of gpu)
  A0s=$(count_allocs $SYN); A0f=$(count_allocs $FIN); A0g=$(count_allocs $GPU)
fi

# the finalizers held: final has work and no finished task yet -> it limits
ipc_hold final
J=$(ipc_submit --zkey "$KEYS/circuit.zkey" --r1cs "$KEYS/circuit.r1cs" --request-id stages-5 \
  "${W[0]}" "${W[1]}" "${W[0]}" "${W[1]}" "${W[0]}")
ipc_wait_for '.queues.final.running + .queues.final.total >= 3' 300
# every stage has finished tasks (the warm-up); with the finalizers held, the lowest rate
# names the limiter: check it is the argmin of the reported rates
ipc_status >"$IPC_DIR/st.json"
LIM=$(jq -r '.stages.limiting' "$IPC_DIR/st.json")
MIN=$(jq -r '.stages | [to_entries[] | select(.value | type == "object") | {k: .key, r: .value.partitions_per_s}] |
             min_by(.r) | .k' "$IPC_DIR/st.json")
[ "$LIM" != null ] || ipc_fail "a running group names no limiting stage: $(jq -c .stages "$IPC_DIR/st.json")"
[ "$LIM" = "$MIN" ] || ipc_fail "limiting $LIM is not the slowest stage $MIN: $(jq -c .stages "$IPC_DIR/st.json")"
for s in synth gpu final; do
  [ "$(jq -r ".stages.$s.tasks >= 1 and .stages.$s.partitions_per_s > 0" "$IPC_DIR/st.json")" = true ] ||
    ipc_fail "stage $s not measured: $(jq -c .stages "$IPC_DIR/st.json")"
done
[ "$(jq -r '.stages.final.workers' "$IPC_DIR/st.json")" = 3 ] || ipc_fail "final workers"
"$ZK" status | grep -q "^limiting stage: $LIM (" || ipc_fail "text status does not name $LIM"
"$ZK" metrics | grep -q "^zkpipe_stage_limiting{stage=\"$LIM\"} 1" || ipc_fail "metrics: limiting gauge"
ipc_release final
"$ZK" await "$J" --timeout 300 --out "$IPC_DIR/out/j" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out/j" "$KEYS/verification_key.json" 5
ipc_all_free
[ "$(ipc_jq '.stages.limiting')" = null ] || ipc_fail "limiting stage after the work is done"
[ "$(ipc_jq '.stages.final.tasks >= 8 and .stages.gpu.tasks >= 8 and .stages.synth.tasks >= 8')" = true ] ||
  ipc_fail "task counts: $(ipc_jq -c .stages)"
"$ZK" status | grep -q "^finalizer sizing: zkpipe up --stage-ms gpu=[0-9]*,final=[0-9]*@1$" ||
  ipc_fail "text status: no sizing hint"

# no per-partition O(n) allocation in synth and finalizer
if [ -n "${ALLOC_LOG:-}" ]; then
  A1s=$(count_allocs $SYN); A1f=$(count_allocs $FIN); A1g=$(count_allocs $GPU)
  ipc_log "allocations >= $ZP_ALLOC_MIN bytes over 5 partitions: synth $((A1s - A0s)), final $((A1f - A0f)), gpu $((A1g - A0g))"
  [ "$A0s" -ge 1 ] || ipc_fail "the allocation counter saw nothing in the synth (the key load allocates)"
  new_allocs() { local p; for p in $SYN; do awk -v p="$p" '$1 == p {print $2}' "$ALLOC_LOG" | tail -n +$((A0s + 1)); done | tr '\n' ' '; }
  [ "$(ipc_jq '[.workers[] | select(.role == "final") | .done] | add')" -ge 8 ] || ipc_fail "finalizer done counts"
  [ $((A1s - A0s)) = 0 ] || ipc_fail "synth: $((A1s - A0s)) O(n) heap allocation(s) in 5 partitions (bytes: $(new_allocs))"
  [ $((A1f - A0f)) = 0 ] || ipc_fail "finalizer: $((A1f - A0f)) O(n) heap allocation(s) in 5 partitions"
else
  ipc_log "allocation count skipped (sanitizer build or no shim)"
fi
echo "ok: stages_limit"
