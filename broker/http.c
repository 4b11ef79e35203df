/* http.c - the broker's HTTP side on libmicrohttpd: the JSON API for clients on other hosts
 * and in other languages, and GET /metrics (Prometheus text). It replaces the hand-written
 * HTTP/1.0 responder that metrics.c had.
 *
 *   POST   /v1/jobs       {"zkey": PATH | {"key_id": NAME}, "r1cs": PATH | {"key_id": NAME} ?, "witnesses": [PATH | {"wtns_base64": B64}, ...],
 *                          "priority": "normal"?, "request_id": "..."?}  -> 201 {"id", "parts", "existed", "request_id"}
 *                         or, instead of "witnesses" (issue 28): "wasm": PATH (circom's witness generator),
 *                          "inputs": [{input.json object}, ...]: the synthesizers compute the witnesses;
 *                          each object at most ZP_MSG_INPUT_MAX bytes, checked to be well-formed JSON
 *   GET    /v1/jobs/ID    -> {"id", "state", "partitions": [{"state", "attempts", "proof", "public", "proof_bin_base64",
 *                          "error"}]}   (proof_bin_base64: the binary proof, e.g. a bellman key's 192-byte
 *                          Proof::write, issue 29 item 4; `zkpipe await --out` writes it as proof-I.bin)
 *   DELETE /v1/jobs/ID    -> {"id", "canceled": true, "freed"}
 *   GET    /v1/status     -> the status JSON of `zkpipe status --json`
 *   GET    /metrics       -> Prometheus text (no token needed when it is the metrics-only listener)
 * Errors are JSON: {"error": {"status": N, "message": "..."}} naming the field that was wrong.
 *
 * Two listeners, both optional, in the broker's thread: libmicrohttpd runs in external-poll
 * mode with epoll; its epoll fd sits in the broker's zmq_poll next to the ROUTER socket, and
 * MHD_run() is called when it is readable or its timeout passed. So handlers touch the
 * broker's state directly, without locks, like the ROUTER handlers.
 *   --http-listen IP:PORT    the API (+ /metrics); bound to 127.0.0.1 when IP is omitted
 *   --http-token-file FILE   one token per line; every API request needs "Authorization:
 *                            Bearer TOKEN", compared in constant time against each. Without
 *                            the file the API is open (to the interface it is bound to).
 *   --http-max-body BYTES    request body limit (default 16 MiB): inline witnesses count
 *   --http-key-dir DIR       {"key_id": NAME} names DIR/NAME.zkey (r1cs: DIR/NAME.r1cs): keys the
 *                            server holds, for clients that do not know its paths
 *   --metrics-listen IP:PORT GET /metrics only (as before)
 * Limits: 64 connections, 10 s per connection, 32 KiB of request head; bodies past the limit
 * get 413 and are not buffered further. Every body is untrusted: the JSON reader below is
 * bounded (depth, sizes) and allocation-free; strings are copied only once validated.
 * Tests: tests/client/http.sh (curl + tests/client/http_client.mjs with fetch), tests/ipc/metrics.sh. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "broker/broker_int.h"
#include "lib/fmt/fmt.h"
#include "lib/util/util.h"

#define HTTP_MAX_TOKENS 64
#define HTTP_TOKEN_MAX 256
#define HTTP_DEFAULT_BODY (16u << 20)

typedef struct {
    struct MHD_Daemon *d;
    bool api;                   /* false: /metrics only */
    char addr[80];
} listener_t;

struct brk_http {
    listener_t l[2];
    unsigned n;
    char tokens[HTTP_MAX_TOKENS][HTTP_TOKEN_MAX];
    size_t token_len[HTTP_MAX_TOKENS];
    unsigned n_tokens;
    size_t max_body;
    char key_dir[512];          /* --http-key-dir: {"key_id": NAME} -> DIR/NAME.zkey / .r1cs */
};

typedef struct {                /* one request's body */
    char *buf;
    size_t len, cap;
    bool too_big;
} req_t;

/* ---------------------------------------------------------------- responses */
static brk_t *g_broker;         /* the one broker of this process: for the request counters */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype, char *body)
{
    brk_mx_http_count(g_broker, status < 400);
    struct MHD_Response *r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body ? body : (char *)"",
                                                             body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) { free(body); return MHD_NO; }
    MHD_add_response_header(r, "Content-Type", ctype);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static void json_str(zp_sbuf_t *s, const char *p, size_t n)
{
    zp_sbuf_printf(s, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '"' || ch == '\\') zp_sbuf_printf(s, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f) zp_sbuf_printf(s, "\\u%04x", ch);
        else zp_sbuf_printf(s, "%c", ch);
    }
    zp_sbuf_printf(s, "\"");
}

static enum MHD_Result json_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result json_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    zp_sbuf_t s = {0};
    zp_sbuf_printf(&s, "{\"error\": {\"status\": %u, \"message\": ", status);
    json_str(&s, msg, strlen(msg));
    zp_sbuf_printf(&s, "}}\n");
    return reply(c, status, "application/json", zp_sbuf_take(&s));
}

/* ---------------------------------------------------------------- a bounded JSON reader */
typedef struct { const char *p, *end; const char *err; char where[64]; } jr_t;

static void jws(jr_t *j) { while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++; }
static bool jfail(jr_t *j, const char *what) { if (!j->err) j->err = what; return false; }
static bool jlit(jr_t *j, char ch) { jws(j); if (j->p < j->end && *j->p == ch) { j->p++; return true; } return false; }

/* a string into out (NUL-terminated, at most cap-1 bytes); \u escapes below 0x80 only */
static bool jstring(jr_t *j, char *out, size_t cap, size_t *outlen)
{
    jws(j);
    if (j->p >= j->end || *j->p != '"') return jfail(j, "expected a string");
    j->p++;
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char ch = *j->p++;
        if ((unsigned char)ch < 0x20) return jfail(j, "control character in a string");
        if (ch == '\\') {
            if (j->p >= j->end) return jfail(j, "unterminated string");
            char e = *j->p++;
            switch (e) {
            case '"': case '\\': case '/': ch = e; break;
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    if (j->p >= j->end) return jfail(j, "short \\u escape");
                    char h = *j->p++;
                    v = v * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 :
                                            h >= 'A' && h <= 'F' ? h - 'A' + 10 : 99);
                    if (v > 0xffff) return jfail(j, "bad \\u escape");
                }
                if (v == 0 || v >= 0x80) return jfail(j, "\\u escapes other than ASCII (and \\u0000) are not accepted");
                ch = (char)v;
                break;
            }
            default: return jfail(j, "bad escape in a string");
            }
        }
        if (n + 1 >= cap) return jfail(j, "string too long");
        out[n++] = ch;
    }
    if (j->p >= j->end) return jfail(j, "unterminated string");
    j->p++;
    out[n] = 0;
    if (outlen) *outlen = n;
    return true;
}

/* base64 text (standard alphabet, padding optional) decoded in place into a fresh buffer */
static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

/* "wtns_base64": the string is read straight from the body (no escapes in base64) */
static bool jbase64(jr_t *j, uint8_t **out, size_t *outlen)
{
    jws(j);
    if (j->p >= j->end || *j->p != '"') return jfail(j, "wtns_base64 must be a string");
    const char *s = ++j->p;
    while (j->p < j->end && *j->p != '"') j->p++;
    if (j->p >= j->end) return jfail(j, "unterminated string");
    size_t n = (size_t)(j->p - s);
    j->p++;
    while (n && s[n - 1] == '=') n--;
    if (n % 4 == 1) return jfail(j, "wtns_base64 has a bad length");
    uint8_t *b = malloc(n * 3 / 4 + 3);
    if (!b) return jfail(j, "out of memory");
    size_t o = 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) { free(b); return jfail(j, "wtns_base64 has a character outside the base64 alphabet"); }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) { bits -= 8; b[o++] = (uint8_t)(acc >> bits); }
    }
    if (o == 0) { free(b); return jfail(j, "wtns_base64 is empty"); }
    *out = b;
    *outlen = o;
    return true;
}

typedef struct {
    const char *key_dir;
    char zkey[ZP_MSG_PATH_MAX + 1], r1cs[ZP_MSG_PATH_MAX + 1], prio[16], rid[ZP_MSG_NAME_MAX + 1];
    char wasm[ZP_MSG_PATH_MAX + 1];
    bool has_zkey, has_r1cs, has_prio, has_rid, has_wasm, has_inputs, has_witnesses;
    size_t n;
    char (*paths)[ZP_MSG_PATH_MAX + 1];     /* ZP_MSG_MAX_PARTS */
    uint8_t *data[ZP_MSG_MAX_PARTS];
    size_t data_len[ZP_MSG_MAX_PARTS];
} job_req_t;

static void job_req_free(job_req_t *q)
{
    for (size_t i = 0; i < q->n; i++) free(q->data[i]);
    free(q->paths);
}

static bool parse_witness(jr_t *j, job_req_t *q)
{
    if (q->n >= ZP_MSG_MAX_PARTS) return jfail(j, "too many witnesses");
    size_t i = q->n;
    snprintf(j->where, sizeof j->where, "witnesses[%zu]", i);
    jws(j);
    if (j->p < j->end && *j->p == '"') {
        if (!jstring(j, q->paths[i], sizeof q->paths[i], NULL)) return false;
        if (q->paths[i][0] != '/') return jfail(j, "a witness path must be absolute (the broker runs elsewhere)");
    } else {
        char key[32];
        if (!jlit(j, '{') || !jstring(j, key, sizeof key, NULL) || strcmp(key, "wtns_base64") || !jlit(j, ':'))
            return jfail(j, "expected a path or {\"wtns_base64\": ...}");
        q->n++;   /* own data[i] from here on (freed with the request) */
        if (!jbase64(j, &q->data[i], &q->data_len[i])) return false;
        if (!jlit(j, '}')) return jfail(j, "expected } after wtns_base64");
        return true;
    }
    q->n++;
    return true;
}

/* one input.json object, copied as it is (the synthesizer reads it as snarkjs does) */
static bool parse_input(jr_t *j, job_req_t *q)
{
    if (q->n >= ZP_MSG_MAX_PARTS) return jfail(j, "too many inputs");
    size_t i = q->n, used;
    snprintf(j->where, sizeof j->where, "inputs[%zu]", i);
    jws(j);
    static char why[160];   /* the broker's one thread */
    if (brk_json_span(j->p, (size_t)(j->end - j->p), &used, why, sizeof why) < 0) return jfail(j, why);
    if (used > ZP_MSG_INPUT_MAX) return jfail(j, "larger than the 4 MiB allowed for one input");
    if (!(q->data[i] = malloc(used))) return jfail(j, "out of memory");
    memcpy(q->data[i], j->p, used);
    q->data_len[i] = used;
    q->n++;
    j->p += used;
    return true;
}

/* a key file: a path, or {"key_id": NAME} for NAME<ext> in --http-key-dir (a key the server holds) */
static bool parse_key_ref(jr_t *j, job_req_t *q, char *out, size_t cap, const char *ext)
{
    jws(j);
    if (j->p < j->end && *j->p == '"') return jstring(j, out, cap, NULL);
    char key[16], name[65];
    if (!jlit(j, '{') || !jstring(j, key, sizeof key, NULL) || strcmp(key, "key_id") || !jlit(j, ':') ||
        !jstring(j, name, sizeof name, NULL) || !jlit(j, '}'))
        return jfail(j, "expected a path or {\"key_id\": NAME}");
    if (!name[0] || name[0] == '.' || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(name))
        return jfail(j, "key_id must be 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)");
    if (!q->key_dir || !q->key_dir[0]) return jfail(j, "key_id given but the broker has no --http-key-dir");
    if ((size_t)snprintf(out, cap, "%s/%s%s", q->key_dir, name, ext) >= cap) return jfail(j, "key path too long");
    return true;
}

static bool parse_job(jr_t *j, job_req_t *q)
{
    if (!jlit(j, '{')) return jfail(j, "the body must be a JSON object");
    if (jlit(j, '}')) return jfail(j, "empty object: zkey and witnesses are required");
    do {
        char key[32];
        snprintf(j->where, sizeof j->where, "the body");
        if (!jstring(j, key, sizeof key, NULL) || !jlit(j, ':')) return jfail(j, "expected \"key\": value");
        snprintf(j->where, sizeof j->where, "%s", key);
        if (!strcmp(key, "zkey")) { if (!parse_key_ref(j, q, q->zkey, sizeof q->zkey, ".zkey")) return false; q->has_zkey = true; }
        else if (!strcmp(key, "r1cs")) { if (!parse_key_ref(j, q, q->r1cs, sizeof q->r1cs, ".r1cs")) return false; q->has_r1cs = true; }
        else if (!strcmp(key, "priority")) { if (!jstring(j, q->prio, sizeof q->prio, NULL)) return false; q->has_prio = true; }
        else if (!strcmp(key, "request_id")) {
            size_t n;
            if (!jstring(j, q->rid, sizeof q->rid, &n)) return false;
            if (n == 0) return jfail(j, "must be 1 to 128 bytes");
            q->has_rid = true;
        } else if (!strcmp(key, "wasm")) {
            if (!jstring(j, q->wasm, sizeof q->wasm, NULL)) return false;
            if (q->wasm[0] != '/') return jfail(j, "must be an absolute path (the broker runs elsewhere)");
            q->has_wasm = true;
        } else if (!strcmp(key, "inputs")) {
            if (q->has_witnesses || q->has_inputs) return jfail(j, "give either witnesses or inputs, once");
            q->has_inputs = true;
            if (!jlit(j, '[')) return jfail(j, "must be an array of input.json objects");
            if (!jlit(j, ']'))
                do { if (!parse_input(j, q)) return false; } while (jlit(j, ','));
            else continue;
            snprintf(j->where, sizeof j->where, "inputs");
            if (!jlit(j, ']')) return jfail(j, "expected , or ]");
        } else if (!strcmp(key, "witnesses")) {
            if (q->has_witnesses || q->has_inputs) return jfail(j, "give either witnesses or inputs, once");
            q->has_witnesses = true;
            if (!jlit(j, '[')) return jfail(j, "must be an array");
            if (!jlit(j, ']'))
                do { if (!parse_witness(j, q)) return false; } while (jlit(j, ','));
            else continue;
            snprintf(j->where, sizeof j->where, "witnesses");
            if (!jlit(j, ']')) return jfail(j, "expected , or ]");
        } else return jfail(j, "unknown key");
    } while (jlit(j, ','));
    snprintf(j->where, sizeof j->where, "the body");
    if (!jlit(j, '}')) return jfail(j, "expected , or }");
    jws(j);
    if (j->p != j->end) return jfail(j, "trailing bytes after the object");
    return true;
}

/* ---------------------------------------------------------------- the endpoints */
static enum MHD_Result post_job(brk_t *b, struct MHD_Connection *c, const req_t *rq)
{
    job_req_t q = {.key_dir = b->http->key_dir};
    q.paths = calloc(ZP_MSG_MAX_PARTS, sizeof *q.paths);
    zp_msg_submit_t *m = calloc(1, sizeof *m);
    enum MHD_Result ret;
    if (!q.paths || !m) { ret = json_error(c, 500, "out of memory"); goto out; }
    jr_t j = {.p = rq->buf ? rq->buf : "", .end = (rq->buf ? rq->buf : "") + rq->len};
    if (!parse_job(&j, &q)) { ret = json_error(c, 400, "bad request: %s: %s", j.where, j.err); goto out; }
    if (!q.has_zkey || q.zkey[0] != '/') { ret = json_error(c, 400, "bad request: zkey: an absolute path is required"); goto out; }
    if (q.has_r1cs && q.r1cs[0] != '/') { ret = json_error(c, 400, "bad request: r1cs: must be an absolute path"); goto out; }
    if (q.has_inputs != q.has_wasm) {
        ret = json_error(c, 400, "bad request: %s", q.has_inputs ? "inputs: need \"wasm\", the circuit's witness generator"
                                                                  : "wasm: goes with \"inputs\" (witnesses need no wasm)");
        goto out;
    }
    if (q.n == 0) { ret = json_error(c, 400, "bad request: %s: at least one is required", q.has_inputs ? "inputs" : "witnesses"); goto out; }
    int prio = q.has_prio ? zp_prio_parse(q.prio) : ZP_PRIO_NORMAL;
    if (prio < 0) { ret = json_error(c, 400, "bad request: priority: '%s' is not critical, high, normal or low", q.prio); goto out; }
    if (!q.has_rid) {
        uint64_t r = 0;
        if (zp_random_bytes(&r, sizeof r) < 0) r = zp_now_ns();
        snprintf(q.rid, sizeof q.rid, "http-%016llx", (unsigned long long)r);
    }
    m->request_id = zp_str(q.rid);
    m->zkey = zp_str(q.zkey);
    m->r1cs = zp_str(q.has_r1cs ? q.r1cs : "");
    m->priority = (uint32_t)prio;
    m->wasm = zp_str(q.has_wasm ? q.wasm : "");
    m->n_wtns = q.n;
    for (size_t i = 0; i < q.n; i++) {
        m->wtns[i] = zp_str(q.data[i] ? "" : q.paths[i]);
        m->wtns_data[i] = q.data[i];
        m->wtns_data_len[i] = q.data_len[i];
    }
    char *inl = NULL;
    brk_job_t *job = NULL;
    bool existed = false;
    int rc = brk_inline_store(b, m, &inl);
    if (rc == 0) rc = brk_submit(b, m, &job, &existed);
    free(inl);
    if (rc < 0) { ret = json_error(c, rc == -ENOMEM ? 500 : 422, "%s: %s", zp_strerror(rc), zp_err_msg()); goto out; }
    zp_sbuf_t s = {0};
    zp_sbuf_printf(&s, "{\"id\": %llu, \"parts\": %u, \"existed\": %s, \"request_id\": ", (unsigned long long)job->id,
                   job->n_parts, existed ? "true" : "false");
    json_str(&s, q.rid, strlen(q.rid));
    zp_sbuf_printf(&s, "}\n");
    ret = reply(c, existed ? 200 : 201, "application/json", zp_sbuf_take(&s));
out:
    job_req_free(&q);
    free(m);
    return ret;
}

static const char *part_state(brk_pstate_t s)
{
    static const uint32_t map[] = {ZP_PART_QUEUED, ZP_PART_RUNNING, ZP_PART_DONE, ZP_PART_FAILED, ZP_PART_CANCELED};
    return zp_part_state_name(s <= PS_CANCELED ? map[s] : 99);
}

/* a peer's proof text goes into our JSON only if it parses as the JSON it claims to be */
static void embed_json(zp_sbuf_t *s, const char *key, const char *text, bool is_proof)
{
    bool ok = false;
    if (text) {
        size_t n = strlen(text);
        if (is_proof) { zp_proof_json_t p; ok = zp_proof_json_parse(&p, text, n, key) == 0; }
        else { char (*sig)[100] = NULL; size_t k = 0; ok = zp_public_json_parse(&sig, &k, text, n, key) == 0; free(sig); }
    }
    zp_sbuf_printf(s, ", \"%s\": %s", key, ok ? text : "null");
}

/* the binary proof as base64 (standard alphabet, padded) */
static void embed_b64(zp_sbuf_t *s, const char *key, const uint8_t *p, size_t n)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char out[4 * ((ZP_MSG_BIN_MAX + 2) / 3) + 1];
    size_t o = 0;
    if (n > ZP_MSG_BIN_MAX) return;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        out[o++] = al[v >> 18 & 63];
        out[o++] = al[v >> 12 & 63];
        out[o++] = i + 1 < n ? al[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? al[v & 63] : '=';
    }
    out[o] = 0;
    zp_sbuf_printf(s, ", \"%s\": \"%s\"", key, out);
}

static enum MHD_Result get_job(brk_t *b, struct MHD_Connection *c, brk_job_t *j)
{
    zp_sbuf_t s = {0};
    zp_sbuf_printf(&s, "{\"id\": %llu, \"state\": \"%s\", \"request_id\": ", (unsigned long long)j->id,
                   zp_job_state_name(j->state));
    json_str(&s, j->request_id ? j->request_id : "", j->request_id ? strlen(j->request_id) : 0);
    zp_sbuf_printf(&s, ", \"done\": %u, \"failed\": %u, \"partitions\": [", j->n_done, j->n_failed);
    for (uint32_t i = 0; i < j->n_parts; i++) {
        const brk_part_t *p = &j->parts[i];
        zp_sbuf_printf(&s, "%s{\"state\": \"%s\", \"attempts\": %u", i ? ", " : "", part_state(p->state), p->attempt);
        if (p->state == PS_DONE) {
            embed_json(&s, "proof", p->proof_json, true);
            embed_json(&s, "public", p->public_json, false);
            if (p->proof_bin_len) embed_b64(&s, "proof_bin_base64", p->proof_bin, p->proof_bin_len);
        }
        if (p->state == PS_FAILED) {
            zp_sbuf_printf(&s, ", \"error\": ");
            json_str(&s, p->reasons ? p->reasons : "", p->reasons ? strlen(p->reasons) : 0);
        }
        zp_sbuf_printf(&s, "}");
    }
    zp_sbuf_printf(&s, "]}\n");
    (void)b;
    return reply(c, 200, "application/json", zp_sbuf_take(&s));
}

static bool job_id(const char *s, uint64_t *id)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e || v == 0 || *s < '0' || *s > '9') return false;
    *id = v;
    return true;
}

/* constant time in the token's content: every byte of every configured token is looked at */
static bool token_ok(const struct brk_http *h, const char *auth)
{
    if (!h->n_tokens) return true;
    if (!auth || strncmp(auth, "Bearer ", 7)) return false;
    const char *t = auth + 7;
    size_t n = strnlen(t, HTTP_TOKEN_MAX);
    unsigned ok = 0;
    for (unsigned k = 0; k < h->n_tokens; k++) {
        unsigned diff = (unsigned)(n ^ h->token_len[k]);
        for (size_t i = 0; i < HTTP_TOKEN_MAX - 1; i++) {
            unsigned char a = i < n ? (unsigned char)t[i] : 0;
            diff |= a ^ (unsigned char)h->tokens[k][i];
        }
        ok |= diff == 0;
    }
    return ok != 0;
}

typedef struct { brk_t *b; listener_t *l; } ctx_t;

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    ctx_t *cx = cls;
    brk_t *b = cx->b;
    struct brk_http *h = b->http;
    req_t *rq = *con_cls;
    if (!rq) {                                   /* headers only: set up the body buffer */
        if (!(rq = calloc(1, sizeof *rq))) return MHD_NO;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size) {                          /* a body chunk */
        if (!rq->too_big && rq->len + *upload_size > h->max_body) { rq->too_big = true; free(rq->buf); rq->buf = NULL; }
        if (!rq->too_big) {
            if (rq->len + *upload_size > rq->cap) {
                size_t nc = rq->cap ? rq->cap : 4096;
                while (nc < rq->len + *upload_size) nc *= 2;
                char *nb = realloc(rq->buf, nc);
                if (!nb) return MHD_NO;
                rq->buf = nb;
                rq->cap = nc;
            }
            memcpy(rq->buf + rq->len, upload, *upload_size);
            rq->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    /* a request reached us: the connection is not "closed without a request" */
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci && ci->socket_context) *(bool *)ci->socket_context = true;
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!strcmp(url, "/metrics")) {
        if (!get) return json_error(c, 405, "method %s not allowed on /metrics", method);
        char *t = brk_metrics_text(b);
        return t ? reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", t) : json_error(c, 500, "out of memory");
    }
    if (!cx->l->api || strncmp(url, "/v1/", 4)) return json_error(c, 404, "no such endpoint: %s", url);
    if (!token_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))) {
        brk_mx_http_count(b, false);   /* (not through reply(): it needs its own header) */
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen("{\"error\": {\"status\": 401, \"message\": "
            "\"a valid Authorization: Bearer token is required\"}}\n"), (void *)"{\"error\": {\"status\": 401, \"message\": "
            "\"a valid Authorization: Bearer token is required\"}}\n", MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "application/json");
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"zkpipe\"");
        enum MHD_Result rc = MHD_queue_response(c, 401, r);
        MHD_destroy_response(r);
        return rc;
    }
    if (rq->too_big) { return json_error(c, 413, "request body over %zu bytes (--http-max-body)", h->max_body); }
    if (!strcmp(url, "/v1/status")) {
        if (!get) return json_error(c, 405, "method %s not allowed on /v1/status", method);
        char *t = brk_status_text(b, true);
        return t ? reply(c, 200, "application/json", t) : json_error(c, 500, "out of memory");
    }
    if (!strcmp(url, "/v1/jobs")) {
        if (strcmp(method, "POST")) return json_error(c, 405, "use POST on /v1/jobs");
        return post_job(b, c, rq);
    }
    uint64_t id;
    if (strncmp(url, "/v1/jobs/", 9) || !job_id(url + 9, &id)) return json_error(c, 404, "no such endpoint: %s", url);
    brk_job_t *j = brk_job_get(b, id);
    if (!j) return json_error(c, 404, "no job %llu", (unsigned long long)id);
    if (get) return get_job(b, c, j);
    if (!strcmp(method, "DELETE")) {
        uint32_t freed = 0;
        int rc = brk_cancel(b, j, &freed);
        if (rc < 0) return json_error(c, 409, "cannot cancel job %llu: %s", (unsigned long long)id, zp_err_msg());
        zp_sbuf_t s = {0};
        zp_sbuf_printf(&s, "{\"id\": %llu, \"canceled\": true, \"freed\": %u}\n", (unsigned long long)id, freed);
        return reply(c, 200, "application/json", zp_sbuf_take(&s));
    }
    return json_error(c, 405, "method %s not allowed on %s", method, url);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode tc)
{
    (void)c; (void)cls; (void)tc;
    req_t *rq = *con_cls;
    if (rq) { free(rq->buf); free(rq); }
    *con_cls = NULL;
}

/* connections closed without any request (silent ones, garbage that libmicrohttpd answered
 * itself) count as rejected: socket_ctx is a flag the handler sets */
static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_ctx, enum MHD_ConnectionNotificationCode tc)
{
    (void)c;
    ctx_t *cx = cls;
    if (tc == MHD_CONNECTION_NOTIFY_STARTED) { *socket_ctx = calloc(1, sizeof(bool)); return; }
    bool *had_request = *socket_ctx;
    if (!had_request || !*had_request) brk_mx_http_count(cx->b, false);
    free(had_request);
    *socket_ctx = NULL;
}

static ctx_t g_ctx[2];

static int parse_addr(const char *what, const char *s, struct sockaddr_in *sa, char *host, size_t hn)
{
    const char *colon = strrchr(s, ':');
    const char *hp = colon ? s : "127.0.0.1";
    size_t hl = colon ? (size_t)(colon - s) : strlen(hp);
    const char *port_s = colon ? colon + 1 : s;
    if (hl == 0) { hp = "127.0.0.1"; hl = strlen(hp); }
    if (hl >= hn) return zp_err_set(-EINVAL, "%s '%s': expected [IPV4:]PORT", what, s);
    memcpy(host, hp, hl);
    host[hl] = 0;
    char *e;
    errno = 0;
    unsigned long port = strtoul(port_s, &e, 10);
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    if (errno || e == port_s || *e || port > 65535 || inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return zp_err_set(-EINVAL, "%s '%s': expected [IPV4:]PORT (e.g. 127.0.0.1:8080)", what, s);
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

static int start(brk_t *b, const char *what, const char *addr, bool api)
{
    struct brk_http *h = b->http;
    listener_t *l = &h->l[h->n];
    struct sockaddr_in sa;
    char host[48];
    int rc = parse_addr(what, addr, &sa, host, sizeof host);
    if (rc < 0) return rc;
    g_ctx[h->n] = (ctx_t){b, l};
    l->api = api;
    l->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, ntohs(sa.sin_port), NULL, NULL, handle, &g_ctx[h->n],
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, &g_ctx[h->n],
                            MHD_OPTION_NOTIFY_CONNECTION, conn_notify, &g_ctx[h->n],
                            MHD_OPTION_END);
    if (!l->d) return zp_err_set(-EADDRNOTAVAIL, "%s %s: libmicrohttpd could not listen there (address in use?)", what, addr);
    const union MHD_DaemonInfo *fdi = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_LISTEN_FD);
    socklen_t sl = sizeof sa;
    if (fdi) getsockname(fdi->listen_fd, (struct sockaddr *)&sa, &sl);
    snprintf(l->addr, sizeof l->addr, "%s:%u", host, (unsigned)ntohs(sa.sin_port));
    h->n++;
    zp_log(ZP_LOG_INFO, "%s at http://%s/%s", what, l->addr, api ? "v1/" : "metrics");
    return 0;
}

static int load_tokens(struct brk_http *h, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return zp_err_set(-errno, "--http-token-file %s: %s", path, strerror(errno));
    char line[HTTP_TOKEN_MAX + 2];
    unsigned ln = 0;
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        size_t n = strcspn(line, "\r\n");
        if (line[n] == 0 && !feof(f)) { rc = zp_err_set(-EINVAL, "%s:%u: token longer than %d bytes", path, ln, HTTP_TOKEN_MAX - 1); break; }
        line[n] = 0;
        if (n == 0 || line[0] == '#') continue;
        if (h->n_tokens == HTTP_MAX_TOKENS) { rc = zp_err_set(-EINVAL, "%s: more than %d tokens", path, HTTP_MAX_TOKENS); break; }
        memcpy(h->tokens[h->n_tokens], line, n + 1);
        h->token_len[h->n_tokens++] = n;
    }
    fclose(f);
    if (!rc && !h->n_tokens) rc = zp_err_set(-EINVAL, "--http-token-file %s holds no token", path);
    return rc;
}

int brk_http_init(brk_t *b, const char *metrics_listen, const char *api_listen, const char *token_file, size_t max_body,
                  const char *key_dir)
{
    g_broker = b;
    if (!(b->http = calloc(1, sizeof *b->http))) return -ENOMEM;
    b->http->max_body = max_body ? max_body : HTTP_DEFAULT_BODY;
    if (key_dir && *key_dir) {
        if (key_dir[0] != '/') return zp_err_set(-EINVAL, "--http-key-dir %s: must be an absolute path", key_dir);
        if ((size_t)snprintf(b->http->key_dir, sizeof b->http->key_dir, "%s", key_dir) >= sizeof b->http->key_dir)
            return zp_err_set(-ENAMETOOLONG, "--http-key-dir too long");
    }
    int rc = 0;
    if (token_file && *token_file && (rc = load_tokens(b->http, token_file)) < 0) return rc;
    if (api_listen && *api_listen && (rc = start(b, "HTTP API", api_listen, true)) < 0) return rc;
    if (metrics_listen && *metrics_listen && (rc = start(b, "metrics", metrics_listen, false)) < 0) return rc;
    return 0;
}

const char *brk_http_addr(const brk_t *b, bool api)
{
    if (!b->http) return NULL;
    for (unsigned i = 0; i < b->http->n; i++)
        if (b->http->l[i].api == api) return b->http->l[i].addr;
    return NULL;
}

int brk_http_pollitems(brk_t *b, zmq_pollitem_t *it, int *timeout_ms)
{
    struct brk_http *h = b->http;
    int n = 0;
    for (unsigned i = 0; h && i < h->n; i++) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->l[i].d, MHD_DAEMON_INFO_EPOLL_FD);
        if (!di) continue;
        it[n++] = (zmq_pollitem_t){NULL, di->epoll_fd, ZMQ_POLLIN, 0};
        MHD_UNSIGNED_LONG_LONG to;
        if (MHD_get_timeout(h->l[i].d, &to) == MHD_YES && (long long)to < *timeout_ms) *timeout_ms = (int)to;
    }
    return n;
}

void brk_http_service(brk_t *b)
{
    for (unsigned i = 0; b->http && i < b->http->n; i++) MHD_run(b->http->l[i].d);
}

void brk_http_close(brk_t *b)
{
    if (!b->http) return;
    for (unsigned i = 0; i < b->http->n; i++) MHD_stop_daemon(b->http->l[i].d);
    free(b->http);
    b->http = NULL;
}
