#!/usr/bin/env bash
# pin.sh ZKPIPE SOURCE_ROOT - issue 11 item 9 / issue 10 item 3: the GPU worker registers
# (host_register) the arena and its --preload key regions with the backend before it says
# HELLO, never inside a task. A real process group (`zkpipe up`, CPU backend, whose
# host_register is counted by the backend wrapper) proves an 8-partition job; the worker's log
# then shows the arena registered before its HELLO ("connecting to"), the preloaded key pinned
# and uploaded before HELLO, and, at its stop, zero registrations inside tasks.
# Then (2) an injected non-device registration failure (ENOMEM, as RLIMIT_MEMLOCK gives) at
# start: a clear warning, pageable copies, the job still proves (no crash loop). The device
# error case (exit 3 before HELLO) is in stage_device.sh.
. "$(dirname "$0")/lib.sh"
ZK=$1; SRC=$2
run() {   # run NAME: a group, an 8-partition job, stop; the group's log in $IPC_DIR/up.log
  ipc_init "pin-$1" "$ZK" "$SRC" --slots 4 --max-domain 1024 --preload "$SRC/tests/fixtures/bn128_chain/circuit.zkey"
  F=$FIX/bn128_chain
  J=$(ipc_submit --zkey $F/circuit.zkey --r1cs $F/circuit.r1cs --priority normal --request-id pin-$1 $F/witness-{0..7}.wtns)
  "$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" || ipc_fail "$1: await"
  ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 8
  kill -TERM "$IPC_UP"; wait "$IPC_UP" || ipc_fail "$1: zkpipe up did not stop cleanly"
  IPC_UP=""
  LOG=$IPC_DIR/up.log
}
gpu_lines() { grep 'gpu-worker\[' "$LOG"; }
line_of() { gpu_lines | grep -n -m1 "$1" | cut -d: -f1; }

run ok
reg=$(line_of 'arena .* bytes .* registered with the cpu backend in .* chunk(s), .* ms (before tasks)')
key=$(line_of 'proving key .* loaded into the cpu backend .* (before HELLO)')
hello=$(line_of 'connecting to')
[ -n "$reg" ] || ipc_fail "ok: the worker never logged the arena registration"
[ -n "$key" ] || ipc_fail "ok: the preloaded key was not uploaded before HELLO"
[ -n "$hello" ] || ipc_fail "ok: the worker never said HELLO"
[ "$reg" -lt "$hello" ] && [ "$key" -lt "$hello" ] || ipc_fail "ok: registration (line $reg) / key (line $key) not before HELLO (line $hello)"
gpu_lines | grep -q 'host registrations: 1 arena(s) outside tasks, 0 inside tasks' ||
  ipc_fail "ok: the worker's counters do not show 0 registrations inside tasks"
gpu_lines | grep -q 'inside a task' && ipc_fail "ok: a task had to register"
# the wrapper's counter: exactly 2 host_register calls (arena: 1 chunk; the preloaded key region)
gpu_lines | grep -q 'cpu backend: host_register 2 call(s) 0 failed' || ipc_fail "ok: expected 2 host_register calls in the wrapper"
ipc_log "ok: arena + preloaded key registered before HELLO, 0 in tasks, 8/8 proofs"
[ "${IPC_KEEP:-0}" = 0 ] && rm -rf "$IPC_DIR"; unset ZP_STATE_DIR

export ZP_TEST_FAULT=host_register=ENOMEM
run enomem
gpu_lines | grep -q 'host_register of the arena .* failed: .*falling back to pageable copies' ||
  ipc_fail "enomem: no clear warning for the failed registration"
w=$(line_of 'falling back to pageable'); hello=$(line_of 'connecting to')
[ -n "$hello" ] && [ "$w" -lt "$hello" ] || ipc_fail "enomem: the worker did not go on to HELLO after the fallback"
[ "$(gpu_lines | grep -c 'connecting to')" = 1 ] || ipc_fail "enomem: the worker restarted (expected one start)"
ipc_log "enomem: warning, pageable, one start, 8/8 proofs"
echo "ipc pin: OK"
