#!/usr/bin/env bash
# verify.sh VK.json PUBLIC.json PROOF.json - check one Groth16 proof with the pinned snarkjs.
# Exit 0 iff snarkjs 0.7.6 accepts it and the files have snarkjs's own layout (verify.mjs says
# what is checked); 1 with a reason on stderr; 2 on usage errors.
#   ZP_ORACLE_LAYOUT=0  skip the layout check (tampered-proof tests only need the verdict)
#   ZP_ORACLE_BYTES=1   demand snarkjs's exact bytes (JSON.stringify(x, null, 1))
# snarkjs comes from this folder's node_modules (ensure.sh: npm ci from package-lock.json), so
# nothing outside the repository is used. Needs node 18+.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: verify.sh VK.json PUBLIC.json PROOF.json" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ORACLE_ROOT=${ORACLE_ROOT:-$("$HERE/ensure.sh")} || { echo "verify.sh: tests/oracle/ensure.sh failed" >&2; exit 1; }
export ORACLE_ROOT
exec node "$HERE/verify.mjs" "$@"
