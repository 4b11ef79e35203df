#!/usr/bin/env bash
# slot_classes.sh ZKPIPE SOURCE_ROOT - circuits of different sizes share an arena of slot size
# classes (issue 10 item 7): --slot-classes ($ZP_SLOT_CLASSES) 2x@small.zkey,1x@big.zkey gives two
# 2 MiB slots and one 4 MiB slot (test keys of 2^6 and 2^14 from `zkpipe testkey`). A circuit no
# class holds (2^15: 6 MiB) is refused at SUBMIT, saying what it needs and what there is. With
# the synthesizer held, the big partition gets the big slot and the small ones the small slots
# (the second big one and the third small one wait: neither fits what is free). Every proof
# verifies. (The spill rule, a small partition in a big slot only while no big one waits, is
# checked by the model test, tests/test_model.c, scenario classes.)
set -u
Z=$1
K=$(mktemp -d /tmp/zkpipe-slotcls.XXXXXX)
for p in 6 14 15; do
  "$Z" testkey --curve bn128 --power $p --out "$K/p$p" --insecure-known-tau >/dev/null 2>"$K/err" ||
    { cat "$K/err" >&2; rm -rf "$K"; echo "FAIL: testkey --power $p" >&2; exit 1; }
done
export ZP_SLOT_CLASSES="2x@$K/p6/circuit.zkey,1x@$K/p14/circuit.zkey"
. "$(dirname "$0")/lib.sh"
ipc_init slot_classes "$1" "$2" --synth-credits 4
trap 'ipc_cleanup; rm -rf "$K"' EXIT
st=$(ipc_status)
[ "$(jq '[.slot_classes[] | [.slots, .bytes]]' -c <<<"$st")" = "[[2,2097152],[1,4194304]]" ] ||
  ipc_fail "slot classes: $(jq -c .slot_classes <<<"$st")"
if "$ZKPIPE" submit --zkey "$K/p15/circuit.zkey" --request-id huge "$K/p15/witness.wtns" >"$K/out" 2>"$K/err"; then
  ipc_fail "a 2^15 circuit was accepted into an arena of at most 4 MiB slots"
fi
grep -q "need a slot of 6 MiB" "$K/err" && grep -q "have 4 MiB" "$K/err" && grep -q "p15/circuit.zkey" "$K/err" ||
  ipc_fail "the refusal does not say why: $(cat "$K/err")"
ipc_log "refused at SUBMIT: $(head -c 300 "$K/err")"
ipc_hold synth
JB=$(ipc_submit --zkey "$K/p14/circuit.zkey" --request-id big "$K/p14/witness.wtns" "$K/p14/witness.wtns")
JS=$(ipc_submit --zkey "$K/p6/circuit.zkey" --request-id small "$K/p6/witness.wtns" "$K/p6/witness.wtns" "$K/p6/witness.wtns")
ipc_wait_for "([.slot_table[]] | length) == 3 and .queues.synth.total == 2"
st=$(ipc_status)
jq -c '.slot_table' <<<"$st" >&2
[ "$(jq "[.slot_table[] | select(.job == $JB) | .class] == [1]" <<<"$st")" = true ] || ipc_fail "the big partition is not in the big slot"
[ "$(jq "[.slot_table[] | select(.job == $JS) | .class] == [0, 0]" <<<"$st")" = true ] || ipc_fail "small partitions not in the small slots"
[ "$(jq '.priority.spilled' <<<"$st")" = 0 ] || ipc_fail "a small partition spilled into the big slot while a big one waits"
ipc_release synth
"$ZKPIPE" await "$JB" --timeout 300 --out "$IPC_DIR/out/b" >/dev/null || ipc_fail "await big"
"$ZKPIPE" await "$JS" --timeout 300 --out "$IPC_DIR/out/s" >/dev/null || ipc_fail "await small"
ipc_verify_all "$IPC_DIR/out/b" "$K/p14/verification_key.json" 2
ipc_verify_all "$IPC_DIR/out/s" "$K/p6/verification_key.json" 3
[ "$(ipc_jq '.counters.parts_failed')" = 0 ] || ipc_fail "partitions failed"
ipc_all_free
echo "ipc slot_classes: OK"
