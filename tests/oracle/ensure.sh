#!/usr/bin/env bash
# ensure.sh - make sure tests/oracle/node_modules holds exactly the pinned oracle packages
# (snarkjs 0.7.6, circom2 0.2.23, circomlib 2.0.5 per package-lock.json) and print this folder.
# Runs `npm ci` when node_modules is missing or older than package-lock.json / package.json.
# Concurrent callers are serialized with flock, so nobody sees node_modules half-installed.
# Never run `npm install PKG` here: it rewrites the pins (.npmrc has save-exact as a guard).
# Usage: ORACLE_ROOT=$(tests/oracle/ensure.sh)   (log lines go to stderr)
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stamp="$DIR/node_modules/.package-lock.json"     # written by npm on every install
is_stale() {
  [ ! -f "$stamp" ] || [ ! -f "$DIR/node_modules/snarkjs/package.json" ] ||
    [ "$DIR/package-lock.json" -nt "$stamp" ] || [ "$DIR/package.json" -nt "$stamp" ]
}
if is_stale; then
  command -v npm >/dev/null || { echo "ensure.sh: npm not found (node 18+ and npm are needed)" >&2; exit 1; }
  exec 9>"$DIR/.ensure.lock"
  flock 9
  if is_stale; then   # another caller may have finished it while we waited
    echo "ensure.sh: npm ci in $DIR" >&2
    (cd "$DIR" && npm ci --no-audit --no-fund >&2)
    touch "$stamp"
  fi
  flock -u 9
fi
v=$(node -p 'require(process.argv[1]).version' "$DIR/node_modules/snarkjs/package.json")
[ "$v" = 0.7.6 ] || { echo "ensure.sh: snarkjs $v installed, 0.7.6 expected" >&2; exit 1; }
echo "$DIR"
