#!/usr/bin/env bash
# ensure.sh - make sure tests/oracle/node_modules holds exactly the pinned oracle packages
# (snarkjs 0.7.6, circom2 0.2.23, circomlib 2.0.5 per package-lock.json) and print this folder.
# Runs `npm ci` when node_modules is missing or older than package-lock.json / package.json.
# Usage: ORACLE_ROOT=$(tests/oracle/ensure.sh)   (log lines go to stderr)
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stamp="$DIR/node_modules/.package-lock.json"     # written by npm on every install
stale=0
if [ ! -f "$stamp" ] || [ ! -f "$DIR/node_modules/snarkjs/package.json" ]; then stale=1
elif [ "$DIR/package-lock.json" -nt "$stamp" ] || [ "$DIR/package.json" -nt "$stamp" ]; then stale=1
fi
if [ $stale = 1 ]; then
  command -v npm >/dev/null || { echo "ensure.sh: npm not found (node 18+ and npm are needed)" >&2; exit 1; }
  echo "ensure.sh: npm ci in $DIR" >&2
  (cd "$DIR" && npm ci --no-audit --no-fund >&2)
  touch "$stamp"
fi
v=$(node -p 'require(process.argv[1]).version' "$DIR/node_modules/snarkjs/package.json")
[ "$v" = 0.7.6 ] || { echo "ensure.sh: snarkjs $v installed, 0.7.6 expected" >&2; exit 1; }
echo "$DIR"
