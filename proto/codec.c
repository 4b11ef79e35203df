/* codec.c - zkpipe wire frames: a msgpack writer and a strict, bounded, allocation-free
 * msgpack reader (the subset we use: nil, bool, int, str, bin, array, map).
 *
 * Decoding: zp_frame_decode() validates the whole frame with one recursive walk (depth <=
 * ZP_FRAME_MAX_DEPTH) before anything is used. Every length and count is checked against the
 * bytes that remain (an element needs >= 1 byte, a map entry >= 2), so hostile headers cost
 * nothing. Getters re-read headers of already validated items, so they only check types and
 * bounds. Nothing is allocated; views point into the caller's buffer.
 * Encoding: containers reserve a 5-byte (map32/array32) header that zp_enc_end() shrinks to
 * the minimal form, moving the body back; output is canonical minimal msgpack.
 * Tests: tests/test_codec.c */
#include "proto/codec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"

/* ================================================================= encoder */

static int enc_fail(zp_enc_t *e, int err)
{
    if (!e->err)
        e->err = err;
    return e->err;
}

static int enc_reserve(zp_enc_t *e, size_t n)
{
    if (e->err)
        return e->err;
    /* open containers hold 5-byte headers that shrink at zp_enc_end: allow that slack here,
     * zp_enc_finish checks the final size against max */
    size_t lim = e->max + 4 * ZP_FRAME_MAX_DEPTH;
    if (n > lim || e->len > lim - n)
        return enc_fail(e, zp_err_set(ZP_ETOOBIG, "encoder: frame would exceed %zu bytes", e->max));
    if (e->len + n > e->cap) {
        size_t cap = e->cap ? e->cap : 256;
        while (cap < e->len + n)
            cap = cap > lim / 2 ? lim : cap * 2;
        uint8_t *p = realloc(e->buf, cap);
        if (!p)
            return enc_fail(e, zp_err_set(-ENOMEM, "encoder: out of memory (%zu bytes)", cap));
        e->buf = p;
        e->cap = cap;
    }
    return 0;
}

static void put8(zp_enc_t *e, uint8_t v) { e->buf[e->len++] = v; }
static void put_be(zp_enc_t *e, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        e->buf[e->len++] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* the key of the next value (maps) or just its count (arrays) */
static int enc_key(zp_enc_t *e, unsigned key)
{
    if (e->err)
        return e->err;
    if (e->depth == 0)
        return enc_fail(e, zp_err_set(ZP_ESTATE, "encoder: frame not started or already finished"));
    struct zp_enc_level *top = &e->stack[e->depth - 1];
    if (top->count == UINT32_MAX)
        return enc_fail(e, zp_err_set(ZP_ETOOBIG, "encoder: container too large"));
    if (top->is_map) {
        if (key > ZP_KEY_MAX)
            return enc_fail(e, zp_err_set(-EINVAL, "encoder: key %u > %d", key, ZP_KEY_MAX));
        if (top->keys >> key & 1)
            return enc_fail(e, zp_err_set(-EINVAL, "encoder: duplicate key %u", key));
        if (enc_reserve(e, 1) < 0)
            return e->err;
        top->keys |= UINT64_C(1) << key;
        put8(e, (uint8_t)key);
    }
    top->count++;
    return 0;
}

static int put_uint(zp_enc_t *e, uint64_t v)
{
    if (enc_reserve(e, 9) < 0)
        return e->err;
    if (v < 128) {
        put8(e, (uint8_t)v);
    } else if (v <= UINT8_MAX) {
        put8(e, 0xcc);
        put_be(e, v, 1);
    } else if (v <= UINT16_MAX) {
        put8(e, 0xcd);
        put_be(e, v, 2);
    } else if (v <= UINT32_MAX) {
        put8(e, 0xce);
        put_be(e, v, 4);
    } else {
        put8(e, 0xcf);
        put_be(e, v, 8);
    }
    return 0;
}

static int put_int(zp_enc_t *e, int64_t v)
{
    if (v >= 0)
        return put_uint(e, (uint64_t)v);
    if (enc_reserve(e, 9) < 0)
        return e->err;
    uint64_t u = (uint64_t)v;              /* two's complement bytes */
    if (v >= -32) {
        put8(e, (uint8_t)u);
    } else if (v >= INT8_MIN) {
        put8(e, 0xd0);
        put_be(e, u, 1);
    } else if (v >= INT16_MIN) {
        put8(e, 0xd1);
        put_be(e, u, 2);
    } else if (v >= INT32_MIN) {
        put8(e, 0xd2);
        put_be(e, u, 4);
    } else {
        put8(e, 0xd3);
        put_be(e, u, 8);
    }
    return 0;
}

static int put_raw(zp_enc_t *e, bool bin, const void *p, size_t n)
{
    if (n > UINT32_MAX)
        return enc_fail(e, zp_err_set(ZP_ETOOBIG, "encoder: %zu-byte string", n));
    if (enc_reserve(e, 5 + n) < 0)
        return e->err;
    if (!bin && n < 32) {
        put8(e, (uint8_t)(0xa0 | n));
    } else if (n <= UINT8_MAX) {
        put8(e, bin ? 0xc4 : 0xd9);
        put_be(e, n, 1);
    } else if (n <= UINT16_MAX) {
        put8(e, bin ? 0xc5 : 0xda);
        put_be(e, n, 2);
    } else {
        put8(e, bin ? 0xc6 : 0xdb);
        put_be(e, n, 4);
    }
    if (n)
        memcpy(e->buf + e->len, p, n);
    e->len += n;
    return 0;
}

static int begin(zp_enc_t *e, bool is_map)
{
    if (e->depth >= ZP_FRAME_MAX_DEPTH)
        return enc_fail(e, zp_err_set(-EINVAL, "encoder: nesting deeper than %d", ZP_FRAME_MAX_DEPTH));
    if (enc_reserve(e, 5) < 0)
        return e->err;
    struct zp_enc_level *s = &e->stack[e->depth++];
    s->hdr = e->len;
    s->count = 0;
    s->is_map = is_map;
    s->keys = 0;
    e->len += 5;                           /* patched by zp_enc_end */
    return 0;
}

int zp_enc_init(zp_enc_t *e, uint8_t cmd, unsigned msg_version, size_t max)
{
    memset(e, 0, sizeof *e);
    e->max = max == 0 ? ZP_FRAME_MAX_DEFAULT : max > ZP_FRAME_MAX_LIMIT ? ZP_FRAME_MAX_LIMIT : max;
    if (cmd < ZP_CMD_MIN || cmd > ZP_CMD_MAX)
        return enc_fail(e, zp_err_set(-EINVAL, "encoder: command %u out of range", cmd));
    if (msg_version < 1 || msg_version > 255)
        return enc_fail(e, zp_err_set(-EINVAL, "encoder: message version %u out of range", msg_version));
    if (enc_reserve(e, ZP_FRAME_HDR) < 0)
        return e->err;
    put8(e, ZP_FRAME_TAG0);
    put8(e, ZP_FRAME_TAG1);
    put8(e, ZP_FRAME_TAG2);
    put8(e, ZP_FRAME_VERSION);
    put8(e, cmd);
    if (begin(e, true) < 0)
        return e->err;
    return zp_enc_u64(e, 0, msg_version);
}

int zp_enc_u64(zp_enc_t *e, unsigned key, uint64_t v)
{
    return enc_key(e, key) < 0 ? e->err : put_uint(e, v);
}

int zp_enc_i64(zp_enc_t *e, unsigned key, int64_t v)
{
    return enc_key(e, key) < 0 ? e->err : put_int(e, v);
}

int zp_enc_bool(zp_enc_t *e, unsigned key, bool v)
{
    if (enc_key(e, key) < 0 || enc_reserve(e, 1) < 0)
        return e->err;
    put8(e, v ? 0xc3 : 0xc2);
    return 0;
}

int zp_enc_nil(zp_enc_t *e, unsigned key)
{
    if (enc_key(e, key) < 0 || enc_reserve(e, 1) < 0)
        return e->err;
    put8(e, 0xc0);
    return 0;
}

int zp_enc_str(zp_enc_t *e, unsigned key, const char *s)
{
    if (!s)
        return enc_fail(e, zp_err_set(-EINVAL, "encoder: NULL string for key %u", key));
    return zp_enc_strn(e, key, s, strlen(s));
}

int zp_enc_strn(zp_enc_t *e, unsigned key, const char *s, size_t n)
{
    return enc_key(e, key) < 0 ? e->err : put_raw(e, false, s, n);
}

int zp_enc_bin(zp_enc_t *e, unsigned key, const void *p, size_t n)
{
    return enc_key(e, key) < 0 ? e->err : put_raw(e, true, p, n);
}

int zp_enc_u64_array(zp_enc_t *e, unsigned key, const uint64_t *v, size_t n)
{
    zp_enc_array_begin(e, key);
    for (size_t i = 0; i < n && !e->err; i++)
        zp_enc_u64(e, 0, v[i]);
    return zp_enc_end(e);
}

int zp_enc_u32_array(zp_enc_t *e, unsigned key, const uint32_t *v, size_t n)
{
    zp_enc_array_begin(e, key);
    for (size_t i = 0; i < n && !e->err; i++)
        zp_enc_u64(e, 0, v[i]);
    return zp_enc_end(e);
}

int zp_enc_str_array(zp_enc_t *e, unsigned key, const char *const *s, size_t n)
{
    zp_enc_array_begin(e, key);
    for (size_t i = 0; i < n && !e->err; i++)
        zp_enc_str(e, 0, s[i]);
    return zp_enc_end(e);
}

int zp_enc_map_begin(zp_enc_t *e, unsigned key)
{
    return enc_key(e, key) < 0 ? e->err : begin(e, true);
}

int zp_enc_array_begin(zp_enc_t *e, unsigned key)
{
    return enc_key(e, key) < 0 ? e->err : begin(e, false);
}

int zp_enc_end(zp_enc_t *e)
{
    if (e->err)
        return e->err;
    if (e->depth <= 1)
        return enc_fail(e, zp_err_set(ZP_ESTATE, "encoder: zp_enc_end without an open container"));
    struct zp_enc_level *s = &e->stack[--e->depth];
    uint8_t *h = e->buf + s->hdr;
    size_t hl;
    if (s->count < 16) {
        h[0] = (uint8_t)((s->is_map ? 0x80 : 0x90) | s->count);
        hl = 1;
    } else if (s->count <= UINT16_MAX) {
        h[0] = s->is_map ? 0xde : 0xdc;
        h[1] = (uint8_t)(s->count >> 8);
        h[2] = (uint8_t)s->count;
        hl = 3;
    } else {
        h[0] = s->is_map ? 0xdf : 0xdd;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (uint8_t)(s->count >> (24 - 8 * i));
        hl = 5;
    }
    size_t body = s->hdr + 5;
    if (hl < 5) {
        memmove(h + hl, e->buf + body, e->len - body);
        e->len -= 5 - hl;
    }
    return 0;
}

int zp_enc_finish(zp_enc_t *e, const uint8_t **buf, size_t *len)
{
    if (e->err)
        return e->err;
    if (e->depth == 0 && e->buf) {         /* finished before: the same frame again */
        if (buf)
            *buf = e->buf;
        if (len)
            *len = e->len;
        return 0;
    }
    if (e->depth != 1)
        return enc_fail(e, zp_err_set(ZP_ESTATE, "encoder: %u containers still open", e->depth ? e->depth - 1 : 0));
    e->depth = 2;                          /* let zp_enc_end close the top-level map */
    e->stack[1] = e->stack[0];
    zp_enc_end(e);
    e->depth = 0;
    if (!e->err && e->len > e->max)
        enc_fail(e, zp_err_set(ZP_ETOOBIG, "encoder: frame of %zu bytes exceeds %zu", e->len, e->max));
    if (buf)
        *buf = e->buf;
    if (len)
        *len = e->len;
    return e->err;
}

uint8_t *zp_enc_take(zp_enc_t *e, size_t *len)
{
    if (e->err || e->depth != 0)
        return NULL;
    uint8_t *b = e->buf;
    if (len)
        *len = e->len;
    e->buf = NULL;
    e->len = e->cap = 0;
    return b;
}

void zp_enc_close(zp_enc_t *e)
{
    free(e->buf);
    e->buf = NULL;
    e->len = e->cap = 0;
}

/* ================================================================= reader */

/* key paths for messages, truncated at ZP_PATH_MAX - 1 characters */
static void mkpath(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mkpath(char *dst, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, ZP_PATH_MAX, fmt, ap);
    va_end(ap);
}

enum { T_NIL, T_BOOL, T_UINT, T_NEG, T_STR, T_BIN, T_ARR, T_MAP, T_BAD };
static const char *const type_names[] = { "nil", "bool", "uint", "negative int", "str", "bin", "array", "map", "?" };

typedef struct {
    int type;
    uint64_t u;            /* uint value, bool, or str/bin length / container count */
    int64_t i;             /* negative ints */
    size_t body;           /* offset after the header: data (str/bin), first element, or next item */
} item_t;

static uint64_t be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++)
        v = v << 8 | p[k];
    return v;
}

/* Read the header of the item at pos (pos < end). Checks the header fits, str/bin data fits,
 * and container counts are possible in the remaining bytes. Returns NULL or why it is bad. */
static const char *head(const uint8_t *b, size_t end, size_t pos, item_t *it)
{
    it->type = T_BAD;
    it->body = end;
    it->u = 0;
    it->i = 0;
    if (pos >= end)
        return "truncated (item expected)";
    it->type = T_BAD;
    uint8_t c = b[pos];
    size_t rem = end - pos - 1;          /* bytes after the type byte */
    unsigned ext = 0;                    /* length of the size/value field */
    it->u = 0;
    it->i = 0;
    if (c <= 0x7f) {
        it->type = T_UINT;
        it->u = c;
    } else if (c <= 0x8f) {
        it->type = T_MAP;
        it->u = c & 0x0f;
    } else if (c <= 0x9f) {
        it->type = T_ARR;
        it->u = c & 0x0f;
    } else if (c <= 0xbf) {
        it->type = T_STR;
        it->u = c & 0x1f;
    } else if (c >= 0xe0) {
        it->type = T_NEG;
        it->i = (int64_t)c - 256;
    } else {
        switch (c) {
        case 0xc0: it->type = T_NIL; break;
        case 0xc2: case 0xc3: it->type = T_BOOL; it->u = c & 1; break;
        case 0xc4: it->type = T_BIN; ext = 1; break;
        case 0xc5: it->type = T_BIN; ext = 2; break;
        case 0xc6: it->type = T_BIN; ext = 4; break;
        case 0xcc: it->type = T_UINT; ext = 1; break;
        case 0xcd: it->type = T_UINT; ext = 2; break;
        case 0xce: it->type = T_UINT; ext = 4; break;
        case 0xcf: it->type = T_UINT; ext = 8; break;
        case 0xd0: it->type = T_NEG; ext = 1; break;
        case 0xd1: it->type = T_NEG; ext = 2; break;
        case 0xd2: it->type = T_NEG; ext = 4; break;
        case 0xd3: it->type = T_NEG; ext = 8; break;
        case 0xd9: it->type = T_STR; ext = 1; break;
        case 0xda: it->type = T_STR; ext = 2; break;
        case 0xdb: it->type = T_STR; ext = 4; break;
        case 0xdc: it->type = T_ARR; ext = 2; break;
        case 0xdd: it->type = T_ARR; ext = 4; break;
        case 0xde: it->type = T_MAP; ext = 2; break;
        case 0xdf: it->type = T_MAP; ext = 4; break;
        case 0xca: case 0xcb: return "float values are not allowed";
        case 0xc1: return "reserved byte 0xc1";
        default: return "ext values are not allowed";
        }
    }
    if (ext > rem)
        return "truncated (item header)";
    if (ext) {
        uint64_t v = be(b + pos + 1, ext);
        if (it->type == T_NEG) {
            /* sign-extend; int8..int64 may also hold non-negative values */
            int64_t s = ext == 8 ? (int64_t)v : (int64_t)(v ^ (UINT64_C(1) << (8 * ext - 1))) - (INT64_C(1) << (8 * ext - 1));
            if (s >= 0) {
                it->type = T_UINT;
                it->u = (uint64_t)s;
            } else {
                it->i = s;
            }
        } else {
            it->u = v;
        }
    }
    it->body = pos + 1 + ext;
    rem -= ext;
    switch (it->type) {
    case T_STR: case T_BIN:
        if (it->u > rem)
            return it->type == T_STR ? "str longer than the rest of the frame" : "bin longer than the rest of the frame";
        break;
    case T_ARR:
        if (it->u > rem)
            return "array count larger than the rest of the frame";
        break;
    case T_MAP:
        if (it->u > rem / 2)
            return "map count larger than the rest of the frame";
        break;
    default:
        break;
    }
    return NULL;
}

/* offset just after a validated scalar/str/bin (containers: use walk) */
static size_t scalar_end(const item_t *it)
{
    return it->type == T_STR || it->type == T_BIN ? it->body + (size_t)it->u : it->body;
}

typedef struct {
    const uint8_t *b;
    size_t end;
    unsigned sp;                                 /* the key path, formatted only on error */
    struct { bool arr; uint64_t k; } stk[ZP_FRAME_MAX_DEPTH + 2];
} walk_t;

static int werr(const walk_t *w, size_t pos, const char *why)
{
    char path[ZP_PATH_MAX] = "";
    size_t l = 0;
    for (unsigned i = 0; i < w->sp && l < sizeof path - 1; i++) {
        int n = w->stk[i].arr ? snprintf(path + l, sizeof path - l, "[%" PRIu64 "]", w->stk[i].k)
                              : snprintf(path + l, sizeof path - l, "%s%" PRIu64, l ? "." : "", w->stk[i].k);
        if (n < 0)
            break;
        l += (size_t)n;
        if (l >= sizeof path)
            l = sizeof path - 1;
    }
    return zp_err_set(ZP_EPROTO, "frame byte %zu%s%s: %s", pos, path[0] ? ", key " : "", path, why);
}

/* Validate the item at *pos (depth: of this item if it is a container) and advance *pos. */
static int walk(walk_t *w, size_t *pos, unsigned depth)
{
    item_t it;
    const char *why = head(w->b, w->end, *pos, &it);
    if (why)
        return werr(w, *pos, why);
    if (it.type != T_ARR && it.type != T_MAP) {
        *pos = scalar_end(&it);
        return 0;
    }
    if (depth > ZP_FRAME_MAX_DEPTH)
        return werr(w, *pos, "nesting too deep");
    size_t p = it.body;
    unsigned sp = w->sp++;
    int r = 0;
    w->stk[sp].arr = it.type == T_ARR;
    if (it.type == T_ARR) {
        for (uint64_t i = 0; i < it.u && r == 0; i++) {
            w->stk[sp].k = i;
            r = walk(w, &p, depth + 1);
        }
    } else {
        uint64_t seen = 0;
        for (uint64_t i = 0; i < it.u && r == 0; i++) {
            item_t k;
            w->sp = sp;                          /* a key's problem is reported at the map's path */
            if ((why = head(w->b, w->end, p, &k)))
                return werr(w, p, why);
            if (k.type != T_UINT)
                return werr(w, p, k.type == T_NEG ? "negative map key" : "map key is not an unsigned integer");
            if (k.u > ZP_KEY_MAX)
                return werr(w, p, "map key larger than 63");
            if (seen >> k.u & 1) {
                char m[48];
                snprintf(m, sizeof m, "duplicate map key %" PRIu64, k.u);
                return werr(w, p, m);
            }
            seen |= UINT64_C(1) << k.u;
            p = k.body;
            w->sp = sp + 1;
            w->stk[sp].k = k.u;
            r = walk(w, &p, depth + 1);
        }
    }
    if (r < 0)
        return r;
    w->sp = sp;
    *pos = p;
    return 0;
}

/* skip a validated item */
static size_t skip(const uint8_t *b, size_t end, size_t pos)
{
    walk_t w = { .b = b, .end = end };
    size_t p = pos;
    if (walk(&w, &p, 1) < 0)               /* cannot happen on validated input */
        return end;
    return p;
}

/* index a validated map at pos */
static void index_map(zp_map_t *m, const uint8_t *b, size_t len, size_t pos, const char *path)
{
    item_t it;
    memset(m->off, 0, sizeof m->off);
    m->buf = b;
    m->len = len;
    mkpath(m->path, "%s", path);
    head(b, len, pos, &it);
    size_t p = it.body;
    for (uint64_t i = 0; i < it.u; i++) {
        item_t k;
        head(b, len, p, &k);
        m->off[k.u] = (uint32_t)k.body;
        p = skip(b, len, k.body);
    }
}

int zp_frame_peek_cmd(const void *buf, size_t len)
{
    const uint8_t *b = buf;
    if (!b || len < ZP_FRAME_HDR || b[0] != ZP_FRAME_TAG0 || b[1] != ZP_FRAME_TAG1 || b[2] != ZP_FRAME_TAG2 ||
        b[3] != ZP_FRAME_VERSION)
        return -1;
    return b[4];
}

int zp_frame_decode_cmds(zp_frame_t *f, const void *buf, size_t len, size_t max, uint64_t cmd_mask)
{
    const uint8_t *b = buf;
    memset(f, 0, sizeof *f);
    max = max == 0 ? ZP_FRAME_MAX_DEFAULT : max > ZP_FRAME_MAX_LIMIT ? ZP_FRAME_MAX_LIMIT : max;
    if (len > max)
        return zp_err_set(ZP_ETOOBIG, "frame of %zu bytes exceeds the limit of %zu", len, max);
    if (!b || len < ZP_FRAME_HDR + 1)
        return zp_err_set(ZP_EPROTO, "frame of %zu bytes is too short", len);
    if (b[0] != ZP_FRAME_TAG0 || b[1] != ZP_FRAME_TAG1 || b[2] != ZP_FRAME_TAG2)
        return zp_err_set(ZP_EPROTO, "bad protocol tag %02x %02x %02x", b[0], b[1], b[2]);
    if (b[3] != ZP_FRAME_VERSION)
        return zp_err_set(ZP_EVERSION, "frame version %u, this build speaks %u", b[3], ZP_FRAME_VERSION);
    uint8_t cmd = b[4];
    if (cmd < ZP_CMD_MIN || cmd > ZP_CMD_MAX || (cmd_mask && (cmd >= 64 || !(cmd_mask >> cmd & 1))))
        return zp_err_set(ZP_EPROTO, "unknown command %u", cmd);
    if (b[5] < 0x80 || (b[5] > 0x8f && b[5] != 0xde && b[5] != 0xdf))
        return zp_err_set(ZP_EPROTO, "frame body is not a map (type byte %#04x)", b[5]);
    walk_t w = { .b = b, .end = len };
    size_t pos = ZP_FRAME_HDR;
    int r = walk(&w, &pos, 1);
    if (r < 0)
        return r;
    if (pos != len)
        return zp_err_set(ZP_EPROTO, "%zu trailing bytes after the body map", len - pos);
    index_map(&f->m, b, len, ZP_FRAME_HDR, "");
    f->cmd = cmd;
    f->len = len;
    uint64_t v;
    if ((r = zp_map_get_u64(&f->m, 0, 1, 255, &v)) < 0)
        return zp_err_set(ZP_EPROTO, "command %u: key 0 (message version) missing or not a uint in [1, 255]", cmd);
    f->msg_version = (unsigned)v;
    return 0;
}

int zp_frame_decode(zp_frame_t *f, const void *buf, size_t len, size_t max)
{
    return zp_frame_decode_cmds(f, buf, len, max, 0);
}

/* ================================================================= getters */

/* 0 found (it filled), 1 absent and optional, <0 error */
static int lookup(const zp_map_t *m, unsigned key, item_t *it, char *kp, size_t kpsz)
{
    unsigned k = key & 0xffu;
    bool opt = key & 0x100u;
    memset(it, 0, sizeof *it);
    if (k > ZP_KEY_MAX || (key & ~0x1ffu))
        return zp_err_set(-EINVAL, "getter: bad key %#x", key);
    (void)kpsz;
    mkpath(kp, "%s%s%u", m->path, m->path[0] ? "." : "", k);
    uint32_t off = m->off[k];
    if (off == 0)
        return opt ? 1 : zp_err_set(ZP_EPROTO, "key %s: missing", kp);
    head(m->buf, m->len, off, it);
    if (it->type == T_NIL)
        return opt ? 1 : zp_err_set(ZP_EPROTO, "key %s: nil, a value is required", kp);
    return 0;
}

static int type_err(const char *kp, const char *want, const item_t *it)
{
    return zp_err_set(ZP_EPROTO, "key %s: expected %s, got %s", kp, want, type_names[it->type]);
}

static int check_u64(const char *kp, const item_t *it, uint64_t lo, uint64_t hi, uint64_t *v)
{
    if (it->type != T_UINT && it->type != T_NEG)
        return type_err(kp, "uint", it);
    if (it->type == T_NEG || it->u < lo || it->u > hi) {
        if (it->type == T_NEG)
            return zp_err_set(ZP_EPROTO, "key %s: %" PRId64 " not in [%" PRIu64 ", %" PRIu64 "]", kp, it->i, lo, hi);
        return zp_err_set(ZP_EPROTO, "key %s: %" PRIu64 " not in [%" PRIu64 ", %" PRIu64 "]", kp, it->u, lo, hi);
    }
    *v = it->u;
    return 0;
}

static int check_i64(const char *kp, const item_t *it, int64_t lo, int64_t hi, int64_t *v)
{
    int64_t x;
    if (it->type == T_NEG)
        x = it->i;
    else if (it->type == T_UINT && it->u <= INT64_MAX)
        x = (int64_t)it->u;
    else if (it->type == T_UINT)
        return zp_err_set(ZP_EPROTO, "key %s: %" PRIu64 " not in [%" PRId64 ", %" PRId64 "]", kp, it->u, lo, hi);
    else
        return type_err(kp, "int", it);
    if (x < lo || x > hi)
        return zp_err_set(ZP_EPROTO, "key %s: %" PRId64 " not in [%" PRId64 ", %" PRId64 "]", kp, x, lo, hi);
    *v = x;
    return 0;
}

static int check_raw(const char *kp, const item_t *it, bool bin, size_t maxlen, const uint8_t *b,
                     const uint8_t **p, size_t *len)
{
    if (it->type != (bin ? T_BIN : T_STR))
        return type_err(kp, bin ? "bin" : "str", it);
    if (it->u > maxlen)
        return zp_err_set(ZP_EPROTO, "key %s: %s of %" PRIu64 " bytes, at most %zu allowed", kp, bin ? "bin" : "str",
                          it->u, maxlen);
    *p = b + it->body;
    *len = (size_t)it->u;
    return 0;
}

bool zp_map_has(const zp_map_t *m, unsigned key)
{
    item_t it;
    unsigned k = key & 0xffu;
    if (k > ZP_KEY_MAX || m->off[k] == 0)
        return false;
    head(m->buf, m->len, m->off[k], &it);
    return it.type != T_NIL;
}

int zp_map_get_u64(const zp_map_t *m, unsigned key, uint64_t lo, uint64_t hi, uint64_t *v)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = lookup(m, key, &it, kp, sizeof kp);
    return r ? (r > 0 ? 0 : r) : check_u64(kp, &it, lo, hi, v);
}

int zp_map_get_u32(const zp_map_t *m, unsigned key, uint32_t lo, uint32_t hi, uint32_t *v)
{
    uint64_t x = 0;
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = lookup(m, key, &it, kp, sizeof kp);
    if (r)
        return r > 0 ? 0 : r;
    if ((r = check_u64(kp, &it, lo, hi, &x)) < 0)
        return r;
    *v = (uint32_t)x;
    return 0;
}

int zp_map_get_i64(const zp_map_t *m, unsigned key, int64_t lo, int64_t hi, int64_t *v)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = lookup(m, key, &it, kp, sizeof kp);
    return r ? (r > 0 ? 0 : r) : check_i64(kp, &it, lo, hi, v);
}

int zp_map_get_bool(const zp_map_t *m, unsigned key, bool *v)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = lookup(m, key, &it, kp, sizeof kp);
    if (r)
        return r > 0 ? 0 : r;
    if (it.type != T_BOOL)
        return type_err(kp, "bool", &it);
    *v = it.u != 0;
    return 0;
}

int zp_map_get_str(const zp_map_t *m, unsigned key, size_t maxlen, const char **p, size_t *len)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = lookup(m, key, &it, kp, sizeof kp);
    return r ? (r > 0 ? 0 : r) : check_raw(kp, &it, false, maxlen, m->buf, (const uint8_t **)p, len);
}

int zp_map_get_strz(const zp_map_t *m, unsigned key, char *buf, size_t bufsize)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    const uint8_t *p = NULL;
    size_t n = 0;
    if (bufsize == 0)
        return zp_err_set(-EINVAL, "getter: zero-sized buffer");
    int r = lookup(m, key, &it, kp, sizeof kp);
    if (r)
        return r > 0 ? 0 : r;
    if ((r = check_raw(kp, &it, false, bufsize - 1, m->buf, &p, &n)) < 0)
        return r;
    if (memchr(p, 0, n))
        return zp_err_set(ZP_EPROTO, "key %s: string contains a NUL byte", kp);
    memcpy(buf, p, n);
    buf[n] = 0;
    return 0;
}

int zp_map_get_bin(const zp_map_t *m, unsigned key, size_t maxlen, const uint8_t **p, size_t *len)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = lookup(m, key, &it, kp, sizeof kp);
    return r ? (r > 0 ? 0 : r) : check_raw(kp, &it, true, maxlen, m->buf, p, len);
}

int zp_map_get_bin_exact(const zp_map_t *m, unsigned key, void *out, size_t len)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    const uint8_t *p = NULL;
    size_t n = 0;
    int r = lookup(m, key, &it, kp, sizeof kp);
    if (r)
        return r > 0 ? 0 : r;
    if ((r = check_raw(kp, &it, true, len, m->buf, &p, &n)) < 0)
        return r;
    if (n != len)
        return zp_err_set(ZP_EPROTO, "key %s: bin of %zu bytes, expected %zu", kp, n, len);
    memcpy(out, p, n);
    return 0;
}

static void arr_init(zp_arr_t *a, const uint8_t *b, size_t len, const item_t *it, const char *path)
{
    a->buf = b;
    a->len = len;
    a->pos = it->body;
    a->n = (uint32_t)it->u;
    a->i = 0;
    mkpath(a->path, "%s", path);
}

int zp_map_get_array(const zp_map_t *m, unsigned key, size_t maxn, zp_arr_t *a)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    memset(a, 0, sizeof *a);
    int r = lookup(m, key, &it, kp, sizeof kp);
    if (r)
        return r > 0 ? 0 : r;
    if (it.type != T_ARR)
        return type_err(kp, "array", &it);
    if (it.u > maxn)
        return zp_err_set(ZP_EPROTO, "key %s: array of %" PRIu64 " elements, at most %zu allowed", kp, it.u, maxn);
    arr_init(a, m->buf, m->len, &it, kp);
    return 0;
}

int zp_map_get_map(const zp_map_t *m, unsigned key, zp_map_t *sub)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    memset(sub, 0, sizeof *sub);
    sub->buf = m->buf;
    sub->len = m->len;
    int r = lookup(m, key, &it, kp, sizeof kp);
    if (r)
        return r > 0 ? 0 : r;
    if (it.type != T_MAP)
        return type_err(kp, "map", &it);
    index_map(sub, m->buf, m->len, m->off[key & 0xffu], kp);
    return 0;
}

int zp_map_get_u64_array(const zp_map_t *m, unsigned key, size_t maxn, uint64_t lo, uint64_t hi, uint64_t *out,
                         size_t *n)
{
    zp_arr_t a;
    int r = zp_map_get_array(m, key, maxn, &a);
    *n = 0;
    if (r < 0)
        return r;
    for (uint32_t i = 0; i < a.n; i++)
        if ((r = zp_arr_next_u64(&a, lo, hi, &out[i])) < 0)
            return r;
    *n = a.n;
    return 0;
}

int zp_map_get_str_array(const zp_map_t *m, unsigned key, size_t maxn, size_t maxlen, zp_strref_t *out, size_t *n)
{
    zp_arr_t a;
    int r = zp_map_get_array(m, key, maxn, &a);
    *n = 0;
    if (r < 0)
        return r;
    for (uint32_t i = 0; i < a.n; i++)
        if ((r = zp_arr_next_str(&a, maxlen, &out[i].p, &out[i].len)) < 0)
            return r;
    *n = a.n;
    return 0;
}

/* ---- array iteration ---- */

static int arr_next(zp_arr_t *a, item_t *it, char *kp, size_t kpsz)
{
    memset(it, 0, sizeof *it);
    if (!a->buf || a->i >= a->n)
        return zp_err_set(ZP_EPROTO, "key %s: array has only %u elements", a->path, a->n);
    (void)kpsz;
    mkpath(kp, "%s[%u]", a->path, a->i);
    head(a->buf, a->len, a->pos, it);
    return 0;
}

static void arr_advance(zp_arr_t *a)
{
    a->pos = skip(a->buf, a->len, a->pos);
    a->i++;
}

int zp_arr_next_u64(zp_arr_t *a, uint64_t lo, uint64_t hi, uint64_t *v)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0 || (r = check_u64(kp, &it, lo, hi, v)) < 0)
        return r;
    arr_advance(a);
    return 0;
}

int zp_arr_next_i64(zp_arr_t *a, int64_t lo, int64_t hi, int64_t *v)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0 || (r = check_i64(kp, &it, lo, hi, v)) < 0)
        return r;
    arr_advance(a);
    return 0;
}

int zp_arr_next_bool(zp_arr_t *a, bool *v)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0)
        return r;
    if (it.type != T_BOOL)
        return type_err(kp, "bool", &it);
    *v = it.u != 0;
    arr_advance(a);
    return 0;
}

int zp_arr_next_str(zp_arr_t *a, size_t maxlen, const char **p, size_t *len)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0 || (r = check_raw(kp, &it, false, maxlen, a->buf, (const uint8_t **)p, len)) < 0)
        return r;
    arr_advance(a);
    return 0;
}

int zp_arr_next_bin(zp_arr_t *a, size_t maxlen, const uint8_t **p, size_t *len)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0 || (r = check_raw(kp, &it, true, maxlen, a->buf, p, len)) < 0)
        return r;
    arr_advance(a);
    return 0;
}

int zp_arr_next_map(zp_arr_t *a, zp_map_t *sub)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0)
        return r;
    if (it.type != T_MAP)
        return type_err(kp, "map", &it);
    index_map(sub, a->buf, a->len, a->pos, kp);
    arr_advance(a);
    return 0;
}

int zp_arr_next_array(zp_arr_t *a, size_t maxn, zp_arr_t *sub)
{
    item_t it;
    char kp[ZP_PATH_MAX];
    int r = arr_next(a, &it, kp, sizeof kp);
    if (r < 0)
        return r;
    if (it.type != T_ARR)
        return type_err(kp, "array", &it);
    if (it.u > maxn)
        return zp_err_set(ZP_EPROTO, "key %s: array of %" PRIu64 " elements, at most %zu allowed", kp, it.u, maxn);
    arr_init(sub, a->buf, a->len, &it, kp);
    arr_advance(a);
    return 0;
}
