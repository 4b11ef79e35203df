#!/bin/sh
# c2_rust.sh SRCROOT BUILDDIR: the integrations/supraseal-c2 crate (supraseal-c2's Rust API) built
# offline against this build's libzkpipe_c2 (meson-uninstalled pkg-config) and its test run:
# bellman-made dumps proved through the Rust API equal bellman's proofs. Skipped (77) without cargo.
set -e
src=$1
build=$2
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: skipped"; exit 77; }
cd "$src/integrations/supraseal-c2"
PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
ZKPIPE_FIXTURES="$src/tests/fixtures" CARGO_TARGET_DIR="$build/cargo-c2" ZKPIPE_C2_THREADS=2 \
    cargo test --offline --quiet
