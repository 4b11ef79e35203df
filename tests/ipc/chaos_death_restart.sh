#!/usr/bin/env bash
# chaos_death_restart.sh ZKPIPE SOURCE_ROOT - issue 8 defect 4: the GPU worker is killed while it
# holds slots, the broker requeues them (READY at a new generation, the seal's stamp kept), and
# the broker is killed right after (as soon as the requeue shows in its status). The restarted
# broker must accept those READY slots ("payload verifies"), not re-synthesize them ("did not
# verify after a broker restart"). Five rounds; every proof verifies, every slot ends FREE.
. "$(dirname "$0")/durable_lib.sh"
dur_init ddeath "$1" "$2" --slots 4 --max-domain 1024 --heartbeat-ms 100 --liveness 20
F=$FIX/bn128_chain
for k in 1 2 3 4 5; do
  ipc_hold gpu
  J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --request-id ddeath-$k $F/witness-{0..3}.wtns)
  ipc_wait_for '.slots.PROVING >= 1 and ([.workers[] | select(.role == "gpu" and .held >= 1)] | length) == 1'
  G=$(ipc_worker_pid gpu)
  RQ=$(ipc_jq '.counters.requeued.gpu')
  L0=$(wc -l < "$IPC_DIR/up.log")
  kill -9 "$G"
  ipc_wait_for ".counters.requeued.gpu > $RQ" 60      # the broker requeued the dead worker's slots
  BP=$(dur_broker_pid)
  kill -9 "$BP"
  ipc_log "round $k: killed gpu $G, then broker $BP once it had requeued"
  ipc_wait_for ".pid != $BP" 60
  ipc_wait_workers 1 1 1
  tail -n +$((L0 + 1)) "$IPC_DIR/up.log" | grep "did not verify after a broker restart" >&2 &&
    ipc_fail "round $k: the restarted broker rejected a good READY slot"
  [ "$(ipc_jq '.counters.requeued.synth')" = 0 ] || ipc_fail "round $k: a sealed payload was synthesized again"
  ipc_release gpu
  "$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/$k" >/dev/null || ipc_fail "round $k: await"
  ipc_verify_all "$IPC_DIR/out/$k" $F/verification_key.json 4
  ipc_all_free
  [ "$(ipc_jq '.counters.requeued.synth')" = 0 ] || ipc_fail "round $k: work was synthesized again"
done
grep -c "READY, payload verifies" "$IPC_DIR/up.log" >&2
echo "ipc chaos_death_restart: OK"
