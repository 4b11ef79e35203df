# cli_lib.sh - the preamble of the one-binary command tests (testkey_cli.sh, bench_wakeup_cli.sh):
# `cli_init NAME "$@"` checks the one argument (the zkpipe binary: $Z), makes $T (a temporary
# directory removed at exit) and the failure count that fail() raises; `cli_done NAME` exits 1
# after any failure, else prints "NAME: ok".
set -uo pipefail
cli_init() {
  local name=$1; shift
  [ $# -eq 1 ] || { echo "usage: $name ZKPIPE" >&2; exit 2; }
  Z=$1
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
  export ZKPIPE_KEYCHECK_DIR="$T/keycheck"   # bellman keys' check records: not in ~/.cache
  fails=0
}
fail() { echo "FAIL $*" >&2; fails=$((fails + 1)); }
cli_done() { [ "$fails" -eq 0 ] || exit 1; echo "$1: ok"; }
