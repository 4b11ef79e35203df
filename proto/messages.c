/* messages.c - encoders and strict decoders of the control-plane messages (proto.h).
 *
 * Each message is a top-level map; key 0 is the message version (ZP_PROTO_VERSION), the
 * fields use keys 1.. in the order of the struct. Decoders check the command byte, the
 * version, and every field's type and range through the codec's typed getters, so a struct
 * that decodes is safe to use: indices and generations are still to be checked against the
 * receiver's own state (the broker's job table, the slot word).
 * Tests: tests/test_proto.c (round trips, wrong types, missing keys), tests/ipc/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util/util.h"
#include "proto/proto.h"

#define U32MAX UINT32_MAX
#define U64MAX UINT64_MAX
#define ZP_SHM_GEN_MAX_ ((UINT64_C(1) << 56) - 1)   /* slot generations are 56-bit (shm.h) */

const char *zp_role_name(unsigned role)
{
    static const char *n[] = {"synth", "gpu", "final"};
    return role < ZP_NROLES ? n[role] : "?";
}
const char *zp_fail_class_name(unsigned cls)
{
    static const char *n[] = {"transient", "input", "worker", "device"};
    return cls < ZP_NFAIL_CLASSES ? n[cls] : "?";
}

const char *zp_prio_name(unsigned p)
{
    static const char *n[] = {"critical", "high", "normal", "low"};
    return p < ZP_NPRIO ? n[p] : "?";
}
int zp_prio_parse(const char *s)
{
    for (unsigned i = 0; i < ZP_NPRIO; i++)
        if (!strcasecmp(s, zp_prio_name(i))) return (int)i;
    if (s[0] >= '0' && s[0] <= '3' && !s[1]) return s[0] - '0';
    return -1;
}
const char *zp_part_state_name(unsigned s)
{
    static const char *n[] = {"queued", "running", "done", "failed", "canceled"};
    return s <= ZP_PART_CANCELED ? n[s] : "?";
}
const char *zp_job_state_name(unsigned s)
{
    static const char *n[] = {"running", "done", "failed", "canceled"};
    return s <= ZP_JOB_CANCELED ? n[s] : "?";
}
char *zp_str_dup(zp_str_t s)
{
    char *r = malloc(s.len + 1);
    if (!r) return NULL;
    if (s.len) memcpy(r, s.p, s.len);
    r[s.len] = 0;
    return r;
}
bool zp_str_eq(zp_str_t s, const char *z)
{
    size_t n = strlen(z);
    return n == s.len && (!n || !memcmp(s.p, z, n));
}

/* ---- common plumbing ---- */
static int enc_start(zp_enc_t *e, uint8_t cmd, size_t max)
{
    return zp_enc_init(e, cmd, ZP_PROTO_VERSION, max);
}
static int enc_done(zp_enc_t *e, uint8_t **buf, size_t *len)
{
    const uint8_t *b;
    int rc = zp_enc_finish(e, &b, len);
    if (rc < 0) { zp_enc_close(e); return rc; }
    *buf = zp_enc_take(e, len);
    zp_enc_close(e);
    return *buf ? 0 : -ENOMEM;
}
static int enc_strref(zp_enc_t *e, unsigned key, zp_str_t s)
{
    return zp_enc_strn(e, key, s.p ? s.p : "", s.len);
}
static int dec_start(const zp_frame_t *f, uint8_t cmd)
{
    if (f->cmd != cmd) return zp_err_set(ZP_EPROTO, "expected command %u, got %u", cmd, f->cmd);
    if (f->msg_version != ZP_PROTO_VERSION)
        return zp_err_set(ZP_EPROTO, "message version %u, expected %u", f->msg_version, ZP_PROTO_VERSION);
    return 0;
}
static int get_str(const zp_map_t *m, unsigned key, size_t maxlen, zp_str_t *s)
{
    s->p = ""; s->len = 0;
    return zp_map_get_str(m, key, maxlen, &s->p, &s->len);
}
/* a non-empty string without NUL bytes (paths, ids) */
static int get_name(const zp_map_t *m, unsigned key, size_t maxlen, bool optional, zp_str_t *s)
{
    int rc = get_str(m, optional ? ZP_OPT(key) : key, maxlen, s);
    if (rc < 0) return rc;
    if (!s->p) { s->p = ""; s->len = 0; }
    if (!optional && s->len == 0) return zp_err_set(ZP_EPROTO, "key %u: empty string", key);
    if (s->len && memchr(s->p, 0, s->len)) return zp_err_set(ZP_EPROTO, "key %u: NUL byte in string", key);
    return 0;
}
/* a path another process opens (it runs in another directory): non-empty, no NUL, absolute;
 * errors name the key and the field */
static int check_path(const char *key, const char *what, zp_str_t s)
{
    if (!s.len) return zp_err_set(ZP_EPROTO, "key %s (%s): empty path", key, what);
    if (memchr(s.p, 0, s.len)) return zp_err_set(ZP_EPROTO, "key %s (%s): NUL byte in path", key, what);
    if (s.p[0] != '/')
        return zp_err_set(ZP_EPROTO, "key %s (%s): '%.*s' is a relative path; paths must be absolute (the daemons "
                          "run in other directories)", key, what, (int)(s.len > 200 ? 200 : s.len), s.p);
    return 0;
}
static int get_path(const zp_map_t *m, const char *key, unsigned k, const char *what, bool optional, zp_str_t *s)
{
    int rc = get_str(m, optional ? ZP_OPT(k) : k, ZP_MSG_PATH_MAX, s);
    if (rc < 0) return rc;
    if (!s->p) { s->p = ""; s->len = 0; }
    return optional && !s->len ? 0 : check_path(key, what, *s);
}
#define TRY(x) do { int rc_ = (x); if (rc_ < 0) return rc_; } while (0)

/* ---- the key list (HELLO 10, HEARTBEAT 3): [loads, evictions, budget, [[path, bytes, tier]...]] */
static void enc_keys(zp_enc_t *e, unsigned key, const zp_msg_keys_t *k)
{
    if (!k->present) return;
    zp_enc_array_begin(e, key);
    zp_enc_u64(e, 0, k->loads); zp_enc_u64(e, 0, k->evictions); zp_enc_u64(e, 0, k->budget);
    zp_enc_array_begin(e, 0);
    for (size_t i = 0; i < k->n && i < ZP_MSG_MAX_KEYS; i++) {
        zp_enc_array_begin(e, 0);
        enc_strref(e, 0, k->k[i].path); zp_enc_u64(e, 0, k->k[i].bytes); zp_enc_u64(e, 0, k->k[i].tier);
        zp_enc_end(e);
    }
    zp_enc_end(e);
    zp_enc_end(e);
}
static int dec_keys(const zp_map_t *mp, unsigned key, zp_msg_keys_t *k)
{
    memset(k, 0, sizeof *k);
    if (!zp_map_has(mp, key)) return 0;
    zp_arr_t a, l, e;
    uint64_t v;
    TRY(zp_map_get_array(mp, key, 4, &a));
    if (a.n != 4) return zp_err_set(ZP_EPROTO, "key %u: key list needs [loads, evictions, budget, keys]", key);
    TRY(zp_arr_next_u64(&a, 0, U64MAX, &k->loads));
    TRY(zp_arr_next_u64(&a, 0, U64MAX, &k->evictions));
    TRY(zp_arr_next_u64(&a, 0, U64MAX, &k->budget));
    TRY(zp_arr_next_array(&a, ZP_MSG_MAX_KEYS, &l));
    for (uint32_t i = 0; i < l.n; i++) {
        zp_msg_key_t *x = &k->k[i];
        TRY(zp_arr_next_array(&l, 3, &e));
        if (e.n != 3) return zp_err_set(ZP_EPROTO, "key %u.3.%u: a key needs [path, bytes, tier]", key, i);
        TRY(zp_arr_next_str(&e, ZP_MSG_PATH_MAX, &x->path.p, &x->path.len));
        char what[32];
        snprintf(what, sizeof what, "%u.3.%u", key, i);
        TRY(check_path(what, "key path", x->path));
        TRY(zp_arr_next_u64(&e, 0, (uint64_t)1 << 50, &x->bytes));
        TRY(zp_arr_next_u64(&e, 0, ZP_MSG_KEY_TIERS, &v));
        x->tier = (uint32_t)v;
    }
    k->n = l.n;
    k->present = true;
    return 0;
}

/* ---- HELLO ---- 1 role 2 instance 3 incarnation 4 pid 5 caps 6 credits 7 name 8 held [[slot, gen]...]
 *                  9 identity token (optional, bin ZP_ID_TOKEN_LEN) 10 keys (optional, the key list) */
int zp_msg_hello_encode(uint8_t **buf, size_t *len, const zp_msg_hello_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_HELLO, 0);
    zp_enc_u64(&e, 1, m->role); zp_enc_u64(&e, 2, m->instance); zp_enc_u64(&e, 3, m->incarnation);
    zp_enc_u64(&e, 4, m->pid); zp_enc_u64(&e, 5, m->capabilities); zp_enc_u64(&e, 6, m->credits);
    enc_strref(&e, 7, m->name);
    zp_enc_array_begin(&e, 8);
    for (size_t i = 0; i < m->n_held && i < ZP_MSG_MAX_HELD; i++) {
        zp_enc_array_begin(&e, 0);
        zp_enc_u64(&e, 0, m->held[i].slot); zp_enc_u64(&e, 0, m->held[i].gen);
        zp_enc_end(&e);
    }
    zp_enc_end(&e);
    if (m->has_token) zp_enc_bin(&e, 9, m->token, sizeof m->token);
    enc_keys(&e, 10, &m->keys);
    return enc_done(&e, buf, len);
}
int zp_msg_hello_decode(zp_msg_hello_t *m, const zp_frame_t *f)
{
    const zp_map_t *mp = &f->m;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_HELLO));
    TRY(zp_map_get_u32(mp, 1, 0, ZP_NROLES - 1, &m->role));
    TRY(zp_map_get_u32(mp, 2, 0, 1u << 20, &m->instance));
    TRY(zp_map_get_u64(mp, 3, 1, U64MAX, &m->incarnation));
    TRY(zp_map_get_u32(mp, 4, 1, U32MAX, &m->pid));
    TRY(zp_map_get_u32(mp, 5, 0, U32MAX, &m->capabilities));
    TRY(zp_map_get_u32(mp, 6, 1, ZP_MSG_MAX_CREDITS, &m->credits));
    TRY(get_name(mp, 7, ZP_MSG_NAME_MAX, true, &m->name));
    zp_arr_t a, s;
    TRY(zp_map_get_array(mp, 8, ZP_MSG_MAX_HELD, &a));
    m->n_held = a.n;
    for (uint32_t i = 0; i < a.n; i++) {
        uint64_t slot;
        TRY(zp_arr_next_array(&a, 2, &s));
        if (s.n != 2) return zp_err_set(ZP_EPROTO, "key 8.%u: held entry needs [slot, gen]", i);
        TRY(zp_arr_next_u64(&s, 0, U32MAX, &slot));
        TRY(zp_arr_next_u64(&s, 1, ZP_SHM_GEN_MAX_, &m->held[i].gen));
        m->held[i].slot = (uint32_t)slot;
    }
    if (zp_map_has(mp, 9)) {
        TRY(zp_map_get_bin_exact(mp, 9, m->token, sizeof m->token));
        m->has_token = true;
    }
    TRY(dec_keys(mp, 10, &m->keys));
    return 0;
}

/* ---- HEARTBEAT ---- 1 incarnation 2 busy 3 keys (optional, the key list above) */
int zp_msg_heartbeat_encode(uint8_t **buf, size_t *len, const zp_msg_heartbeat_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_HEARTBEAT, 0);
    zp_enc_u64(&e, 1, m->incarnation); zp_enc_u64(&e, 2, m->busy);
    enc_keys(&e, 3, &m->keys);
    return enc_done(&e, buf, len);
}
int zp_msg_heartbeat_decode(zp_msg_heartbeat_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_HEARTBEAT));
    TRY(zp_map_get_u64(&f->m, ZP_OPT(1), 0, U64MAX, &m->incarnation));
    TRY(zp_map_get_u32(&f->m, ZP_OPT(2), 0, 1u << 20, &m->busy));
    TRY(dec_keys(&f->m, 3, &m->keys));
    return 0;
}

/* ---- DONE ---- 1 slot 2 gen 3 new_gen 4 job 5 part 6 t_start 7 t_end 8 dt[] 9 proof 10 public 11 bin
 *                 12 tm[] (optional: staging start, staging end, compute start, compute end,
 *                 verify end; written when set) */
int zp_msg_done_encode(uint8_t **buf, size_t *len, const zp_msg_done_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_DONE, 0);
    zp_enc_u64(&e, 1, m->slot); zp_enc_u64(&e, 2, m->gen); zp_enc_u64(&e, 3, m->new_gen);
    zp_enc_u64(&e, 4, m->job); zp_enc_u64(&e, 5, m->part);
    zp_enc_u64(&e, 6, m->t_start); zp_enc_u64(&e, 7, m->t_end);
    zp_enc_u64_array(&e, 8, m->dt, ZP_DT_N);
    if (m->proof_json.len) enc_strref(&e, 9, m->proof_json);
    if (m->public_json.len) enc_strref(&e, 10, m->public_json);
    if (m->proof_bin_len) zp_enc_bin(&e, 11, m->proof_bin, m->proof_bin_len);
    bool any_tm = false;
    for (unsigned i = 0; i < ZP_TM_N; i++) any_tm |= m->tm[i] != 0;
    if (any_tm) zp_enc_u64_array(&e, 12, m->tm, ZP_TM_N);
    return enc_done(&e, buf, len);
}
int zp_msg_done_decode(zp_msg_done_t *m, const zp_frame_t *f)
{
    const zp_map_t *mp = &f->m;
    size_t n = 0;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_DONE));
    TRY(zp_map_get_u32(mp, 1, 0, U32MAX, &m->slot));
    TRY(zp_map_get_u64(mp, 2, 1, ZP_SHM_GEN_MAX_, &m->gen));
    TRY(zp_map_get_u64(mp, 3, 1, ZP_SHM_GEN_MAX_, &m->new_gen));
    if (m->new_gen <= m->gen) return zp_err_set(ZP_EPROTO, "key 3: new generation %llu not after %llu",
                                                (unsigned long long)m->new_gen, (unsigned long long)m->gen);
    TRY(zp_map_get_u64(mp, 4, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(mp, 5, 0, ZP_MSG_MAX_PARTS - 1, &m->part));
    TRY(zp_map_get_u64(mp, 6, 0, U64MAX, &m->t_start));
    TRY(zp_map_get_u64(mp, 7, 0, U64MAX, &m->t_end));
    if (m->t_end < m->t_start) return zp_err_set(ZP_EPROTO, "key 7: end before start");
    TRY(zp_map_get_u64_array(mp, 8, ZP_DT_N, 0, U64MAX, m->dt, &n));
    TRY(get_name(mp, 9, ZP_MSG_JSON_MAX, true, &m->proof_json));
    TRY(get_name(mp, 10, ZP_MSG_JSON_MAX, true, &m->public_json));
    TRY(zp_map_get_bin(mp, ZP_OPT(11), ZP_MSG_BIN_MAX, &m->proof_bin, &m->proof_bin_len));
    TRY(zp_map_get_u64_array(mp, ZP_OPT(12), ZP_TM_N, 0, U64MAX, m->tm, &n));
    if (m->tm[ZP_TM_COMPUTE_END] < m->tm[ZP_TM_COMPUTE_START] || m->tm[ZP_TM_STAGE_END] < m->tm[ZP_TM_STAGE_START])
        return zp_err_set(ZP_EPROTO, "key 12: an end before its start");
    if (m->tm[ZP_TM_VERIFY_END] && m->tm[ZP_TM_VERIFY_END] < m->tm[ZP_TM_STAGE_END])
        return zp_err_set(ZP_EPROTO, "key 12: the deferred verify ended before the staging did");
    const uint64_t *tm = m->tm;
    if ((tm[ZP_TM_RUN_START] || tm[ZP_TM_RUN_END]) &&
        !(tm[ZP_TM_COMPUTE_START] <= tm[ZP_TM_RUN_START] && tm[ZP_TM_RUN_START] <= tm[ZP_TM_RUN_END] &&
          tm[ZP_TM_RUN_END] <= tm[ZP_TM_COMPUTE_END]))
        return zp_err_set(ZP_EPROTO, "key 12: the compute thread's span is not inside the compute's");
    return 0;
}

/* ---- FAIL ---- 1 slot 2 gen 3 job 4 part 5 retryable 6 code 7 payload_bad 8 t_start 9 t_end 10 message
 *                 11 unstarted (optional) 12 stopping (optional): written only when true, so a
 *                 FAIL from an older worker still decodes (both false)
 *                 13 fail_class (optional, zp_fail_class_t; absent: INPUT if !retryable else TRANSIENT) */
int zp_msg_fail_encode(uint8_t **buf, size_t *len, const zp_msg_fail_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_FAIL, 0);
    zp_enc_u64(&e, 1, m->slot); zp_enc_u64(&e, 2, m->gen); zp_enc_u64(&e, 3, m->job);
    zp_enc_u64(&e, 4, m->part); zp_enc_bool(&e, 5, m->retryable); zp_enc_i64(&e, 6, m->code);
    zp_enc_bool(&e, 7, m->payload_bad); zp_enc_u64(&e, 8, m->t_start); zp_enc_u64(&e, 9, m->t_end);
    zp_str_t msg = m->message;
    if (msg.len > ZP_MSG_TEXT_MAX) msg.len = ZP_MSG_TEXT_MAX;
    enc_strref(&e, 10, msg);
    if (m->unstarted) zp_enc_bool(&e, 11, true);
    if (m->stopping) zp_enc_bool(&e, 12, true);
    /* a sender that never set a class: the old retryable flag decides */
    zp_enc_u64(&e, 13, m->fail_class != ZP_FAIL_TRANSIENT ? m->fail_class
                       : (m->retryable ? ZP_FAIL_TRANSIENT : ZP_FAIL_INPUT));
    return enc_done(&e, buf, len);
}
int zp_msg_fail_decode(zp_msg_fail_t *m, const zp_frame_t *f)
{
    const zp_map_t *mp = &f->m;
    int64_t code;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_FAIL));
    TRY(zp_map_get_u32(mp, 1, 0, U32MAX, &m->slot));
    TRY(zp_map_get_u64(mp, 2, 1, ZP_SHM_GEN_MAX_, &m->gen));
    TRY(zp_map_get_u64(mp, 3, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(mp, 4, 0, ZP_MSG_MAX_PARTS - 1, &m->part));
    TRY(zp_map_get_bool(mp, 5, &m->retryable));
    TRY(zp_map_get_i64(mp, 6, -100000, 0, &code));
    m->code = (int32_t)code;
    TRY(zp_map_get_bool(mp, 7, &m->payload_bad));
    TRY(zp_map_get_u64(mp, 8, 0, U64MAX, &m->t_start));
    TRY(zp_map_get_u64(mp, 9, 0, U64MAX, &m->t_end));
    TRY(get_str(mp, 10, ZP_MSG_TEXT_MAX, &m->message));
    TRY(zp_map_get_bool(mp, ZP_OPT(11), &m->unstarted));
    TRY(zp_map_get_bool(mp, ZP_OPT(12), &m->stopping));
    uint32_t cls = m->retryable ? ZP_FAIL_TRANSIENT : ZP_FAIL_INPUT;
    TRY(zp_map_get_u32(mp, ZP_OPT(13), 0, ZP_NFAIL_CLASSES - 1, &cls));
    m->fail_class = (uint8_t)cls;
    return 0;
}

/* ---- ASSIGN ---- 1 slot 2 gen 3 in_gen 4 payload_gen 5 stage 6 job 7 part 8 attempt 9 prio
 *                  10 zkey 11 r1cs 12 wtns 13 epoch
 *                  14 lease_deadline (optional, monotonic ns; written only when set)
 *                  15 wasm (optional: written only when set) */
int zp_msg_assign_encode(uint8_t **buf, size_t *len, const zp_msg_assign_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_ASSIGN, 0);
    zp_enc_u64(&e, 1, m->slot); zp_enc_u64(&e, 2, m->gen); zp_enc_u64(&e, 3, m->in_gen);
    zp_enc_u64(&e, 4, m->payload_gen); zp_enc_u64(&e, 5, m->stage); zp_enc_u64(&e, 6, m->job);
    zp_enc_u64(&e, 7, m->part); zp_enc_u64(&e, 8, m->attempt); zp_enc_u64(&e, 9, m->priority);
    enc_strref(&e, 10, m->zkey); enc_strref(&e, 11, m->r1cs); enc_strref(&e, 12, m->wtns);
    zp_enc_u64(&e, 13, m->epoch);
    if (m->lease_deadline) zp_enc_u64(&e, 14, m->lease_deadline);
    if (m->wasm.len) enc_strref(&e, 15, m->wasm);
    return enc_done(&e, buf, len);
}
int zp_msg_assign_decode(zp_msg_assign_t *m, const zp_frame_t *f)
{
    const zp_map_t *mp = &f->m;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_ASSIGN));
    TRY(zp_map_get_u32(mp, 1, 0, U32MAX, &m->slot));
    TRY(zp_map_get_u64(mp, 2, 1, ZP_SHM_GEN_MAX_, &m->gen));
    TRY(zp_map_get_u64(mp, 3, 0, ZP_SHM_GEN_MAX_, &m->in_gen));
    TRY(zp_map_get_u64(mp, 4, 0, ZP_SHM_GEN_MAX_, &m->payload_gen));
    TRY(zp_map_get_u32(mp, 5, 0, ZP_NROLES - 1, &m->stage));
    TRY(zp_map_get_u64(mp, 6, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(mp, 7, 0, ZP_MSG_MAX_PARTS - 1, &m->part));
    TRY(zp_map_get_u32(mp, 8, 1, 1000, &m->attempt));
    TRY(zp_map_get_u32(mp, 9, 0, ZP_NPRIO - 1, &m->priority));
    TRY(get_path(mp, "10", 10, "zkey", false, &m->zkey));
    TRY(get_path(mp, "11", 11, "r1cs", true, &m->r1cs));
    TRY(get_path(mp, "12", 12, "witness", m->stage != ZP_ROLE_SYNTH, &m->wtns));
    TRY(zp_map_get_u64(mp, 13, 1, U64MAX, &m->epoch));
    TRY(zp_map_get_u64(mp, ZP_OPT(14), 0, U64MAX, &m->lease_deadline));
    TRY(get_path(mp, "15", 15, "wasm", true, &m->wasm));
    if (m->wasm.len && m->stage == ZP_ROLE_SYNTH && !m->wtns.len)
        return zp_err_set(ZP_EPROTO, "ASSIGN key 15 (wasm) without key 12 (the input)");
    if (m->stage != ZP_ROLE_SYNTH && (m->in_gen == 0 || m->payload_gen == 0))
        return zp_err_set(ZP_EPROTO, "ASSIGN for stage %s without input generation", zp_role_name(m->stage));
    return 0;
}

/* ---- ACK / REVOKE / RESET ---- */
int zp_msg_ack_encode(uint8_t **buf, size_t *len, const zp_msg_ack_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_ACK, 0);
    zp_enc_u64(&e, 1, m->slot); zp_enc_u64(&e, 2, m->gen); zp_enc_bool(&e, 3, m->accepted);
    return enc_done(&e, buf, len);
}
int zp_msg_ack_decode(zp_msg_ack_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_ACK));
    TRY(zp_map_get_u32(&f->m, 1, 0, U32MAX, &m->slot));
    TRY(zp_map_get_u64(&f->m, 2, 1, ZP_SHM_GEN_MAX_, &m->gen));
    TRY(zp_map_get_bool(&f->m, 3, &m->accepted));
    return 0;
}
int zp_msg_revoke_encode(uint8_t **buf, size_t *len, const zp_msg_revoke_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_REVOKE, 0);
    zp_enc_u64(&e, 1, m->slot); zp_enc_u64(&e, 2, m->gen);
    return enc_done(&e, buf, len);
}
int zp_msg_revoke_decode(zp_msg_revoke_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_REVOKE));
    TRY(zp_map_get_u32(&f->m, 1, 0, U32MAX, &m->slot));
    TRY(zp_map_get_u64(&f->m, 2, 1, ZP_SHM_GEN_MAX_, &m->gen));
    return 0;
}
int zp_msg_reset_encode(uint8_t **buf, size_t *len, const zp_msg_reset_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_RESET, 0);
    enc_strref(&e, 1, m->reason);
    return enc_done(&e, buf, len);
}
int zp_msg_reset_decode(zp_msg_reset_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_RESET));
    TRY(get_str(&f->m, 1, ZP_MSG_TEXT_MAX, &m->reason));
    return 0;
}

/* ---- SUBMIT ---- 1 request id 2 zkey 3 r1cs 4 priority 5 [wtns...] 6 [inline bins] (optional)
 *                  7 wasm (optional: then 5/6 are input.json paths/texts) */
int zp_msg_submit_encode(uint8_t **buf, size_t *len, const zp_msg_submit_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_SUBMIT, ZP_FRAME_MAX_LIMIT);
    enc_strref(&e, 1, m->request_id); enc_strref(&e, 2, m->zkey); enc_strref(&e, 3, m->r1cs);
    zp_enc_u64(&e, 4, m->priority);
    zp_enc_array_begin(&e, 5);
    for (size_t i = 0; i < m->n_wtns && i < ZP_MSG_MAX_PARTS; i++) enc_strref(&e, 0, m->wtns[i]);
    zp_enc_end(&e);
    bool any_inline = false;
    for (size_t i = 0; i < m->n_wtns && i < ZP_MSG_MAX_PARTS; i++) any_inline |= m->wtns_data_len[i] > 0;
    if (any_inline) {
        zp_enc_array_begin(&e, 6);
        for (size_t i = 0; i < m->n_wtns && i < ZP_MSG_MAX_PARTS; i++) zp_enc_bin(&e, 0, m->wtns_data[i], m->wtns_data_len[i]);
        zp_enc_end(&e);
    }
    if (m->wasm.len) enc_strref(&e, 7, m->wasm);
    return enc_done(&e, buf, len);
}
int zp_msg_submit_decode(zp_msg_submit_t *m, const zp_frame_t *f)
{
    const zp_map_t *mp = &f->m;
    zp_arr_t a;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_SUBMIT));
    TRY(get_name(mp, 1, 128, false, &m->request_id));
    TRY(get_path(mp, "2", 2, "zkey", false, &m->zkey));
    TRY(get_path(mp, "3", 3, "r1cs", true, &m->r1cs));
    TRY(zp_map_get_u32(mp, 4, 0, ZP_NPRIO - 1, &m->priority));
    TRY(zp_map_get_array(mp, 5, ZP_MSG_MAX_PARTS, &a));
    if (a.n == 0) return zp_err_set(ZP_EPROTO, "key 5 (witnesses): a job needs at least one witness");
    for (uint32_t i = 0; i < a.n; i++)
        TRY(zp_arr_next_str(&a, ZP_MSG_PATH_MAX, &m->wtns[i].p, &m->wtns[i].len));
    m->n_wtns = a.n;
    if (zp_map_has(mp, 6)) {           /* inline witness bytes (optional) */
        zp_arr_t d;
        TRY(zp_map_get_array(mp, 6, ZP_MSG_MAX_PARTS, &d));
        if (d.n != m->n_wtns)
            return zp_err_set(ZP_EPROTO, "key 6: %zu inline witness entries for %zu witnesses", (size_t)d.n, m->n_wtns);
        for (size_t i = 0; i < m->n_wtns; i++) {
            TRY(zp_arr_next_bin(&d, ZP_FRAME_MAX_LIMIT, &m->wtns_data[i], &m->wtns_data_len[i]));
            if (m->wtns_data_len[i] && m->wtns[i].len)
                return zp_err_set(ZP_EPROTO, "key 6.%zu: witness %zu has both a path and inline bytes", i, i);
        }
    }
    TRY(get_path(mp, "7", 7, "wasm", true, &m->wasm));
    if (m->wasm.len)
        for (size_t i = 0; i < m->n_wtns; i++)
            if (m->wtns_data_len[i] > ZP_MSG_INPUT_MAX)
                return zp_err_set(ZP_EPROTO, "key 6.%zu: inline input %zu is %zu bytes, more than the %u allowed", i, i,
                                  m->wtns_data_len[i], ZP_MSG_INPUT_MAX);
    for (size_t i = 0; i < m->n_wtns; i++) {
        char k[24], what[32];
        if (m->wtns_data_len[i]) continue;   /* inline bytes instead of a path */
        snprintf(k, sizeof k, "5.%zu", i);
        snprintf(what, sizeof what, "witness %zu", i);
        TRY(check_path(k, what, m->wtns[i]));
    }
    return 0;
}

/* ---- STATUS / AWAIT / CANCEL / TRACE ---- */
int zp_msg_status_encode(uint8_t **buf, size_t *len, const zp_msg_status_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_STATUS, 0);
    zp_enc_bool(&e, 1, m->json);
    return enc_done(&e, buf, len);
}
int zp_msg_status_decode(zp_msg_status_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_STATUS));
    TRY(zp_map_get_bool(&f->m, ZP_OPT(1), &m->json));
    return 0;
}
int zp_msg_await_encode(uint8_t **buf, size_t *len, const zp_msg_await_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_AWAIT, 0);
    zp_enc_u64(&e, 1, m->job); zp_enc_u64(&e, 2, m->timeout_ms);
    return enc_done(&e, buf, len);
}
int zp_msg_await_decode(zp_msg_await_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_AWAIT));
    TRY(zp_map_get_u64(&f->m, 1, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(&f->m, 2, 0, 7u * 24 * 3600 * 1000, &m->timeout_ms));
    return 0;
}
int zp_msg_cancel_encode(uint8_t **buf, size_t *len, const zp_msg_cancel_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_CANCEL, 0);
    zp_enc_u64(&e, 1, m->job);
    return enc_done(&e, buf, len);
}
int zp_msg_cancel_decode(zp_msg_cancel_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_CANCEL));
    TRY(zp_map_get_u64(&f->m, 1, 1, U64MAX, &m->job));
    return 0;
}
int zp_msg_trace_encode(uint8_t **buf, size_t *len, const zp_msg_trace_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_TRACE, 0);
    zp_enc_u64(&e, 1, m->max_parts);
    return enc_done(&e, buf, len);
}
int zp_msg_trace_decode(zp_msg_trace_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_TRACE));
    TRY(zp_map_get_u32(&f->m, ZP_OPT(1), 0, U32MAX, &m->max_parts));
    return 0;
}

/* ---- METRICS ---- 1 format (optional; 0 = Prometheus text) */
int zp_msg_metrics_encode(uint8_t **buf, size_t *len, const zp_msg_metrics_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_METRICS, 0);
    zp_enc_u64(&e, 1, m->format);
    return enc_done(&e, buf, len);
}
int zp_msg_metrics_decode(zp_msg_metrics_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_METRICS));
    TRY(zp_map_get_u32(&f->m, ZP_OPT(1), 0, 0, &m->format));
    return 0;
}

/* ---- broker -> client ---- */
int zp_msg_submitted_encode(uint8_t **buf, size_t *len, const zp_msg_submitted_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_SUBMITTED, 0);
    zp_enc_u64(&e, 1, m->job); zp_enc_u64(&e, 2, m->n_parts); zp_enc_bool(&e, 3, m->existed);
    return enc_done(&e, buf, len);
}
int zp_msg_submitted_decode(zp_msg_submitted_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_SUBMITTED));
    TRY(zp_map_get_u64(&f->m, 1, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(&f->m, 2, 1, ZP_MSG_MAX_PARTS, &m->n_parts));
    TRY(zp_map_get_bool(&f->m, 3, &m->existed));
    return 0;
}
int zp_msg_text_encode(uint8_t **buf, size_t *len, const zp_msg_text_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_TEXT, ZP_FRAME_MAX_LIMIT);
    enc_strref(&e, 1, m->text);
    return enc_done(&e, buf, len);
}
int zp_msg_text_decode(zp_msg_text_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_TEXT));
    TRY(get_str(&f->m, 1, ZP_FRAME_MAX_LIMIT, &m->text));
    return 0;
}
/* RESULT: 1 job 2 state 3 timed_out 4 [ {1 state 2 attempts 3 error 4 proof 5 public 6 bin} ...] */
int zp_msg_result_encode(uint8_t **buf, size_t *len, const zp_msg_result_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_RESULT, ZP_FRAME_MAX_LIMIT);
    zp_enc_u64(&e, 1, m->job); zp_enc_u64(&e, 2, m->state); zp_enc_bool(&e, 3, m->timed_out);
    zp_enc_array_begin(&e, 4);
    for (size_t i = 0; i < m->n_parts && i < ZP_MSG_MAX_PARTS; i++) {
        const zp_msg_part_result_t *p = &m->parts[i];
        zp_enc_map_begin(&e, 0);
        zp_enc_u64(&e, 1, p->state); zp_enc_u64(&e, 2, p->attempts);
        zp_str_t err = p->error;
        if (err.len > ZP_MSG_TEXT_MAX) err.len = ZP_MSG_TEXT_MAX;
        if (err.len) enc_strref(&e, 3, err);
        if (p->proof_json.len) enc_strref(&e, 4, p->proof_json);
        if (p->public_json.len) enc_strref(&e, 5, p->public_json);
        if (p->proof_bin_len) zp_enc_bin(&e, 6, p->proof_bin, p->proof_bin_len);
        zp_enc_end(&e);
    }
    zp_enc_end(&e);
    return enc_done(&e, buf, len);
}
int zp_msg_result_decode(zp_msg_result_t *m, const zp_frame_t *f)
{
    const zp_map_t *mp = &f->m;
    zp_arr_t a;
    zp_map_t pm;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_RESULT));
    TRY(zp_map_get_u64(mp, 1, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(mp, 2, 0, ZP_JOB_CANCELED, &m->state));
    TRY(zp_map_get_bool(mp, 3, &m->timed_out));
    TRY(zp_map_get_array(mp, 4, ZP_MSG_MAX_PARTS, &a));
    m->parts = calloc(a.n ? a.n : 1, sizeof *m->parts);
    if (!m->parts) return -ENOMEM;
    m->n_parts = a.n;
    for (uint32_t i = 0; i < a.n; i++) {
        zp_msg_part_result_t *p = &m->parts[i];
        int rc;
        if ((rc = zp_arr_next_map(&a, &pm)) < 0 ||
            (rc = zp_map_get_u32(&pm, 1, 0, ZP_PART_CANCELED, &p->state)) < 0 ||
            (rc = zp_map_get_u32(&pm, 2, 0, 1000, &p->attempts)) < 0 ||
            (rc = get_name(&pm, 3, ZP_MSG_TEXT_MAX, true, &p->error)) < 0 ||
            (rc = get_name(&pm, 4, ZP_MSG_JSON_MAX, true, &p->proof_json)) < 0 ||
            (rc = get_name(&pm, 5, ZP_MSG_JSON_MAX, true, &p->public_json)) < 0 ||
            (rc = zp_map_get_bin(&pm, ZP_OPT(6), ZP_MSG_BIN_MAX, &p->proof_bin, &p->proof_bin_len)) < 0) {
            zp_msg_result_free(m);
            return rc;
        }
    }
    return 0;
}
void zp_msg_result_free(zp_msg_result_t *m)
{
    free(m->parts);
    m->parts = NULL;
    m->n_parts = 0;
}
int zp_msg_canceled_encode(uint8_t **buf, size_t *len, const zp_msg_canceled_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_CANCELED, 0);
    zp_enc_u64(&e, 1, m->job); zp_enc_u64(&e, 2, m->freed);
    return enc_done(&e, buf, len);
}
int zp_msg_canceled_decode(zp_msg_canceled_t *m, const zp_frame_t *f)
{
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_CANCELED));
    TRY(zp_map_get_u64(&f->m, 1, 1, U64MAX, &m->job));
    TRY(zp_map_get_u32(&f->m, 2, 0, U32MAX, &m->freed));
    return 0;
}
int zp_msg_error_encode(uint8_t **buf, size_t *len, const zp_msg_error_t *m)
{
    zp_enc_t e;
    enc_start(&e, ZP_CMD_ERROR, 0);
    zp_enc_i64(&e, 1, m->code);
    zp_str_t msg = m->message;
    if (msg.len > ZP_MSG_TEXT_MAX) msg.len = ZP_MSG_TEXT_MAX;
    enc_strref(&e, 2, msg);
    return enc_done(&e, buf, len);
}
int zp_msg_error_decode(zp_msg_error_t *m, const zp_frame_t *f)
{
    int64_t code;
    memset(m, 0, sizeof *m);
    TRY(dec_start(f, ZP_CMD_ERROR));
    TRY(zp_map_get_i64(&f->m, 1, -100000, 0, &code));
    m->code = (int32_t)code;
    TRY(get_str(&f->m, 2, ZP_MSG_TEXT_MAX, &m->message));
    return 0;
}
