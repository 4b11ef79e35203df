#!/usr/bin/env bash
# run.sh HARNESS CORPUS RUNS [flags...] - one short fuzz run for the test suite: RUNS inputs
# (mutations of CORPUS, which is only read), seed 1, inputs up to 1 MiB. New inputs go to a
# temporary directory (libFuzzer writes to its first corpus argument). Exit status: the
# harness's (non-zero = a finding; the crashing input is kept in ./ as crash-* / fuzz-crash-*).
set -u
bin=$1 corpus=$2 runs=$3; shift 3
[ -d "$corpus" ] || { echo "run.sh: no corpus at $corpus" >&2; exit 1; }
tmp=$(mktemp -d /tmp/zkpipe-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$bin" -runs="$runs" -seed=1 -max_len=1048576 -rss_limit_mb=4096 -print_final_stats=0 "$@" "$tmp" "$corpus"
