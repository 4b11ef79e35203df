# stage_pipe_lib.sh - helpers for the GPU worker's staging tests (stage_overlap, stage_corrupt,
# stage_batch, stage_deferred, stage_verdict): a real group (`zkpipe up`, lib.sh) at debug log level, where the worker's
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

# wait until up.log has a line matching the extended regexp $1 (safety timeout 60 s, below the
# 120 s lease, as pipe_wait_staged)
pipe_wait_log() {
  local i
  for i in $(seq 1 1200); do
    grep -qE "$1" "$IPC_DIR/up.log" && return 0
    sleep 0.05
  done
  ipc_fail "timed out waiting for a log line matching: $1"
}

# the slot the (first) GPU worker staged first (its debug line in up.log)
pipe_staged_slot() {
  grep -o "gpu-worker.*slot [0-9]* staged in buffer set" "$IPC_DIR/up.log" | head -1 | sed 's/.*slot \([0-9]*\) staged.*/\1/'
}

# flip one byte of c[0] of slot $1 in the group's arena (a stray write into a held slot)
pipe_corrupt_c() {
  local a
  a=/dev/shm$(ipc_jq .arena)
  [ -f "$a" ] || ipc_fail "no arena file $a"
  python3 - "$a" "$1" <<'PY' || ipc_fail "could not corrupt the payload"
import struct, sys
path, s = sys.argv[1], int(sys.argv[2])
with open(path, 'r+b') as f:
    h = f.read(64)
    desc_bytes = struct.unpack_from('<I', h, 36)[0]                  # zp_shm_hdr_t
    table_off, data_off, slot_bytes = struct.unpack_from('<QQQ', h, 40)
    f.seek(table_off + s * desc_bytes + 72); vec_off = struct.unpack('<5Q', f.read(40)); vec_len = struct.unpack('<5Q', f.read(40))
    assert vec_len[3] > 0
    pos = data_off + s * slot_bytes + vec_off[3] + 7   # one byte of c[0]
    f.seek(pos); b = f.read(1); f.seek(pos); f.write(bytes([b[0] ^ 0x5a]))
print('corrupted slot %d c at %d' % (s, pos), file=sys.stderr)
PY
}
