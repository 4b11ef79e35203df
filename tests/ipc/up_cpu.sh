#!/usr/bin/env bash
# up_cpu.sh ZKPIPE SOURCE_ROOT - `zkpipe up --gpu-workers-per-card 2 --synths 2 --finalizers 2`
# with no CUDA device visible (CUDA_VISIBLE_DEVICES="" hides any real one) starts exactly one
# GPU worker, on the CPU backend, and logs why; it still proves and verifies a job; the
# synthesizers and finalizers run 5 nicer than the GPU worker (--host-nice). And
# `--backend cuda` with no device refuses to start with a clear message.
. "$(dirname "$0")/lib.sh"
export CUDA_VISIBLE_DEVICES=
unset ZP_TEST_FAKE_GPUS
D=$(mktemp -d /tmp/zkpipe-upcpu.XXXXXX)
out=$(ZP_RUNTIME_DIR=$D "$1" up --backend cuda --arena upcpu-refuse-$$ 2>&1); rc=$?
rm -rf "$D"
[ $rc = 1 ] || { echo "FAIL: up --backend cuda without a device: exit $rc" >&2; exit 1; }
echo "$out" | grep -q "no usable CUDA device" || { echo "FAIL: no clear message: $out" >&2; exit 1; }

ipc_init upcpu "$1" "$2" --gpu-workers-per-card 2 --synths 2 --finalizers 2 --slots 4 --max-domain 1024
for _ in $(seq 1 200); do grep -q "all 6 processes ready" "$IPC_DIR/up.log" && break; sleep 0.05; done
grep -q "all 6 processes ready" "$IPC_DIR/up.log" || ipc_fail "up did not get READY=1 from all 6 processes"
ipc_wait_for '([.workers[] | select(.role == "synth")] | length == 2) and
              ([.workers[] | select(.role == "final")] | length == 2)' 60
[ "$(ipc_jq '[.workers[] | select(.role == "gpu")] | length')" = 1 ] || ipc_fail "not exactly one gpu worker"
grep -q "no CUDA device to use (.*): starting 1 gpu worker(s) on the CPU backend" "$IPC_DIR/up.log" ||
  ipc_fail "no log line saying why the CPU backend is used"
pid=$(ipc_worker_pid gpu)
grep -q "started gpu #0 (cpu backend): pid $pid\$" "$IPC_DIR/up.log" || ipc_fail "gpu worker $pid not started for the CPU backend"
[ "$(ipc_jq '[.workers[] | select(.role == "gpu")][0].name')" = "gpu-worker cpu" ] || ipc_fail "gpu worker name"
# the host stages run --host-nice (default 5) nicer than the GPU worker
nice_of() { ps -o ni= -p "$1" | tr -d ' '; }
gn=$(nice_of "$pid")
for r in synth final; do
  p=$(ipc_worker_pid $r); n=$(nice_of "$p")
  [ "$n" = $((gn + 5)) ] || ipc_fail "$r (pid $p) runs at nice $n, the gpu worker at $gn: want +5"
done
F=$FIX/bn128_chain
J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs $F/witness-0.wtns $F/witness-1.wtns)
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 2
echo "ipc up_cpu: OK"
