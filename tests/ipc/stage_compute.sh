#!/usr/bin/env bash
# stage_compute.sh ZKPIPE SOURCE_ROOT - issue 10: the CPU backend's compute runs on the GPU
# worker's own compute thread ("zp-compute", stage/backend.c zp_bk_detach) while the work thread
# ("zp-work") sleeps, as it waits on a GPU stream. Shown by each thread's time on a CPU
# (/proc/PID/task/TID/schedstat, ns) over a job: the compute thread's grows by more than the
# work thread's; and by the trace: every GPU slice carries the compute thread's span
# (t_run_start/t_run_end), inside the work thread's [t_compute_start, t_compute_end]. With
# COMPUTE_MODE=inline (stage_compute_inline.sh: ZP_GPU_INLINE_COMPUTE=1) there is no compute
# thread and no span. Both: the proofs verify (zkpipe verify, snarkjs). Then the option checks:
# a bad ZP_GPU_INLINE_COMPUTE, and slices below the kernel's 100 us, are refused by name.
. "$(dirname "$0")/stage_pipe_lib.sh"
MODE=${COMPUTE_MODE:-thread}
if [ "$MODE" = inline ]; then export ZP_GPU_INLINE_COMPUTE=1; else unset ZP_GPU_INLINE_COMPUTE; fi
ipc_init "compute-$MODE" "$1" "$2" --slots 4 --max-domain 1024 --threads 2
F=$FIX/bn128_poseidon2   # 2^10: a compute of milliseconds
G=
for _ in $(seq 1 300); do G=$(ipc_worker_pid gpu 2>/dev/null || true); [ -n "$G" ] && [ "$G" != null ] && break; sleep 0.1; done
[ -n "$G" ] && [ "$G" != null ] || ipc_fail "no gpu worker"
tid_of() {   # the GPU worker's thread named $1 (empty: none)
  local t
  for t in /proc/$G/task/*; do [ "$(cat $t/comm 2>/dev/null)" = "$1" ] && { basename $t; return; }; done
}
oncpu() { awk '{print $1}' /proc/$G/task/$1/schedstat; }
W=$(tid_of zp-work); C=$(tid_of zp-compute)
[ -n "$W" ] || ipc_fail "the gpu worker has no zp-work thread"
if [ "$MODE" = inline ]; then
  [ -z "$C" ] || ipc_fail "inline, yet the gpu worker has a zp-compute thread ($C)"
  pipe_wait_log "gpu-worker\[$G\].*the CPU backend inline"
else
  [ -n "$C" ] || ipc_fail "the gpu worker has no zp-compute thread"
  pipe_wait_log "gpu-worker\[$G\].*the CPU backend's compute on its own thread"
  w0=$(oncpu $W); c0=$(oncpu $C)
fi
W4=($F/witness.wtns $F/witness.wtns $F/witness.wtns $F/witness.wtns)
J=$(ipc_submit --zkey $F/circuit.zkey --request-id compute-$MODE-$$ "${W4[@]}")
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 4
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-3.json" "$IPC_DIR/out/proof-3.json"
pipe_trace_gpu "$J" >"$IPC_DIR/gpu.jsonl"
[ "$(wc -l <"$IPC_DIR/gpu.jsonl")" = 4 ] || ipc_fail "expected 4 gpu slices: $(cat "$IPC_DIR/gpu.jsonl")"
if [ "$MODE" = inline ]; then
  jq -s -e 'all(.[]; .t_compute_start > 0 and (has("t_run_start") | not) and (has("t_run_end") | not))' \
    "$IPC_DIR/gpu.jsonl" >/dev/null || ipc_fail "inline: a slice has a compute-thread span: $(cat "$IPC_DIR/gpu.jsonl")"
  ipc_log "inline: no compute thread, no compute-thread spans in the trace; 4 proofs verify"
else
  jq -s -e 'all(.[]; .t_compute_start > 0 and .t_compute_start <= .t_run_start and .t_run_start < .t_run_end and
                     .t_run_end <= .t_compute_end)' "$IPC_DIR/gpu.jsonl" >/dev/null ||
    ipc_fail "a slice's compute-thread span is missing or outside its compute: $(cat "$IPC_DIR/gpu.jsonl")"
  dw=$(( $(oncpu $W) - w0 )); dc=$(( $(oncpu $C) - c0 ))
  [ "$dc" -gt "$dw" ] || ipc_fail "the compute thread ran $dc ns, the work thread $dw ns: the work thread computed"
  ipc_log "compute thread on a CPU $dc ns, work thread $dw ns over the job; 4 spans inside their computes; proofs verify"
fi
# refusals, by name (the worker's own parser: ZP_GPU_INLINE_COMPUTE is read where the backend opens)
GW=$(dirname "$ZKPIPE")/../gpu-worker/zkpipe-gpu-worker
out=$(ZP_GPU_INLINE_COMPUTE=yes timeout 20 "$GW" --backend cpu 2>&1) && ipc_fail "the worker ran with ZP_GPU_INLINE_COMPUTE=yes"
echo "$out" | grep -q "ZP_GPU_INLINE_COMPUTE 'yes': expected 0 or 1" || ipc_fail "a bad ZP_GPU_INLINE_COMPUTE was not refused by name: $out"
e=$("$ZKPIPE" up --gpu-rt-slice 50 --dry-run 2>&1) && ipc_fail "up took --gpu-rt-slice 50"
echo "$e" | grep -q "gpu-rt-slice '50': expected 0 (off) or 100..100000" || ipc_fail "up: $e"
! echo "$e" | grep -q "^plan:" || ipc_fail "up printed a plan before refusing its option: $e"
ipc_log "refused: ZP_GPU_INLINE_COMPUTE=yes, --gpu-rt-slice 50 (the kernel's minimum is 100 us)"
echo "ipc stage_compute ($MODE): OK"
