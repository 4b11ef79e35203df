#!/usr/bin/env bash
# key_lease.sh ZKPIPE SOURCE_ROOT - issue 30: a key's first import in a group runs inside the
# importing worker's task (the synth that first meets a .params checks and expands it into the
# shared key store), so that task's lease must cover it: at 2^18 the import outlived the synth's
# lease and the partition was requeued over and over. The group runs with 6 s leases for every
# stage (ZP_LEASE_MS=6000,1,1,1) and the key store's fill made 10 s longer by its test hook
# (ZP_TEST_KEYSTORE_FILL_MS=10000): without the broker's key allowance (--lease-ms's 5th value,
# default 600000 ms, given to an assignment whose worker has not reported holding the job's key)
# the synth's lease runs out mid-import (ZP_LEASE_MS=6000,1,1,1,0 shows it). With it: upstream
# bellman's chain300 job proves with no lease expired and no worker death, and a second job of
# the same key (held now: the normal 6 s lease) proves too.
. "$(dirname "$0")/lib.sh"
export ZP_LEASE_MS=6000,1,1,1 ZP_TEST_KEYSTORE_FILL_MS=10000
ipc_init key_lease "$1" "$2" --slots 2 --max-domain 1024 --heartbeat-ms 200 --liveness 10
B=$FIX/bellman/chain300
J1=$(ipc_submit --zkey "$B/circuit.params" --r1cs "$B/circuit.r1cs" "$B/witness.wtns")
"$ZKPIPE" await "$J1" --timeout 300 --out "$IPC_DIR/out/j1" >/dev/null || ipc_fail "the job whose key was imported first"
grep -q "bellman, circuit .*cold: read into the store" "$IPC_DIR/up.log" || ipc_fail "no stage imported the key (cold)"
[ "$(ipc_jq '.counters.leases_expired')" = 0 ] || ipc_fail "a lease expired during the key's first import"
[ "$(ipc_jq '[.counters.deaths[]] | add')" = 0 ] || ipc_fail "a worker died during the key's first import"
J2=$(ipc_submit --zkey "$B/circuit.params" --r1cs "$B/circuit.r1cs" "$B/witness.wtns")
"$ZKPIPE" await "$J2" --timeout 300 --out "$IPC_DIR/out/j2" >/dev/null || ipc_fail "the second job of the key"
[ "$(ipc_jq '.counters.leases_expired')" = 0 ] || ipc_fail "a lease expired on the second job"
for j in j1 j2; do
  [ "$(stat -c %s "$IPC_DIR/out/$j/proof-0.bin")" = 192 ] || ipc_fail "$j: no 192-byte proof"
  "$ZKPIPE" verify "$B/circuit.vk" "$IPC_DIR/out/$j/public-0.json" "$IPC_DIR/out/$j/proof-0.bin" >/dev/null ||
    ipc_fail "$j: the proof does not verify"
done
ipc_all_free
echo "ipc key_lease: OK"
