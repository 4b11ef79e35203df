#!/usr/bin/env bash
# progress.sh ZKPIPE SOURCE_ROOT - `zkpipe await` progress output (issue 14 item 5):
#  - on a terminal (a pseudo-terminal from python's pty): one line redrawn in place ("\r" +
#    erase-line) with "N/M proved", the elapsed time and an estimate, ending with a newline;
#  - not a terminal: plain lines, no carriage returns or escape sequences;
#  - --quiet: no progress at all; --json: one JSON object whose proofs snarkjs accepts.
. "$(dirname "$0")/../ipc/lib.sh"
ipc_init cprog "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain

ipc_hold gpu
J=$(ipc_submit --zkey $F/circuit.zkey --request-id prog-1 $F/witness-{0..3}.wtns)
( for _ in $(seq 1 600); do grep -q "proved" "$IPC_DIR/tty.out" 2>/dev/null && break; sleep 0.1; done; ipc_release gpu ) &
python3 "$IPC_SRC/tests/client/pty_run.py" "$IPC_DIR/tty.out" "$ZKPIPE" await "$J" --timeout 300 || ipc_fail "await through a pty"
T=$(cat "$IPC_DIR/tty.out")
grep -q $'\r\033\[K'"job $J: [0-9]/4 proved" "$IPC_DIR/tty.out" || ipc_fail "no in-place progress line on a tty: $(cat -v "$IPC_DIR/tty.out")"
grep -q "4/4 proved.*s elapsed, finished" "$IPC_DIR/tty.out" || ipc_fail "tty progress does not end at 4/4: $(cat -v "$IPC_DIR/tty.out")"
[ "$(grep -c $'\r\033\[K' "$IPC_DIR/tty.out")" -ge 1 ] || ipc_fail "progress not redrawn"
grep -q "partitions proved" "$IPC_DIR/tty.out" || ipc_fail "no final line on a tty"
ipc_log "tty: $(tr '\r' '\n' < "$IPC_DIR/tty.out" | grep -c proved) progress draws"

# not a terminal: plain lines; the GPU stage is released once the first line (0/3) is out
ipc_hold gpu
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id prog-2 $F/witness-{0..2}.wtns)
"$ZKPIPE" await "$J2" --timeout 300 >"$IPC_DIR/plain.out" 2>"$IPC_DIR/plain.err" &
AW=$!
for _ in $(seq 1 600); do grep -q "proved" "$IPC_DIR/plain.err" 2>/dev/null && break; sleep 0.1; done
ipc_release gpu
wait $AW || ipc_fail "await J2"
grep -q $'\r' "$IPC_DIR/plain.err" && ipc_fail "carriage return in non-tty progress"
grep -q $'\033' "$IPC_DIR/plain.err" && ipc_fail "escape sequence in non-tty progress"
grep -q "^job $J2: 0/3 proved, 0 failed, .* s elapsed, estimate: -$" "$IPC_DIR/plain.err" || ipc_fail "no plain start line: $(cat "$IPC_DIR/plain.err")"
grep -q "^job $J2: 3/3 proved, 0 failed, .* finished$" "$IPC_DIR/plain.err" || ipc_fail "no plain end line: $(cat "$IPC_DIR/plain.err")"

# --quiet and --json
"$ZKPIPE" await "$J2" --quiet --json >"$IPC_DIR/j.json" 2>"$IPC_DIR/q.err" || ipc_fail "await --json"
[ -s "$IPC_DIR/q.err" ] && ipc_fail "--quiet printed: $(cat "$IPC_DIR/q.err")"
[ "$(jq -r '.state' "$IPC_DIR/j.json")" = done ] || ipc_fail "--json state"
[ "$(jq -r '.partitions | length' "$IPC_DIR/j.json")" = 3 ] || ipc_fail "--json partitions"
jq '.partitions[1].proof' "$IPC_DIR/j.json" >"$IPC_DIR/p1.json"; jq '.partitions[1].public' "$IPC_DIR/j.json" >"$IPC_DIR/pub1.json"
"$ZKPIPE" verify $F/verification_key.json "$IPC_DIR/pub1.json" "$IPC_DIR/p1.json" >/dev/null || ipc_fail "--json proof does not verify"
ipc_oracle $F/verification_key.json "$IPC_DIR/pub1.json" "$IPC_DIR/p1.json"
# `zkpipe prove` shows its stages on a terminal, not in a pipe; --json gives the timings
python3 "$IPC_SRC/tests/client/pty_run.py" "$IPC_DIR/prove.tty" "$ZKPIPE" prove $F/circuit.zkey $F/witness.wtns \
  "$IPC_DIR/pp.json" "$IPC_DIR/ppub.json" || ipc_fail "prove through a pty"
for s in "loading the proving key" "proving (" "writing proof" "] done"; do
  grep -qF "$s" "$IPC_DIR/prove.tty" || ipc_fail "prove on a tty does not show '$s': $(cat -v "$IPC_DIR/prove.tty")"
done
"$ZKPIPE" prove $F/circuit.zkey $F/witness.wtns "$IPC_DIR/pq.json" "$IPC_DIR/pqub.json" --json >"$IPC_DIR/pj" 2>"$IPC_DIR/pe" || ipc_fail "prove --json"
[ -s "$IPC_DIR/pe" ] && ipc_fail "prove in a pipe printed stages: $(cat "$IPC_DIR/pe")"
jq -e '.seconds.total > 0 and .seconds.prove > 0' "$IPC_DIR/pj" >/dev/null || ipc_fail "prove --json: $(cat "$IPC_DIR/pj")"
"$ZKPIPE" verify $F/verification_key.json "$IPC_DIR/pqub.json" "$IPC_DIR/pq.json" >/dev/null || ipc_fail "prove --json proof"
# --json lists every phase (issue 31), in order, from the key mapping to the cleanup; --times
# prints the same phases as a table on stderr
jq -e '[.phases[].name] as $n | ($n[0] == "zkey: map, section headers") and ($n[-1] == "cleanup: unmap, free")
  and ([$n | index("synthesis: a, b, c", "NTT inverse a", "NTT forward c (coset)", "MSM A + B1 (G1, one multi-MSM over w)",
        "MSM C + H (G1, one MSM)", "MSM B2 (G2)", "verify (pairing check)")] | . == sort and all(. != null))
  and all(.phases[]; .wall_ms >= 0 and .cpu_ms >= 0)' "$IPC_DIR/pj" >/dev/null || ipc_fail "prove --json phases: $(cat "$IPC_DIR/pj")"
"$ZKPIPE" prove $F/circuit.zkey $F/witness.wtns "$IPC_DIR/pq.json" "$IPC_DIR/pqub.json" --times >"$IPC_DIR/pt" 2>"$IPC_DIR/pte" || ipc_fail "prove --times"
[ -s "$IPC_DIR/pt" ] && ipc_fail "prove --times wrote to stdout: $(cat "$IPC_DIR/pt")"
for s in "phase " "MSM B2 (G2)" "NTT inverse b" "TOTAL (in process)"; do
  grep -qF "$s" "$IPC_DIR/pte" || ipc_fail "prove --times does not show '$s': $(cat "$IPC_DIR/pte")"
done
ipc_log "progress ok"
