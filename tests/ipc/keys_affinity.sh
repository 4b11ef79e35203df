#!/usr/bin/env bash
# keys_affinity.sh ZKPIPE SOURCE_ROOT - issue 10 item 4: two circuits alternating through a group
# with 2 GPU workers whose --key-budget holds one proving key each. Without key affinity
# (--key-affinity off) the broker gives partitions to whichever worker has the most credit, so a
# worker alternates keys and reloads one per partition (printed, not asserted: it depends on
# the timing); with affinity (the default) each key stays on a worker: the key loads counted
# in the workers' logs stay at one per worker plus at most two switches of an idle worker at
# the tail. The status (JSON and text) shows worker -> keys and the same load counts; every
# proof verifies. Then `zkpipe keys` on the running group: list (store objects held by the
# workers' pids, the broker's worker -> keys), evict of a held key refused, preload of a third
# key into the store and its eviction, --force eviction of a held key (the workers keep their
# mapping: the next job still proves and verifies).
# Prints "keys_affinity: loads without affinity N, with affinity M (P partitions)".
. "$(dirname "$0")/lib.sh"
ZKPIPE=$1
A=$2/tests/fixtures/bn128_chain
B=$2/tests/fixtures/bls12381_chain
C=$2/tests/fixtures/bn128_mix
JOBS=8

# the budget: the larger key's store object (its bytes as the key cache counts them), not both
probe=ipc-keys-probe-$$
"$ZKPIPE" keys preload --arena "$probe" "$A/circuit.zkey" "$B/circuit.zkey" >/dev/null || { echo "FAIL: probe preload" >&2; exit 1; }
sizes=$("$ZKPIPE" keys list --arena "$probe" --no-broker | awk '/ ready /{print $3}')
"$ZKPIPE" keys evict --all --arena "$probe" >/dev/null
BUDGET=$(echo "$sizes" | awk '{b = int($1 * 1024 + 0.5); if (b > m) m = b; s += b} END {if (m >= s) exit 1; print m + 1024}') ||
  { echo "FAIL: key sizes '$sizes'" >&2; exit 1; }
echo "key budget $BUDGET bytes (key objects: $(echo $sizes) KiB)" >&2

one_run() {     # $1 = tag, $2 = on|off
  ipc_init "keys$1" "$ZKPIPE" "${IPC_SRC_ROOT}" --gpu 2 --gpu-credits 2 --slots 8 --max-domain 1024 \
    --heartbeat-ms 200 --key-budget "$BUDGET" --key-affinity "$2"
  ipc_wait_workers 1 2 1
  KEYGLOB="/dev/shm/zkpipe-$(id -u)-$IPC_ARENA-key-"
  trap 'ipc_cleanup; rm -f "$KEYGLOB"*' EXIT
  local jobs=() i
  for i in $(seq 1 $JOBS); do
    if [ $((i % 2)) = 1 ]; then
      jobs+=("A:$(ipc_submit --zkey "$A/circuit.zkey" --request-id "ka-$1-$i" "$A/witness-0.wtns" "$A/witness-1.wtns")")
    else
      jobs+=("B:$(ipc_submit --zkey "$B/circuit.zkey" --request-id "ka-$1-$i" "$B/witness-0.wtns" "$B/witness-1.wtns")")
    fi
  done
  for j in "${jobs[@]}"; do
    local f=${j%%:*} id=${j#*:} dir=$A
    [ "$f" = B ] && dir=$B
    "$ZKPIPE" await "$id" --timeout 300 --quiet --out "$IPC_DIR/out/$id" >/dev/null || ipc_fail "await $id"
    ipc_verify_all "$IPC_DIR/out/$id" "$dir/verification_key.json" 2
  done
  ipc_all_free
  # a key load in a GPU worker is one of these log lines (keycache.c)
  LOADS=$(grep -c "gpu-worker\[[0-9]*\] info: key .*: \(hot (shm)\|cold: parsed\)" "$IPC_DIR/up.log" || true)
  # the workers report the same count (heartbeats: eventually)
  ipc_wait_for "([.workers[] | select(.role == \"gpu\") | .keys.loads] | add) == $LOADS" 60
}

IPC_SRC_ROOT=$2
one_run off off
LOADS_OFF=$LOADS
ipc_cleanup
rm -f "$KEYGLOB"*

one_run on on
LOADS_ON=$LOADS
PARTS=$((JOBS * 2))
echo "keys_affinity: loads without affinity $LOADS_OFF, with affinity $LOADS_ON ($PARTS partitions, 2 GPU workers," \
     "budget one key each)"
ipc_jq '.key_affinity' | grep -qx true || ipc_fail "status does not say key affinity is on"
[ "$LOADS_ON" -ge 2 ] || ipc_fail "only $LOADS_ON key loads with two keys"
[ "$LOADS_ON" -le 4 ] || { ipc_dump; ipc_fail "with affinity the GPU workers loaded keys $LOADS_ON times (want <= 4)"; }
# the budget holds one key per GPU worker
held=$(ipc_jq '[.workers[] | select(.role == "gpu") | .keys.held | length] | map(select(. == 1)) | length')
[ "$held" = 2 ] || ipc_fail "the GPU workers do not hold one key each: $(ipc_jq '[.workers[] | select(.role == "gpu") | .keys]')"
ipc_jq '[.workers[] | select(.role == "gpu") | .keys.held[] | .tier] | all(test("shm"))' | grep -qx true ||
  ipc_fail "a GPU worker's key is not in the shm tier"
ipc_jq '[.workers[] | select(.role == "gpu") | .keys.held[] | .tier] | any(test("device|pinned"))' | grep -qx false ||
  ipc_fail "a CPU-backend GPU worker lists a key as pinned or on a device: $(ipc_jq '[.workers[] | select(.role == "gpu") | .keys.held]')"
"$ZKPIPE" status | grep -A20 "^keys by worker" | grep -q "$A/circuit.zkey" || ipc_fail "text status lacks worker -> keys"

# ---- zkpipe keys on the running group
L=$("$ZKPIPE" keys list --arena "$IPC_ARENA")
echo "$L" | sed 's/^/  /' >&2
echo "$L" | grep -q "key store /zkpipe-$(id -u)-$IPC_ARENA: 2 object(s)" || ipc_fail "keys list: not 2 store objects"
for g in $(ipc_jq '.workers[] | select(.role == "gpu") | .pid'); do
  echo "$L" | grep -q "held by pid.*\b$g\b" || ipc_fail "keys list: gpu worker $g holds no store object"
done
echo "$L" | grep -q "^keys by worker" || ipc_fail "keys list: no broker section"
echo "$L" | grep -q "$B/circuit.zkey  shm" || ipc_fail "keys list: broker section lacks $B's holder"
out=$("$ZKPIPE" keys evict --arena "$IPC_ARENA" "$A/circuit.zkey" 2>&1) && ipc_fail "evicted a held key: $out"
echo "$out" | grep -q "is in use (held by pid" || ipc_fail "evict of a held key: no clear refusal: $out"
"$ZKPIPE" keys preload --arena "$IPC_ARENA" "$C/circuit.zkey" | grep -q "filled into" || ipc_fail "preload $C"
"$ZKPIPE" keys list --arena "$IPC_ARENA" --no-broker | grep -q "3 object(s)" || ipc_fail "preloaded key not listed"
"$ZKPIPE" keys list --arena "$IPC_ARENA" --no-broker | grep -B1 "$C/circuit.zkey" | grep -q "not in use" ||
  ipc_fail "preloaded key listed as in use"
"$ZKPIPE" keys evict --arena "$IPC_ARENA" "$C/circuit.zkey" | grep -q "evicted" || ipc_fail "evict $C"
"$ZKPIPE" keys evict --arena "$IPC_ARENA" --force "$A/circuit.zkey" | grep -q "evicted" || ipc_fail "evict --force $A"
"$ZKPIPE" keys list --arena "$IPC_ARENA" --no-broker | grep -q "1 object(s)" || ipc_fail "forced eviction left the object"
J=$(ipc_submit --zkey "$A/circuit.zkey" --request-id ka-after "$A/witness-2.wtns")
"$ZKPIPE" await "$J" --timeout 300 --quiet --out "$IPC_DIR/out/after" >/dev/null || ipc_fail "await after eviction"
ipc_verify_all "$IPC_DIR/out/after" "$A/verification_key.json" 1
ipc_all_free
echo "ipc keys_affinity: OK"
