#!/usr/bin/env bash
# metrics.sh ZKPIPE SOURCE_ROOT - observability through a real process group: `zkpipe metrics`
# is valid Prometheus text (metrics_check.py) whose counters match the job; the broker's HTTP
# endpoint (ZP_METRICS_LISTEN=127.0.0.1:0, the port read back from status) serves the same
# families, 404s other paths, and survives garbage, oversized, silent and half-closed
# requests; `zkpipe status --json` splits each GPU worker's idle minute by cause and the
# parts sum to the idle time (and busy + idle to the window).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || ipc_skip "python3 not installed"
CHECK=$(dirname "$0")/metrics_check.py
export ZP_METRICS_LISTEN=127.0.0.1:0   # the broker inherits it from `zkpipe up`; port 0: any free one
ipc_init metrics "$1" "$2" --slots 4 --max-domain 1024
F=$FIX/bn128_chain
N=6

# an idle group first: the GPU worker is starved
sleep 1
J=$(ipc_submit --zkey $F/circuit.zkey --priority high --request-id metrics-1 $F/witness-{0..5}.wtns)
"$ZKPIPE" await "$J" --timeout 300 --out "$IPC_DIR/out/m" >/dev/null || ipc_fail "await"
ipc_verify_all "$IPC_DIR/out/m" $F/verification_key.json $N
sleep 1

# ---- METRICS over the broker socket
"$ZKPIPE" metrics >"$IPC_DIR/m.txt" || ipc_fail "zkpipe metrics"
python3 "$CHECK" "$IPC_DIR/m.txt" \
  --expect "zkpipe_partitions_total{stage=\"synth\",result=\"done\"}=$N" \
  --expect "zkpipe_partitions_total{stage=\"gpu\",result=\"done\"}=$N" \
  --expect "zkpipe_partitions_total{stage=\"final\",result=\"done\"}=$N" \
  --expect "zkpipe_partitions_total{stage=\"gpu\",result=\"failed\"}=0" \
  --expect "zkpipe_partitions_finished_total{result=\"proved\"}=$N" \
  --expect "zkpipe_jobs_submitted_total=1" \
  --expect "zkpipe_requeues_total{stage=\"gpu\"}=0" \
  --expect "zkpipe_stale_messages_total=0" \
  --expect "zkpipe_failures_total{class=\"transient\"}=0" \
  --expect "zkpipe_failures_total{class=\"input\"}=0" \
  --expect "zkpipe_failures_total{class=\"device\"}=0" \
  --expect "zkpipe_leases_expired_total=0" \
  --expect "zkpipe_breaker_trips_total=0" \
  --expect "zkpipe_slots_quarantined_total=0" \
  --expect "zkpipe_stage_seconds_count{stage=\"gpu\"}=$N" \
  --expect "zkpipe_handoff_seconds_count{stage=\"final\"}=$N" \
  --expect "zkpipe_queue_wait_seconds_count{stage=\"synth\"}=$N" \
  --expect "zkpipe_queue_depth{stage=\"gpu\",priority=\"high\"}=0" \
  --expect "zkpipe_slots{state=\"FREE\"}=4" ||
  ipc_fail "metrics output: $(head -c 3000 "$IPC_DIR/m.txt")"
for fam in zkpipe_gpu_busy_ratio zkpipe_gpu_idle_seconds zkpipe_malformed_frames_total; do
  grep -q "^# TYPE $fam " "$IPC_DIR/m.txt" || ipc_fail "no family $fam"
done
grep -q '^zkpipe_gpu_idle_seconds{.*cause="starved"}' "$IPC_DIR/m.txt" || ipc_fail "no starved idle sample"
"$ZKPIPE" metrics extra >/dev/null 2>&1; [ $? = 2 ] || ipc_fail "zkpipe metrics with an argument should exit 2"
ipc_log "zkpipe metrics: valid exposition, counters match $N partitions"

# ---- idle split in status --json
ipc_status >"$IPC_DIR/s.json"
python3 - "$IPC_DIR/s.json" <<'EOF' || ipc_fail "idle split: $(cat "$IPC_DIR/s.json")"
import json, sys
s = json.load(open(sys.argv[1]))
gpus = [w for w in s["workers"] if w["role"] == "gpu"]
assert gpus, "no gpu worker"
for w in gpus:
    win = w["window_60s"]
    parts = win["idle"]
    assert set(parts) == {"starved", "no_credit", "handoff"}, parts
    assert all(v >= 0 for v in parts.values()), parts
    tot = sum(parts.values())
    assert abs(tot - win["idle_s"]) < 1e-5, (tot, win["idle_s"])
    assert abs(win["busy_s"] + win["idle_s"] - win["seconds"]) < 1e-5, win
    assert win["busy_s"] > 0, "the GPU worker ran 6 tasks but shows no busy time"
    assert parts["starved"] > 0.5, "the GPU worker sat idle with nothing READY but shows no starved time"
    assert 1 < win["seconds"] <= 61, win
    print("gpu", w["instance"], win, "busy_ratio", w["busy_ratio_60s"], file=sys.stderr)
EOF
"$ZKPIPE" status | grep -q "idle .* starved .* no credit .* handoff" || ipc_fail "text status has no idle split"
ipc_log "status: idle split sums to idle time"

# ---- the HTTP endpoint
ADDR=$(ipc_jq '.metrics_listen // empty')
[ -n "$ADDR" ] || ipc_fail "status shows no metrics_listen (ZP_METRICS_LISTEN not seen by the broker?)"
case "$ADDR" in 127.0.0.1:*) ;; *) ipc_fail "metrics endpoint on $ADDR, expected 127.0.0.1";; esac
PORT=${ADDR#127.0.0.1:}
python3 - "$PORT" "$IPC_DIR" <<'EOF' || ipc_fail "HTTP endpoint"
import socket, sys, time, urllib.request, urllib.error
port, d = int(sys.argv[1]), sys.argv[2]
base = f"http://127.0.0.1:{port}"
r = urllib.request.urlopen(base + "/metrics", timeout=10)
assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
open(d + "/h.txt", "wb").write(r.read())
try:
    urllib.request.urlopen(base + "/nope", timeout=10)
    raise SystemExit("GET /nope did not fail")
except urllib.error.HTTPError as e:
    assert e.code == 404, e.code

def raw(data, shut=True, wait=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    try:
        if data:
            s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            try:
                b = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not b:
                break
            out += b
        return out
    finally:
        s.close()

# libmicrohttpd closes the connection on a request line it cannot parse (or answers 400)
g = raw(b"\x00\xff garbage\r\n\r\n")
assert g == b"" or g[:12] in (b"HTTP/1.0 400", b"HTTP/1.1 400"), ("garbage answered", g[:100])
assert raw(b"POST /metrics HTTP/1.0\r\n\r\n")[:12] in (b"HTTP/1.0 405", b"HTTP/1.1 405"), "POST: no 405"
big = raw(b"GET /metrics HTTP/1.0\r\nX: " + b"a" * 100000, shut=False)
assert big == b"" or big[:12] in (b"HTTP/1.0 431", b"HTTP/1.1 431"), big[:100]
assert raw(b"GET /metrics HTTP/1.0\r\n", shut=True) == b"", "half-closed partial request got an answer"
# silent clients: more than the connection limit, held open; the broker must drop them
socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(12)]
t0 = time.time()
r = None
for _ in range(60):           # a scrape succeeds once the silent ones time out (2 s)
    try:
        r = urllib.request.urlopen(base + "/metrics", timeout=3)
        break
    except Exception:
        time.sleep(0.2)
assert r is not None and r.status == 200, "endpoint unusable after silent connections"
for s in socks:
    s.close()
ok = raw(b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
assert ok[:12] in (b"HTTP/1.0 200", b"HTTP/1.1 200") and b"zkpipe_up 1" in ok, ok[:200]
print("http ok, scrape after silent flood in %.1f s" % (time.time() - t0), file=sys.stderr)
EOF
python3 "$CHECK" "$IPC_DIR/h.txt" --expect "zkpipe_partitions_total{stage=\"final\",result=\"done\"}=$N" ||
  ipc_fail "HTTP metrics output"
# same families (values of gauges move between the two scrapes)
diff <(grep "^# TYPE" "$IPC_DIR/m.txt") <(grep "^# TYPE" "$IPC_DIR/h.txt") ||
  ipc_fail "HTTP and METRICS families differ"
"$ZKPIPE" metrics >"$IPC_DIR/m2.txt" || ipc_fail "zkpipe metrics after HTTP abuse"
# served: /metrics, the scrape after the flood, /metrics?x=1; rejected: 404, 400, 405, 431 (or
# the oversized one timed out), the half-closed partial one and the silent flood
SERVED=$(python3 "$CHECK" "$IPC_DIR/m2.txt" --get 'zkpipe_http_requests_total{result="served"}') || ipc_fail "no served counter"
REJ=$(python3 "$CHECK" "$IPC_DIR/m2.txt" --get 'zkpipe_http_requests_total{result="rejected"}') || ipc_fail "no rejected counter"
python3 -c "import sys; s, r = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if s >= 3 and r >= 6 else 1)" "$SERVED" "$REJ" ||
  ipc_fail "HTTP counters: served $SERVED, rejected $REJ"
ipc_log "HTTP endpoint: served $SERVED, rejected $REJ; broker unharmed"

# the broker still serves jobs
J2=$(ipc_submit --zkey $F/circuit.zkey --request-id metrics-2 $F/witness-0.wtns)
"$ZKPIPE" await "$J2" --timeout 300 >/dev/null || ipc_fail "await after HTTP abuse"
"$ZKPIPE" metrics >"$IPC_DIR/m3.txt" || ipc_fail "metrics"
python3 "$CHECK" "$IPC_DIR/m3.txt" --expect "zkpipe_partitions_finished_total{result=\"proved\"}=$((N + 1))" ||
  ipc_fail "counters after the second job"

# ---- handoff: the GPU stage holds its assignments unstarted for ~1.5 s (test hold); the
# broker first counts that as provisional busy time, and moves it to handoff once the DONEs
# report when the work really started
H0=$(ipc_jq '[.workers[] | select(.role == "gpu")][0].window_60s.idle.handoff')
ipc_hold gpu
J3=$(ipc_submit --zkey $F/circuit.zkey --request-id metrics-3 $F/witness-{1..2}.wtns)
ipc_wait_for '[.workers[] | select(.role == "gpu")][0].held == 2'
sleep 1.5
ipc_release gpu
"$ZKPIPE" await "$J3" --timeout 300 >/dev/null || ipc_fail "await held job"
sleep 0.3
ipc_status >"$IPC_DIR/s2.json"
python3 - "$IPC_DIR/s2.json" "$H0" <<'EOF2' || ipc_fail "handoff split: $(cat "$IPC_DIR/s2.json")"
import json, sys
s = json.load(open(sys.argv[1]))
w = [w for w in s["workers"] if w["role"] == "gpu"][0]["window_60s"]
parts = w["idle"]
assert abs(sum(parts.values()) - w["idle_s"]) < 1e-5 and abs(w["busy_s"] + w["idle_s"] - w["seconds"]) < 1e-5, w
assert parts["handoff"] - float(sys.argv[2]) > 1.2, ("held assignments not counted as handoff", w)
assert w["busy_s"] < 1.0, ("held time left as busy", w)
print("after hold:", w, file=sys.stderr)
EOF2
ipc_log "held assignments counted as handoff"
echo "ipc metrics: OK"
