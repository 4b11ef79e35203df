#!/bin/sh
# c2_rust.sh SRCROOT BUILDDIR: the integrations/supraseal-c2 crate (supraseal-c2's Rust API) built
# offline against this build's libzkpipe_c2 (meson-uninstalled pkg-config) and its test run:
# bellman-made dumps proved through the Rust API equal bellman's proofs. Skipped (77) without cargo.
set -e
src=$1
build=$2
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: skipped"; exit 77; }
cd "$src/integrations/supraseal-c2"
# A sanitizer build of the library (scripts/test's build-asan) needs the ASan runtime first in the
# test binary's library list: preload it there only (the cargo runner), with leak checks off for
# Rust's own allocations, so the same harness runs over the ASan library.
asan=$(ldd "$build/c2/libzkpipe_c2.so" 2>/dev/null | awk '/libasan/ {print $3; exit}')
if [ -n "$asan" ]; then
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="env LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0"
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER
fi
PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
ZKPIPE_FIXTURES="$src/tests/fixtures" CARGO_TARGET_DIR="$build/cargo-c2" ZKPIPE_C2_THREADS=2 ZKPIPE_C2_MODE=inprocess \
    cargo test --offline --quiet
