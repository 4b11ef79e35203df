/* identity.c - worker identity tokens and the supervisor channel's messages (identity.h).
 * Everything here parses strictly: a message from the other end of the channel is still
 * checked field by field. Tests: tests/test_proto.c, tests/fuzz/fuzz_frames.c, tests/ipc/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"
#include "proto/identity.h"

void zp_identity_hex(char *out, const uint8_t token[ZP_ID_TOKEN_LEN])
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < ZP_ID_TOKEN_LEN; i++) {
        out[2 * i] = d[token[i] >> 4];
        out[2 * i + 1] = d[token[i] & 15];
    }
    out[2 * ZP_ID_TOKEN_LEN] = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int zp_identity_parse(uint8_t token[ZP_ID_TOKEN_LEN], const char *hex, size_t len)
{
    if (len != 2 * ZP_ID_TOKEN_LEN)
        return zp_err_set(ZP_EPROTO, "identity token: %zu characters, expected %d hex digits", len, 2 * ZP_ID_TOKEN_LEN);
    for (int i = 0; i < ZP_ID_TOKEN_LEN; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return zp_err_set(ZP_EPROTO, "identity token: not a hex digit at %d", 2 * i + (hi >= 0));
        token[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int zp_identity_new(uint8_t token[ZP_ID_TOKEN_LEN])
{
    return zp_random_bytes(token, ZP_ID_TOKEN_LEN);
}

void zp_identity_hello(zp_msg_hello_t *m)
{
    static int state;                    /* 0: not read, 1: have one, -1: none */
    static uint8_t tok[ZP_ID_TOKEN_LEN];
    if (!state) {
        char *v = getenv(ZP_IDENTITY_ENV);
        state = -1;
        if (v && *v) {
            size_t n = strlen(v);
            if (zp_identity_parse(tok, v, n) == 0) state = 1;
            else zp_log(ZP_LOG_WARN, "%s from the environment is unusable (%s); saying HELLO without it",
                        ZP_IDENTITY_ENV, zp_err_msg());
            memset(v, 'x', n);          /* the environment block is what /proc/<pid>/environ shows */
        }
        unsetenv(ZP_IDENTITY_ENV);
    }
    m->has_token = state == 1;
    if (state == 1) memcpy(m->token, tok, sizeof tok);
}

uint32_t zp_peer_address_pid(const char *pa, uint32_t *uid)
{
    /* "<address>:<uid>:<gid>:<pid>": the last three fields, decimal */
    if (!pa) return 0;
    const char *c[3] = {0};
    int k = 0;
    for (const char *p = pa + strlen(pa); p > pa && k < 3;)
        if (*--p == ':') c[k++] = p + 1;
    if (k < 3) return 0;
    unsigned long long v[3];
    for (int i = 0; i < 3; i++) {
        char *e;
        errno = 0;
        v[i] = strtoull(c[i], &e, 10);
        if (errno || e == c[i] || (*e && *e != ':') || v[i] > UINT32_MAX) return 0;
    }
    if (uid) *uid = (uint32_t)v[2];     /* c[2] is the uid field (third from the end) */
    return (uint32_t)v[0];
}

/* ---------------------------------------------------------------- supervisor channel */
int zp_sup_encode(char *buf, size_t n, const zp_sup_msg_t *m)
{
    char hex[2 * ZP_ID_TOKEN_LEN + 1];
    int k;
    switch (m->type) {
    case ZP_SUP_REG:
        zp_identity_hex(hex, m->token);
        k = snprintf(buf, n, "REG %u %u %u %u %s", m->child, m->role, m->instance, m->pid, hex);
        break;
    case ZP_SUP_EXIT: k = snprintf(buf, n, "EXIT %u %u", m->child, m->pid); break;
    case ZP_SUP_FENCE: {
        char r[sizeof m->reason];
        size_t i;
        for (i = 0; m->reason[i] && i < sizeof r - 1; i++)
            r[i] = m->reason[i] >= 0x20 && m->reason[i] < 0x7f ? m->reason[i] : '?';
        r[i] = 0;
        k = snprintf(buf, n, "FENCE %u %u %s", m->child, m->pid, r[0] ? r : "-");
        break;
    }
    default: return zp_err_set(-EINVAL, "supervisor message: type %d", (int)m->type);
    }
    if (k < 0 || (size_t)k >= n) return zp_err_set(ZP_ETOOBIG, "supervisor message too long");
    return k;
}

/* next space-separated decimal field in [lo, hi] */
static int next_u32(const char **p, const char *end, uint32_t lo, uint32_t hi, uint32_t *v, const char *what)
{
    const char *s = *p;
    if (s >= end || *s != ' ') return zp_err_set(ZP_EPROTO, "supervisor message: %s missing", what);
    s++;
    uint64_t x = 0;
    const char *d = s;
    while (s < end && *s >= '0' && *s <= '9' && s - d < 11) x = x * 10 + (uint64_t)(*s++ - '0');
    if (s == d || (s < end && *s != ' ') || x < lo || x > hi)
        return zp_err_set(ZP_EPROTO, "supervisor message: %s is not a number in [%u, %u]", what, lo, hi);
    *v = (uint32_t)x;
    *p = s;
    return 0;
}

int zp_sup_decode(zp_sup_msg_t *m, const char *buf, size_t len)
{
    memset(m, 0, sizeof *m);
    const char *p = buf, *end = buf + len;
    int rc;
    if (len >= ZP_SUP_MSG_MAX) return zp_err_set(ZP_EPROTO, "supervisor message: %zu bytes", len);
    if (len > 4 && !memcmp(buf, "REG ", 4)) { m->type = ZP_SUP_REG; p += 3; }
    else if (len > 5 && !memcmp(buf, "EXIT ", 5)) { m->type = ZP_SUP_EXIT; p += 4; }
    else if (len > 6 && !memcmp(buf, "FENCE ", 6)) { m->type = ZP_SUP_FENCE; p += 5; }
    else return zp_err_set(ZP_EPROTO, "supervisor message: unknown verb");
    if ((rc = next_u32(&p, end, 0, 1u << 20, &m->child, "child")) < 0) return rc;
    if (m->type == ZP_SUP_REG) {
        if ((rc = next_u32(&p, end, 0, ZP_NROLES - 1, &m->role, "role")) < 0 ||
            (rc = next_u32(&p, end, 0, 1u << 20, &m->instance, "instance")) < 0)
            return rc;
    }
    if ((rc = next_u32(&p, end, 2, UINT32_MAX, &m->pid, "pid")) < 0) return rc;
    if (m->type == ZP_SUP_REG) {
        if (p >= end || *p != ' ') return zp_err_set(ZP_EPROTO, "supervisor message: token missing");
        p++;
        if ((rc = zp_identity_parse(m->token, p, (size_t)(end - p))) < 0) return rc;
        return 0;
    }
    if (m->type == ZP_SUP_EXIT) return p == end ? 0 : zp_err_set(ZP_EPROTO, "supervisor message: trailing bytes");
    if (p >= end || *p != ' ' || p + 1 >= end) return zp_err_set(ZP_EPROTO, "supervisor message: reason missing");
    p++;
    size_t n = (size_t)(end - p);
    if (n >= sizeof m->reason) n = sizeof m->reason - 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] >= 0x7f) return zp_err_set(ZP_EPROTO, "supervisor message: control byte in reason");
        m->reason[i] = p[i];
    }
    return 0;
}
