# stage_pipe_lib.sh - helpers for the GPU worker's staging tests (stage_overlap, stage_corrupt,
# stage_batch): a real group (`zkpipe up`, lib.sh) at debug log level, where the worker's
# staging thread logs "slot S staged in buffer set K [job=J part=P]".
. "$(dirname "$0")/lib.sh"
export ZP_LOG=debug

# the number of distinct partitions the GPU worker with pid $1 staged (up.log)
pipe_staged() {
  grep -o "gpu-worker\[$1\].*slot [0-9]* staged in buffer set.*\[job=[0-9]* part=[0-9]*\]" "$IPC_DIR/up.log" |
    sed 's/.*\[job=/job=/' | sort -u | wc -l
}

# wait until the (first) GPU worker staged at least $1 partitions; safety timeout 60 s, below the
# 120 s lease: a worker held that long would be restarted and the count would start over
pipe_wait_staged() {
  local i g
  g=$(ipc_worker_pid gpu)
  for i in $(seq 1 1200); do
    [ "$(pipe_staged "$g")" -ge "$1" ] && break
    sleep 0.05
  done
  [ "$(pipe_staged "$g")" -ge "$1" ] || ipc_fail "timed out waiting for $1 partition(s) staged by gpu worker $g (have $(pipe_staged "$g"))"
  [ "$(ipc_worker_pid gpu)" = "$g" ] || ipc_fail "the gpu worker was restarted while held"
}

# the gpu stage's trace slices of job $1 as JSON lines (part, t_start, t_stage_end,
# t_compute_start, t_compute_end)
pipe_trace_gpu() {
  "$ZKPIPE" trace --out "$IPC_DIR/trace.json" >/dev/null 2>&1 || ipc_fail "zkpipe trace"
  jq -c --argjson j "$1" '.traceEvents[] | select(.ph == "X" and .cat == "gpu" and .args.job == $j) | .args' \
    "$IPC_DIR/trace.json"
}
