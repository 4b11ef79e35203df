#!/usr/bin/env bash
# chaos.sh ZKPIPE SOURCE_ROOT - the short chaos run (scripts/chaos): jobs on both curves while a
# random stage, the broker first, is killed with SIGKILL every 1-3 s; every proof verifies (and
# is the proof of its own witness), nothing is lost or duplicated, no partition fails for the
# deaths, every slot ends FREE (none quarantined) and no shared-memory object is left after the
# group stops. The long run: scripts/chaos --jobs N --kill-every A-B (doc/broker-faults.md).
set -u
out=$(bash "$2/scripts/chaos" --zkpipe "$1" --jobs 24 --parts 4 --kill-every 1-3 --kill-first broker 2>&1); rc=$?
echo "$out" | grep -v '^\[' | tail -20 >&2
echo "$out" | grep 'kill -9' >&2
get() { echo "$out" | sed -n "s/^$1=//p"; }
[ $rc = 0 ] || { echo "FAIL: chaos run (rc $rc)" >&2; exit 1; }
[ "$(get broker_kills)" -ge 1 ] || { echo "FAIL: the broker was never killed" >&2; exit 1; }
[ "$(get failed)" = 0 ] || { echo "FAIL: partitions failed" >&2; exit 1; }
echo "ipc chaos: OK ($(get kills) kills, $(get partitions) partitions)"
