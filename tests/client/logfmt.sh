#!/usr/bin/env bash
# logfmt.sh ZKPIPE SOURCE_ROOT - log lines of a whole group (issue 14 item 5): text lines start
# with an ISO-8601 UTC time, role[pid], level (and end with [job=N part=M] inside a task); with `zkpipe --log-format json` every line the
# daemons write is one JSON object with time, level, role, pid, msg (job and part inside a task).
. "$(dirname "$0")/../ipc/lib.sh"
export ZP_LOG=debug
ipc_init clogt "$1" "$2" --slots 2 --max-domain 1024
F=$FIX/bn128_chain
J=$(ipc_submit --zkey $F/circuit.zkey $F/witness-0.wtns)
"$ZKPIPE" await "$J" --timeout 120 --quiet >/dev/null || ipc_fail "await (text)"
grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z broker\[[0-9]+\] (error|warn|info|debug): ' \
  "$IPC_DIR/up.log" | grep -q . || ipc_fail "no ISO-8601 broker line: $(head -3 "$IPC_DIR/up.log")"
ipc_cleanup; IPC_UP=
"$ZKPIPE" --log-format yaml status >/dev/null 2>&1; [ $? = 2 ] || ipc_fail "--log-format yaml accepted"
export ZP_LOG_FORMAT=json
ipc_init clogj "$1" "$2" --slots 2 --max-domain 1024
J=$(ipc_submit --zkey $F/circuit.zkey $F/witness-0.wtns)
"$ZKPIPE" await "$J" --timeout 120 --quiet >/dev/null || ipc_fail "await (json)"
python3 - "$IPC_DIR/up.log" <<'PY' || ipc_fail "JSON log lines: $(head -5 "$IPC_DIR/up.log")"
import json, re, sys
roles, n, ctx = set(), 0, 0
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue                      # `zkpipe up`'s own messages may be plain text
    o = json.loads(line)
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", o["time"]), o
    assert o["level"] in ("error", "warn", "info", "debug") and isinstance(o["pid"], int) and "msg" in o, o
    roles.add(o["role"]); n += 1
    ctx += "job" in o and "part" in o
assert n > 0 and "broker" in roles, (n, roles)
print(f"{n} JSON log lines, roles {sorted(roles)}, {ctx} with job+part", file=sys.stderr)
PY
ipc_log "log formats ok"
