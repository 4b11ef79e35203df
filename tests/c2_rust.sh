#!/bin/sh
# c2_rust.sh SRCROOT BUILDDIR [ZKPIPE]: the integrations/supraseal-c2 crate (supraseal-c2's Rust API)
# built offline against this build's libzkpipe_c2 (meson-uninstalled pkg-config) and its test run
# twice, the proofs of upstream bellman's fixtures (tests/fixtures/bellman/...: dumped
# ProvingAssignments) equal to bellman's byte for byte each time: in-process, then with
# ZKPIPE_C2_MODE=group through a `zkpipe up` group this script starts (CPU backend, private
# runtime and state dirs, no test hook: the caller's r, s reach its finalizer). Skipped (77)
# without cargo; the group run is skipped (said so) without ZKPIPE. ZKPIPE_FIXTURES=DIR proves every
# DIR/bellman/*/ with a dump/ (circuit.params, proof_r5_s9.blst, dump/*.bin, *.bits, meta.json) instead.
set -e
src=$1
build=$2
zkpipe=${3:-}
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: skipped"; exit 77; }
case $zkpipe in ''|/*) ;; *) zkpipe=$(pwd)/$zkpipe ;; esac
cd "$src/integrations/supraseal-c2"
# A sanitizer build of the library (scripts/test's build-asan) needs the ASan runtime first in the
# test binary's library list: preload it there only (the cargo runner), with leak checks off for
# Rust's own allocations, so the same harness runs over the ASan library.
asan=$(ldd "$build/c2/libzkpipe_c2.so" 2>/dev/null | awk '/libasan/ {print $3; exit}')
if [ -n "$asan" ]; then
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="env LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0"
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER
fi
export PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export ZKPIPE_FIXTURES="${ZKPIPE_FIXTURES:-$src/tests/fixtures}" CARGO_TARGET_DIR="$build/cargo-c2" ZKPIPE_C2_THREADS=2
ZKPIPE_C2_HARNESS_MODE=inprocess cargo test --offline --quiet
echo "c2_rust: in-process: proofs == bellman's"
if [ -z "$zkpipe" ]; then echo "c2_rust: no zkpipe given: the group run is skipped"; exit 0; fi
T=$(mktemp -d /tmp/zp-c2-rust.XXXXXX)
chmod 700 "$T"
export ZP_RUNTIME_DIR="$T/run" ZP_STATE_DIR="$T/state"
unset ZP_TEST_FIXED_RS ZP_TEST_R ZP_TEST_S
ARENA=c2rust-$$
cleanup() {
  if [ -n "${UP:-}" ]; then kill -TERM "$UP" 2>/dev/null || true; wait "$UP" 2>/dev/null || true; fi
  rm -f /dev/shm/zkpipe-"$(id -u)"-"$ARENA" /dev/shm/zkpipe-"$(id -u)"-"$ARENA"-key-*
  rm -rf "$T"
}
trap cleanup EXIT
"$zkpipe" up --arena "$ARENA" --slots 2 --max-domain 2048 --max-vars 4096 --threads 2 >"$T/up.log" 2>&1 &
UP=$!
ok=
for _ in $(seq 1 600); do
  if "$zkpipe" status >/dev/null 2>&1; then ok=1; break; fi
  kill -0 "$UP" 2>/dev/null || break
  sleep 0.1
done
[ -n "$ok" ] || { cat "$T/up.log" >&2; echo "c2_rust: zkpipe up did not answer" >&2; exit 1; }
J0=$("$zkpipe" status --json | jq '.jobs.total')
ZKPIPE_C2_HARNESS_MODE=group cargo test --offline --quiet || { tail -50 "$T/up.log" >&2; exit 1; }
J1=$("$zkpipe" status --json | jq '.jobs.total')
[ "$J1" -gt "$J0" ] || { echo "c2_rust: group mode ran no job in the group ($J0 -> $J1)" >&2; exit 1; }
echo "c2_rust: group ($((J1 - J0)) jobs): proofs == bellman's"
