# stage_pipe_lib.sh - helpers for the GPU worker's staging tests (stage_overlap, stage_corrupt,
# stage_batch): a real group (`zkpipe up`, lib.sh) at debug log level, where the worker's
# staging thread logs "slot S staged in buffer set K [job=J part=P]".
. "$(dirname "$0")/lib.sh"
export ZP_LOG=debug

# the number of staged lines in up.log
pipe_staged() { grep -c "gpu-worker.*slot [0-9]* staged in buffer set" "$IPC_DIR/up.log" || true; }

# wait until at least $1 tasks were staged (safety timeout 120 s)
pipe_wait_staged() {
  local i
  for i in $(seq 1 2400); do
    [ "$(pipe_staged)" -ge "$1" ] && return 0
    sleep 0.05
  done
  ipc_fail "timed out waiting for $1 staged task(s) (have $(pipe_staged))"
}

# the gpu stage's trace slices of job $1 as JSON lines (part, t_start, t_stage_end,
# t_compute_start, t_compute_end)
pipe_trace_gpu() {
  "$ZKPIPE" trace --out "$IPC_DIR/trace.json" >/dev/null 2>&1 || ipc_fail "zkpipe trace"
  jq -c --argjson j "$1" '.traceEvents[] | select(.ph == "X" and .cat == "gpu" and .args.job == $j) | .args' \
    "$IPC_DIR/trace.json"
}
