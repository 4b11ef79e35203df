#!/usr/bin/env bash
# stage_corrupt.sh ZKPIPE SOURCE_ROOT - issue 10 item 1: the GPU worker verifies a partition's
# payload on its staging thread, before the compute; a payload corrupted after that verify (a
# stray write while the slot is PROVING and held by this worker: nothing legitimate writes then)
# is still caught before the proof is released: the finalizer verifies the same seal again, FAILs
# with payload_bad and the partition is redone from synthesis. The hook hold-gpu-compute holds the
# work thread between the staging verify and the compute; the test flips a byte of the slot's c
# vector (which the compute reads from the slot) in the arena there. Expected: the finalizer's
# "payload checksum" failure, a requeue to synthesis, and in the end a proof that verifies.
. "$(dirname "$0")/stage_pipe_lib.sh"
ipc_init corrupt "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
ipc_hold gpu-compute
J=$(ipc_submit --zkey $F/circuit.zkey --request-id corrupt-$$ $F/witness-0.wtns)
pipe_wait_staged 1
S=$(grep -o "gpu-worker.*slot [0-9]* staged in buffer set" "$IPC_DIR/up.log" | head -1 | sed 's/.*slot \([0-9]*\) staged.*/\1/')
A=/dev/shm$(ipc_jq .arena)
[ -f "$A" ] || ipc_fail "no arena file $A"
python3 - "$A" "$S" <<'PY' || ipc_fail "could not corrupt the payload"
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
ipc_log "slot $S: c corrupted after the staging verify"
ipc_release gpu-compute
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out" >/dev/null || ipc_fail "await"

grep -E "finalizer.*synthesized payload: .*payload checksum" "$IPC_DIR/up.log" >&2 ||
  ipc_fail "the finalizer did not catch the corrupted payload"
grep -E "gpu-worker.*synthesized payload" "$IPC_DIR/up.log" && ipc_fail "the corruption was before the staging verify"
# the finalizer's FAIL (payload_bad) sends the partition back to synthesis: synthesized twice
[ "$(ipc_jq '[.workers[] | select(.role == "synth")][0].done')" -ge 2 ] || ipc_fail "the partition was not redone from synthesis"
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 1
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-0.json" "$IPC_DIR/out/proof-0.json"
ipc_log "caught by the finalizer's verify (payload_bad), redone from synthesis, the proof verifies"
echo "ipc stage_corrupt: OK"
