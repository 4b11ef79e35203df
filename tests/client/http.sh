#!/usr/bin/env bash
# http.sh ZKPIPE SOURCE_ROOT - the broker's HTTP JSON API (libmicrohttpd, broker/http.c) with
# curl and with a Node fetch client (http_client.mjs): Bearer tokens (missing / wrong -> 401),
# bad JSON, unknown keys, relative paths and bad key ids -> 400 naming the field, a key by id
# (--http-key-dir), a body over
# --http-max-body -> 413, a job by paths plus an inline wtns_base64 witness end to end with the
# proofs checked by `zkpipe verify` and snarkjs, DELETE cancels, GET /v1/status, GET /metrics.
. "$(dirname "$0")/../ipc/lib.sh"
command -v curl >/dev/null || ipc_skip "curl not installed"
TOK=$(mktemp /tmp/zkpipe-http-tok.XXXXXX)
printf '# tokens\nsecret-%s\nother-token\n' "$$" >"$TOK"
ipc_init chttp "$1" "$2" --slots 4 --max-domain 1024 --http-listen 127.0.0.1:0 --http-token-file "$TOK" --http-max-body 200000 \
  --http-key-dir "$2/tests/fixtures/bn128_chain"
trap 'ipc_cleanup; rm -f "$TOK"' EXIT
F=$FIX/bn128_chain
ADDR=$(ipc_jq '.metrics_listen // empty')
case "$ADDR" in 127.0.0.1:[0-9]*) ;; *) ipc_fail "no HTTP listener on 127.0.0.1 in status: '$ADDR'";; esac
B=http://$ADDR
A="Authorization: Bearer secret-$$"
code() { curl -s -o "$IPC_DIR/body" -w '%{http_code}' "$@"; }

[ "$(code $B/v1/status)" = 401 ] || ipc_fail "no token: not 401"
[ "$(code -H 'Authorization: Bearer secret-x' $B/v1/status)" = 401 ] || ipc_fail "wrong token: not 401"
[ "$(code -H "$A"x $B/v1/status)" = 401 ] || ipc_fail "token with a suffix: not 401"
[ "$(code -H "$A" $B/v1/status)" = 200 ] || ipc_fail "good token: not 200"
jq -e '.workers | length >= 3' "$IPC_DIR/body" >/dev/null || ipc_fail "/v1/status is not the status JSON"
[ "$(code -H 'Authorization: Bearer other-token' $B/v1/status)" = 200 ] || ipc_fail "second token refused"

post() { code -H "$A" -H 'Content-Type: application/json' -X POST --data-binary "$1" $B/v1/jobs; }
[ "$(post '{"zkey": ')" = 400 ] || ipc_fail "truncated JSON: not 400"
jq -e '.error.status == 400 and (.error.message | test("zkey"))' "$IPC_DIR/body" >/dev/null || ipc_fail "error JSON: $(cat "$IPC_DIR/body")"
[ "$(post '{"zkey": "/x", "witnesses": ["/w"], "colour": "red"}')" = 400 ] || ipc_fail "unknown key: not 400"
grep -q "colour: unknown key" "$IPC_DIR/body" || ipc_fail "unknown key message: $(cat "$IPC_DIR/body")"
[ "$(post '{"zkey": "'$F'/circuit.zkey", "witnesses": ["relative.wtns"]}')" = 400 ] || ipc_fail "relative witness: not 400"
grep -q 'witnesses\[0\]: a witness path must be absolute' "$IPC_DIR/body" || ipc_fail "relative message: $(cat "$IPC_DIR/body")"
[ "$(post '{"zkey": "'$F'/circuit.zkey", "witnesses": [{"wtns_base64": "@@@"}]}')" = 400 ] || ipc_fail "bad base64: not 400"
[ "$(post '{"zkey": "'$F'/circuit.zkey", "witnesses": ["/w"], "request_id": ""}')" = 400 ] || ipc_fail "empty request_id"
python3 -c 'import sys; print("{\"zkey\": \"/x\", \"witnesses\": [\"" + "a" * 300000 + "\"]}")' >"$IPC_DIR/big.json"
[ "$(code -H "$A" -X POST --data-binary @"$IPC_DIR/big.json" $B/v1/jobs)" = 413 ] || ipc_fail "oversized body: not 413"
[ "$(post '{"zkey": {"key_id": "../circuit"}, "witnesses": ["/w"]}')" = 400 ] || ipc_fail "key_id with ../: not 400"
grep -q "key_id must be" "$IPC_DIR/body" || ipc_fail "key_id message: $(cat "$IPC_DIR/body")"
[ "$(post '{"zkey": {"key_id": "nosuchkey"}, "witnesses": ["'$F'/witness-0.wtns"]}')" = 201 ] || ipc_fail "unknown key_id not accepted for queueing"
BADK=$(jq -r .id "$IPC_DIR/body")
[ "$(code -H "$A" $B/v1/jobs/999999)" = 404 ] || ipc_fail "unknown job: not 404"
[ "$(code -H "$A" $B/v1/nothing)" = 404 ] || ipc_fail "unknown endpoint: not 404"
[ "$(code -X POST -H "$A" $B/v1/status)" = 405 ] || ipc_fail "POST /v1/status: not 405"

# a full job: two paths and one inline witness
W64=$(base64 -w0 $F/witness-2.wtns)
printf '{"zkey": "%s", "r1cs": "%s", "witnesses": ["%s", "%s", {"wtns_base64": "%s"}], "priority": "normal", "request_id": "http-%s"}' \
  $F/circuit.zkey $F/circuit.r1cs $F/witness-0.wtns $F/witness-1.wtns "$W64" $$ >"$IPC_DIR/job.json"
[ "$(code -H "$A" -X POST --data-binary @"$IPC_DIR/job.json" $B/v1/jobs)" = 201 ] || ipc_fail "POST job: $(cat "$IPC_DIR/body")"
ID=$(jq -r .id "$IPC_DIR/body")
[ "$(code -H "$A" -X POST --data-binary @"$IPC_DIR/job.json" $B/v1/jobs)" = 200 ] || ipc_fail "repeat POST: not 200"
[ "$(jq -r '.id, .existed' "$IPC_DIR/body" | tr '\n' ' ')" = "$ID true " ] || ipc_fail "repeat POST: $(cat "$IPC_DIR/body")"
for _ in $(seq 1 600); do
  code -H "$A" $B/v1/jobs/$ID >/dev/null
  [ "$(jq -r .state "$IPC_DIR/body")" = running ] || break
  sleep 0.2
done
[ "$(jq -r .state "$IPC_DIR/body")" = done ] || ipc_fail "job $ID: $(cat "$IPC_DIR/body")"
for i in 0 1 2; do
  jq ".partitions[$i].proof" "$IPC_DIR/body" >"$IPC_DIR/out/proof-$i.json"
  jq ".partitions[$i].public" "$IPC_DIR/body" >"$IPC_DIR/out/public-$i.json"
  ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-$i.json" "$IPC_DIR/out/proof-$i.json"
done
ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 3
ipc_log "HTTP job $ID: 3 proofs verified"
# the job whose key_id names no file fails with a reason naming the file
for _ in $(seq 1 300); do code -H "$A" $B/v1/jobs/$BADK >/dev/null; [ "$(jq -r .state "$IPC_DIR/body")" = running ] || break; sleep 0.2; done
[ "$(jq -r .state "$IPC_DIR/body")" = failed ] && jq -r '.partitions[0].error' "$IPC_DIR/body" | grep -q "nosuchkey.zkey" ||
  ipc_fail "job with an unknown key_id: $(cat "$IPC_DIR/body")"

# DELETE cancels a running job
ipc_hold gpu
[ "$(post '{"zkey": "'$F'/circuit.zkey", "witnesses": ["'$F'/witness-3.wtns"]}')" = 201 ] || ipc_fail "POST held job"
ID2=$(jq -r .id "$IPC_DIR/body")
[ "$(code -H "$A" -X DELETE $B/v1/jobs/$ID2)" = 200 ] || ipc_fail "DELETE: $(cat "$IPC_DIR/body")"
code -H "$A" $B/v1/jobs/$ID2 >/dev/null
[ "$(jq -r .state "$IPC_DIR/body")" = canceled ] || ipc_fail "after DELETE: $(cat "$IPC_DIR/body")"
ipc_release gpu

[ "$(code $B/metrics)" = 200 ] && grep -q "^zkpipe_jobs_submitted_total" "$IPC_DIR/body" || ipc_fail "GET /metrics"

# a JavaScript client with fetch, inline witness, verified by snarkjs
if command -v node >/dev/null && "$IPC_SRC/tests/oracle/ensure.sh" >/dev/null; then
  node "$IPC_SRC/tests/client/http_client.mjs" "$B" "secret-$$" circuit $F/witness-4.wtns \
    $F/verification_key.json "$IPC_SRC/tests/oracle" || ipc_fail "node fetch client"
fi
ipc_log "HTTP API ok"
