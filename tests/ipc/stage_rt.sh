#!/usr/bin/env bash
# stage_rt.sh ZKPIPE SOURCE_ROOT - issue 10, the gap's last part: the GPU worker's control
# threads at real-time priority (`zkpipe up --gpu-rt-priority P`, lib/util/rt.c). Checked from
# the kernel's own view (/proc/PID/task/*/stat: policy and rt_priority), not by timing:
#   - idle, exactly the three control threads (socket loop, staging, work thread) and libzmq's
#     I/O and reaper threads run SCHED_FIFO at P; every other thread (the compute and staging
#     pools) at the normal policy; the broker's loop and its libzmq threads too;
#   - the CPU backend's compute thread (zp-compute: it stands in for the device) joins them at
#     its first compute;
#   - O(n) host work runs outside the tier: with the deferred payload verify held (hook
#     hold-gpu-verify, inside the checksum, after the compute) the four control threads (loop,
#     staging, work, compute) are still real-time, the checksum's own thread (zp-verify, on
#     which the staging thread waits asleep) is not;
#   - released, the same four, and the proof verifies (zkpipe verify and snarkjs).
# Where the kernel refuses (not root, RLIMIT_RTPRIO below P): one log line names the refusal and
# the fix, no thread is real-time, and the proof is still made and verifies.
# RT_MODE=slice (tests/ipc/stage_slice.sh): the same checks for the default tier, no option
# given: the same threads at the normal policy with a 100 us scheduling slice (se.slice in
# /proc/PID/task/*/sched), every other thread at the kernel's default slice; 77 on a kernel
# without custom slices (Linux < 6.12) or without that file.
. "$(dirname "$0")/stage_pipe_lib.sh"
RT_MODE=${RT_MODE:-fifo}
P=7
if [ "$RT_MODE" = slice ]; then
  f=/proc/self/sched
  [ -r $f ] && grep -q '^se.slice' $f || { echo "no se.slice in $f: skipped"; exit 77; }
  ipc_init slice "$1" "$2" --slots 4 --max-domain 1024 --threads 2
  TIER="with a 100 us scheduling slice"
else
  ipc_init rt "$1" "$2" --slots 4 --max-domain 1024 --threads 2 --gpu-rt-priority $P
  TIER="at SCHED_FIFO $P"
fi
F=$FIX/bn128_chain
permitted=1
[ "$RT_MODE" = slice ] || [ "$(id -u)" = 0 ] || [ "$(ulimit -r)" = unlimited ] || [ "$(ulimit -r)" -ge $P ] || permitted=0

# one thread (/proc/PID/task/TID): "1" in the tier (fifo: policy 1, rt_priority P; slice:
# policy 0, se.slice 100000 ns), "0" at the normal policy and slice, "-" neither
in_tier() {
  local f
  f=$(sed 's/.*) //' "$1/stat" 2>/dev/null) || { echo -; return; }
  set -- "$1" $f
  # after the command name: field 3 (state) is $2, so rt_priority (40) is ${39}, policy (41) ${40}
  if [ "$RT_MODE" = slice ]; then
    [ "${40}" = 0 ] || { echo -; return; }
    [ "$(awk '$1 == "se.slice" {print $3}' "$1/sched" 2>/dev/null)" = 100000 ] && echo 1 || echo 0
  elif [ "${40}" = 1 ] && [ "${39}" = $P ]; then echo 1
  elif [ "${40}" = 0 ]; then echo 0
  else echo -; fi
}
# "tier zmq other" over a process's threads: its own threads in the tier (fifo: policy 1,
# rt_priority P; slice: policy 0, se.slice 100000 ns), libzmq's (comm ZMQbg/...: the I/O thread
# and the reaper) in the tier, and threads at the normal policy and slice
rt_counts() {
  local fifo=0 zmq=0 other=0 t in
  for t in /proc/"$1"/task/*; do
    in=$(in_tier "$t")
    [ "$in" = - ] && continue
    if [ $in = 1 ]; then
      case "$(cat "$t/comm" 2>/dev/null)" in ZMQbg*) zmq=$((zmq + 1));; *) fifo=$((fifo + 1));; esac
    else other=$((other + 1)); fi
  done
  echo "$fifo $zmq $other"
}
wait_counts() {   # wait_counts PID "FIFO ZMQ": until those counts (<= 30 s); prints all three
  local c
  for _ in $(seq 1 300); do
    c=$(rt_counts "$1"); [ "${c% *}" = "$2" ] && { echo "$c"; return 0; }
    sleep 0.1
  done
  echo "$c"; return 1
}
G=
for _ in $(seq 1 300); do G=$(ipc_worker_pid gpu 2>/dev/null || true); [ -n "$G" ] && [ "$G" != null ] && break; sleep 0.1; done
[ -n "$G" ] && [ "$G" != null ] || ipc_fail "no gpu worker"
if [ $permitted = 1 ]; then
  pipe_wait_log "gpu-worker\[$G\].*control threads $TIER"
  c=$(wait_counts "$G" "3 2") ||
    ipc_fail "idle: expected 3 control threads and libzmq's 2 $TIER, got (tier zmq other) $c"
  [ "${c##* }" -ge 2 ] || ipc_fail "idle: the pools' threads are not at the normal policy (tier zmq other: $c)"
  ipc_log "idle: 3 control threads + libzmq's I/O and reaper $TIER, ${c##* } at the normal policy"
  B=$(ipc_jq .pid)
  pipe_wait_log "broker\[$B\].*loop and message I/O threads $TIER"
  c=$(wait_counts "$B" "1 2") || ipc_fail "broker: expected its loop and libzmq's 2 $TIER, got $c"
  ipc_log "broker: the loop + libzmq's threads $TIER"
else
  pipe_wait_log "gpu-worker\[$G\].*real-time priority $P refused .*RLIMIT_RTPRIO >= $P"
  c=$(rt_counts "$G"); [ "${c% *}" = "0 0" ] || ipc_fail "refused, yet threads are real-time (fifo zmq other: $c)"
  ipc_log "not permitted here: the refusal is logged, every thread at the normal policy"
fi

ipc_hold gpu-verify
J=$(ipc_submit --zkey $F/circuit.zkey --request-id $RT_MODE-$$ $F/witness-0.wtns)
pipe_wait_staged 1
pipe_wait_log "gpu-worker\[$G\].*cpu backend: prove_g1 [0-9.]+ ms"
if [ $permitted = 1 ]; then
  c=$(wait_counts "$G" "4 2") || ipc_fail "with the payload checksum held: expected 4 + 2 threads $TIER, got $c"
  v=; for t in /proc/$G/task/*; do [ "$(cat $t/comm 2>/dev/null)" = zp-verify ] && v=$t; done
  [ -n "$v" ] || ipc_fail "the gpu worker has no zp-verify thread"
  [ "$(in_tier $v)" = 0 ] || ipc_fail "the checksum's thread is not at the normal policy and slice ($(in_tier $v))"
  ipc_log "payload checksum held: on zp-verify at the normal policy; loop, staging, work, compute threads $TIER"
fi
ipc_release gpu-verify
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"
if [ $permitted = 1 ]; then
  c=$(wait_counts "$G" "4 2") || ipc_fail "after the task: expected 4 (3 + the compute thread) + 2 threads $TIER, got $c"
fi
[ "$(ipc_worker_pid gpu)" = "$G" ] || ipc_fail "the gpu worker was restarted"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 1
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-0.json" "$IPC_DIR/out/proof-0.json"
echo "ipc stage_rt ($RT_MODE): OK"
