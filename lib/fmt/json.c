/* json.c - proof.json / public.json / verification_key.json: a small strict reader
 * (writers: json_write.c).
 * Reader: RFC 8259 JSON into a node array (strings decoded in place in our own copy of the
 * file), nesting <= JSON_MAX_DEPTH, objects <= JSON_MAX_MEMBERS members without duplicate
 * keys, file size bounded; then the documents are walked with a path for messages
 * ("vk.json: IC[3][1]: not a decimal or 0x-hex string"). Numbers are strings holding a
 * decimal or 0x-hex unsigned integer, reduced form required (< q for coordinates), stored as
 * canonical decimal. Tests: tests/test_fmt.c */
#include "lib/fmt/fmt_int.h"
#include "lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JSON_MAX_DEPTH 32
#define JSON_MAX_MEMBERS 1024
#define JSON_MAX_PROOF (1u << 20)          /* proof.json */
#define JSON_MAX_FILE (512u << 20)         /* public.json, verification_key.json */

/* ================================================================ parser */

enum { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };
static const char *const jtype_name[] = {"null", "false", "true", "a number", "a string", "an array", "an object"};

typedef struct {
    uint8_t type;
    uint32_t n;            /* children (array elements / object members) */
    uint32_t first, next;  /* first child, next sibling; 0 = none (node 0 is the root) */
    const char *s;         /* string / number text, or member key */
    size_t len;
    const char *key;       /* key if this node is an object member */
    size_t klen;
} jnode_t;

typedef struct {
    const char *name;
    char *buf;
    size_t len, pos;
    jnode_t *nodes;
    size_t nn, cap;
} jdoc_t;

static int jerr(const jdoc_t *d, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < d->pos && i < d->len; i++) {
        if (d->buf[i] == '\n') { line++; col = 1; }
        else col++;
    }
    return zp_err_set(ZP_EFORMAT, "%s: line %zu column %zu: %s", d->name, line, col, what);
}

static void skip_ws(jdoc_t *d)
{
    while (d->pos < d->len) {
        char c = d->buf[d->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        d->pos++;
    }
}

static int new_node(jdoc_t *d, uint32_t *idx, uint8_t type)
{
    if (d->nn == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 64;
        jnode_t *nn = realloc(d->nodes, nc * sizeof *nn);
        if (!nn) return zp_err_set(-ENOMEM, "%s: out of memory", d->name);
        d->nodes = nn;
        d->cap = nc;
    }
    if (d->nn >= UINT32_MAX) return jerr(d, "too many values");
    memset(&d->nodes[d->nn], 0, sizeof d->nodes[0]);
    d->nodes[d->nn].type = type;
    *idx = (uint32_t)d->nn++;
    return 0;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        unsigned dgt;
        if (c >= '0' && c <= '9') dgt = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') dgt = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') dgt = (unsigned)(c - 'A' + 10);
        else return -1;
        *v = *v << 4 | dgt;
    }
    return 0;
}

/* string at d->pos (opening quote); decoded in place; *s, *len get the decoded bytes */
static int parse_string(jdoc_t *d, const char **s, size_t *len)
{
    char *out = d->buf + d->pos + 1, *o = out;
    d->pos++;
    for (;;) {
        if (d->pos >= d->len) return jerr(d, "unterminated string");
        unsigned char c = (unsigned char)d->buf[d->pos];
        if (c == '"') { d->pos++; break; }
        if (c < 0x20) return jerr(d, "control character in string");
        if (c == '\\') {
            if (d->len - d->pos < 2) return jerr(d, "unterminated escape");
            char e = d->buf[d->pos + 1];
            const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
            const char *m = NULL;
            for (const char *q = map; *q; q += 2)
                if (*q == e) { m = q; break; }
            if (m) { *o++ = m[1]; d->pos += 2; continue; }
            if (e != 'u') return jerr(d, "invalid escape");
            unsigned u, u2;
            if (d->len - d->pos < 6 || hex4(d->buf + d->pos + 2, &u)) return jerr(d, "invalid \\u escape");
            d->pos += 6;
            if (u >= 0xdc00 && u < 0xe000) return jerr(d, "lone low surrogate");
            if (u >= 0xd800 && u < 0xdc00) {
                if (d->len - d->pos < 6 || d->buf[d->pos] != '\\' || d->buf[d->pos + 1] != 'u' ||
                    hex4(d->buf + d->pos + 2, &u2) || u2 < 0xdc00 || u2 >= 0xe000)
                    return jerr(d, "lone high surrogate");
                d->pos += 6;
                u = 0x10000 + ((u - 0xd800) << 10) + (u2 - 0xdc00);
            }
            /* UTF-8 of u is never longer than its escape (6 or 12 bytes) */
            if (u < 0x80) *o++ = (char)u;
            else if (u < 0x800) { *o++ = (char)(0xc0 | u >> 6); *o++ = (char)(0x80 | (u & 0x3f)); }
            else if (u < 0x10000) {
                *o++ = (char)(0xe0 | u >> 12); *o++ = (char)(0x80 | ((u >> 6) & 0x3f)); *o++ = (char)(0x80 | (u & 0x3f));
            } else {
                *o++ = (char)(0xf0 | u >> 18); *o++ = (char)(0x80 | ((u >> 12) & 0x3f));
                *o++ = (char)(0x80 | ((u >> 6) & 0x3f)); *o++ = (char)(0x80 | (u & 0x3f));
            }
            continue;
        }
        if (c >= 0x80) {   /* UTF-8 sequence: structure check */
            int k = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : -1;
            if (c >= 0xf5 || k < 0 || d->len - d->pos <= (size_t)k) return jerr(d, "invalid UTF-8 in string");
            for (int i = 1; i <= k; i++)
                if (((unsigned char)d->buf[d->pos + (size_t)i] & 0xc0) != 0x80) return jerr(d, "invalid UTF-8 in string");
            for (int i = 0; i <= k; i++) *o++ = d->buf[d->pos++];
            continue;
        }
        *o++ = (char)c;
        d->pos++;
    }
    *s = out;
    *len = (size_t)(o - out);
    return 0;
}

static int parse_number(jdoc_t *d)
{
    size_t p = d->pos;
    const char *b = d->buf;
#define DIG(i) ((i) < d->len && b[i] >= '0' && b[i] <= '9')
    if (p < d->len && b[p] == '-') p++;
    if (!DIG(p)) return jerr(d, "invalid number");
    if (b[p] == '0') p++;
    else while (DIG(p)) p++;
    if (p < d->len && b[p] == '.') {
        p++;
        if (!DIG(p)) return jerr(d, "invalid number");
        while (DIG(p)) p++;
    }
    if (p < d->len && (b[p] == 'e' || b[p] == 'E')) {
        p++;
        if (p < d->len && (b[p] == '+' || b[p] == '-')) p++;
        if (!DIG(p)) return jerr(d, "invalid number");
        while (DIG(p)) p++;
    }
#undef DIG
    d->pos = p;
    return 0;
}

static int parse_value(jdoc_t *d, uint32_t *out, int depth)
{
    skip_ws(d);
    if (d->pos >= d->len) return jerr(d, "unexpected end of input");
    char c = d->buf[d->pos];
    uint32_t idx;
    int rc;
    if (c == '"') {
        const char *s;
        size_t len;
        if ((rc = parse_string(d, &s, &len))) return rc;
        if ((rc = new_node(d, &idx, J_STR))) return rc;
        d->nodes[idx].s = s;
        d->nodes[idx].len = len;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        size_t start = d->pos;
        if ((rc = parse_number(d))) return rc;
        if ((rc = new_node(d, &idx, J_NUM))) return rc;
        d->nodes[idx].s = d->buf + start;
        d->nodes[idx].len = d->pos - start;
    } else if (c == '[' || c == '{') {
        bool obj = c == '{';
        if (depth >= JSON_MAX_DEPTH) return jerr(d, "nesting deeper than 32 levels");
        if ((rc = new_node(d, &idx, obj ? J_OBJ : J_ARR))) return rc;
        d->pos++;
        skip_ws(d);
        uint32_t last = 0;
        if (d->pos < d->len && d->buf[d->pos] == (obj ? '}' : ']')) {
            d->pos++;
        } else {
            for (;;) {
                const char *key = NULL;
                size_t klen = 0;
                if (obj) {
                    skip_ws(d);
                    if (d->pos >= d->len || d->buf[d->pos] != '"') return jerr(d, "expected a string key");
                    if ((rc = parse_string(d, &key, &klen))) return rc;
                    for (uint32_t k = d->nodes[idx].first; k; k = d->nodes[k].next)
                        if (d->nodes[k].klen == klen && !memcmp(d->nodes[k].key, key, klen))
                            return jerr(d, "duplicate key in object");
                    if (d->nodes[idx].n >= JSON_MAX_MEMBERS) return jerr(d, "object with more than 1024 members");
                    skip_ws(d);
                    if (d->pos >= d->len || d->buf[d->pos] != ':') return jerr(d, "expected ':'");
                    d->pos++;
                }
                uint32_t child;
                if ((rc = parse_value(d, &child, depth + 1))) return rc;
                d->nodes[child].key = key;
                d->nodes[child].klen = klen;
                if (last) d->nodes[last].next = child;
                else d->nodes[idx].first = child;
                last = child;
                d->nodes[idx].n++;
                skip_ws(d);
                if (d->pos >= d->len) return jerr(d, "unexpected end of input");
                if (d->buf[d->pos] == ',') { d->pos++; continue; }
                if (d->buf[d->pos] == (obj ? '}' : ']')) { d->pos++; break; }
                return jerr(d, obj ? "expected ',' or '}'" : "expected ',' or ']'");
            }
        }
    } else {
        static const struct { const char *w; uint8_t t; } lit[] = {{"true", J_TRUE}, {"false", J_FALSE}, {"null", J_NULL}};
        size_t i;
        for (i = 0; i < 3; i++) {
            size_t l = strlen(lit[i].w);
            if (d->len - d->pos >= l && !memcmp(d->buf + d->pos, lit[i].w, l)) break;
        }
        if (i == 3) return jerr(d, "unexpected character");
        d->pos += strlen(lit[i].w);
        if ((rc = new_node(d, &idx, lit[i].t))) return rc;
    }
    *out = idx;
    return 0;
}

static void jdoc_free(jdoc_t *d)
{
    free(d->buf);
    free(d->nodes);
    memset(d, 0, sizeof *d);
}

/* parse len bytes (copied) as one JSON document */
static int jdoc_parse(jdoc_t *d, const char *name, const char *text, size_t len)
{
    memset(d, 0, sizeof *d);
    d->name = name;
    d->buf = malloc(len + 1);
    if (!d->buf) return zp_err_set(-ENOMEM, "%s: out of memory", name);
    memcpy(d->buf, text, len);
    d->buf[len] = 0;
    d->len = len;
    uint32_t root;
    int rc = parse_value(d, &root, 0);
    if (!rc) {
        skip_ws(d);
        if (d->pos != d->len) rc = jerr(d, "unexpected data after the JSON value");
    }
    if (rc) jdoc_free(d);
    return rc;
}

static int jdoc_load(jdoc_t *d, const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return zp_err_set(-errno, "%s: open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    char *text = NULL;
    if (fstat(fd, &st) < 0) {
        rc = zp_err_set(-errno, "%s: fstat: %s", path, strerror(errno));
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = zp_err_set(ZP_EFORMAT, "%s: not a regular file", path);
        goto out_close;
    }
    if ((uint64_t)st.st_size > max) {
        rc = zp_err_set(ZP_ETOOBIG, "%s: %lld bytes, more than the %zu allowed", path, (long long)st.st_size, max);
        goto out_close;
    }
    size_t len = (size_t)st.st_size, got = 0;
    text = malloc(len + 1);
    if (!text) {
        rc = zp_err_set(-ENOMEM, "%s: out of memory", path);
        goto out_close;
    }
    while (got < len) {
        ssize_t k = read(fd, text + got, len - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rc = zp_err_set(-errno, "%s: read: %s", path, strerror(errno));
            goto out_free;
        }
        if (k == 0) break;   /* shrank meanwhile */
        got += (size_t)k;
    }
    rc = jdoc_parse(d, path, text, got);
out_free:
    free(text);
out_close:
    close(fd);
    return rc;
}

/* ---- walking with a path ---- */

typedef struct {
    const jdoc_t *d;
    char path[160];
} jctx_t;

static int perr(const jctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(const jctx_t *c, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return zp_err_set(ZP_EFORMAT, "%s: %s: %s", c->d->name, c->path[0] ? c->path : "(top level)", what);
}

/* path helpers: push "[i]" or ".key"/"key" and restore with the returned length */
static size_t push_idx(jctx_t *c, size_t i)
{
    size_t l = strlen(c->path);
    snprintf(c->path + l, sizeof c->path - l, "[%zu]", i);
    return l;
}
static size_t push_key(jctx_t *c, const char *k)
{
    size_t l = strlen(c->path);
    snprintf(c->path + l, sizeof c->path - l, "%s%s", l ? "." : "", k);
    return l;
}
static void pop(jctx_t *c, size_t l) { c->path[l] = 0; }

static const jnode_t *jnode(const jctx_t *c, uint32_t i) { return &c->d->nodes[i]; }

static int expect_type(const jctx_t *c, uint32_t i, uint8_t t)
{
    if (jnode(c, i)->type != t) return perr(c, "expected %s, got %s", jtype_name[t], jtype_name[jnode(c, i)->type]);
    return 0;
}

/* member of object i named key; *out = 0 if absent */
static uint32_t jget(const jctx_t *c, uint32_t i, const char *key)
{
    size_t kl = strlen(key);
    for (uint32_t k = jnode(c, i)->first; k; k = jnode(c, k)->next)
        if (jnode(c, k)->klen == kl && !memcmp(jnode(c, k)->key, key, kl)) return k;
    return 0;
}

static int jreq(const jctx_t *c, uint32_t obj, const char *key, uint32_t *out)
{
    *out = jget(c, obj, key);
    if (!*out) return perr(c, "missing \"%s\"", key);
    return 0;
}

/* element i of array node a (already checked to be an array with enough elements) */
static uint32_t jat(const jctx_t *c, uint32_t a, size_t i)
{
    uint32_t k = jnode(c, a)->first;
    while (i--) k = jnode(c, k)->next;
    return k;
}

static int jnum_text(const jctx_t *c, const jnode_t *n, const uint8_t *mod, uint32_t n8, const char *modname,
                     char *out, size_t outcap, uint8_t *le_out);

/* string node i -> canonical decimal (< mod, n8 bytes); out has outcap bytes */
static int jnum(const jctx_t *c, uint32_t i, const uint8_t *mod, uint32_t n8, const char *modname, char *out,
                size_t outcap, uint8_t *le_out)
{
    int rc = expect_type(c, i, J_STR);
    if (rc) return rc;
    return jnum_text(c, jnode(c, i), mod, n8, modname, out, outcap, le_out);
}

/* the text of node n (string contents or integer literal) -> canonical decimal */
static int jnum_text(const jctx_t *c, const jnode_t *n, const uint8_t *mod, uint32_t n8, const char *modname,
                     char *out, size_t outcap, uint8_t *le_out)
{
    uint8_t le[64];
    int t = zp_fmt_text_to_le(le, n8, n->s, n->len);
    if (t == -1) return perr(c, "not a decimal or 0x-hex string");
    if (t == -2) return perr(c, "number does not fit in %u bytes", n8);
    if (mod && zp_fmt_cmp_le(le, mod, n8) >= 0) return perr(c, "not canonical (>= %s)", modname);
    char dec[160];
    size_t dl = zp_fmt_le_to_dec(dec, sizeof dec, le, n8);
    if (dl >= outcap) return perr(c, "number has too many digits");
    memcpy(out, dec, dl + 1);
    if (le_out) memcpy(le_out, le, n8);
    return 0;
}

static bool le_is(const uint8_t *le, size_t n8, unsigned v)
{
    if (le[0] != v) return false;
    for (size_t i = 1; i < n8; i++)
        if (le[i]) return false;
    return true;
}

static int jarray_len(const jctx_t *c, uint32_t i, size_t lo, size_t hi)
{
    int rc = expect_type(c, i, J_ARR);
    if (rc) return rc;
    size_t n = jnode(c, i)->n;
    if (n < lo || n > hi) {
        if (lo == hi) return perr(c, "array has %zu entries, expected %zu", n, lo);
        return perr(c, "array has %zu entries, expected %zu..%zu", n, lo, hi);
    }
    return 0;
}

/* q of curve; for an unknown curve (a proof.json without "curve") the larger q, of bls12381:
 * every coordinate of either curve passes, the caller checks against the real q later */
static const uint8_t *curve_q_or_max(zp_curve_id_t curve, uint32_t *n8)
{
    return zp_fmt_curve_q(curve == ZP_CURVE_NONE ? ZP_CURVE_BLS12_381 : curve, n8);
}

/* G1 point [x, y(, z)] with z "1" (affine) or "0" (infinity -> x = y = "") */
static int jg1(jctx_t *c, uint32_t i, zp_curve_id_t curve, char (*xy)[ZP_DEC_LEN])
{
    uint32_t n8;
    const uint8_t *q = curve_q_or_max(curve, &n8);
    int rc = jarray_len(c, i, 2, 3);
    if (rc) return rc;
    for (size_t k = 0; k < 2; k++) {
        size_t l = push_idx(c, k);
        rc = jnum(c, jat(c, i, k), q, n8, "q", xy[k], ZP_DEC_LEN, NULL);
        pop(c, l);
        if (rc) return rc;
    }
    if (jnode(c, i)->n == 3) {
        uint8_t z[64];
        char tmp[ZP_DEC_LEN];
        size_t l = push_idx(c, 2);
        rc = jnum(c, jat(c, i, 2), q, n8, "q", tmp, sizeof tmp, z);
        if (!rc && !le_is(z, n8, 1) && !le_is(z, n8, 0)) rc = perr(c, "projective z must be \"1\" (affine) or \"0\" (infinity)");
        pop(c, l);
        if (rc) return rc;
        if (le_is(z, n8, 0)) xy[0][0] = xy[1][0] = 0;
    }
    return 0;
}

/* G2 point [[x0,x1],[y0,y1](,[z0,z1])] with z ["1","0"] or ["0","0"] (infinity -> all "") */
static int jg2(jctx_t *c, uint32_t i, zp_curve_id_t curve, char (*xy)[2][ZP_DEC_LEN])
{
    uint32_t n8;
    const uint8_t *q = curve_q_or_max(curve, &n8);
    int rc = jarray_len(c, i, 2, 3);
    if (rc) return rc;
    uint8_t z[2][64];
    char tmp[ZP_DEC_LEN];
    size_t np = jnode(c, i)->n;
    for (size_t k = 0; k < np; k++) {
        size_t l = push_idx(c, k);
        uint32_t pk = jat(c, i, k);
        rc = jarray_len(c, pk, 2, 2);
        for (size_t j = 0; !rc && j < 2; j++) {
            size_t l2 = push_idx(c, j);
            rc = jnum(c, jat(c, pk, j), q, n8, "q", k < 2 ? xy[k][j] : tmp, ZP_DEC_LEN, z[j]);
            pop(c, l2);
        }
        if (!rc && k == 2 && !(le_is(z[1], n8, 0) && (le_is(z[0], n8, 1) || le_is(z[0], n8, 0))))
            rc = perr(c, "projective z must be [\"1\", \"0\"] (affine) or [\"0\", \"0\"] (infinity)");
        pop(c, l);
        if (rc) return rc;
    }
    if (np == 3 && le_is(z[0], n8, 0)) xy[0][0][0] = xy[0][1][0] = xy[1][0][0] = xy[1][1][0] = 0;
    return 0;
}

/* "protocol" (must be groth16 if present / required) and "curve" (required if need_curve, else
 * ZP_CURVE_NONE when absent: snarkjs's verifier takes the curve from the verification key, and
 * older rapidsnark wrote proofs without "curve") */
static int jheader(jctx_t *c, uint32_t root, bool need_protocol, bool need_curve, zp_curve_id_t *curve)
{
    uint32_t k;
    int rc;
    if ((rc = expect_type(c, root, J_OBJ))) return rc;
    k = jget(c, root, "protocol");
    if (!k && need_protocol) return perr(c, "missing \"protocol\"");
    if (k) {
        size_t l = push_key(c, "protocol");
        rc = expect_type(c, k, J_STR);
        if (!rc && !(jnode(c, k)->len == 7 && !memcmp(jnode(c, k)->s, "groth16", 7)))
            rc = perr(c, "\"%.*s\" is not supported (only groth16)", (int)(jnode(c, k)->len > 40 ? 40 : jnode(c, k)->len),
                      jnode(c, k)->s);
        pop(c, l);
        if (rc) return rc;
    }
    *curve = ZP_CURVE_NONE;
    if (!need_curve && !jget(c, root, "curve")) return 0;
    if ((rc = jreq(c, root, "curve", &k))) return rc;
    size_t l = push_key(c, "curve");
    rc = expect_type(c, k, J_STR);
    if (!rc) {
        const jnode_t *n = jnode(c, k);
        if (n->len == 5 && !memcmp(n->s, "bn128", 5)) *curve = ZP_CURVE_BN254;
        else if (n->len == 8 && !memcmp(n->s, "bls12381", 8)) *curve = ZP_CURVE_BLS12_381;
        else rc = zp_err_set(ZP_ECURVE, "%s: curve: \"%.*s\" is not bn128 or bls12381", c->d->name,
                             (int)(n->len > 40 ? 40 : n->len), n->s);
    }
    pop(c, l);
    return rc;
}

static int proof_from_doc(zp_proof_json_t *p, jdoc_t *d)
{
    jctx_t c = {d, ""};
    static const char *const names[3] = {"pi_a", "pi_b", "pi_c"};
    int rc = jheader(&c, 0, false, false, &p->curve);
    for (int i = 0; !rc && i < 3; i++) {
        uint32_t k;
        if ((rc = jreq(&c, 0, names[i], &k))) break;
        size_t l = push_key(&c, names[i]);
        rc = i == 1 ? jg2(&c, k, p->curve, p->b) : jg1(&c, k, p->curve, i ? p->c : p->a);
        pop(&c, l);
    }
    return rc;
}

int zp_proof_json_read(zp_proof_json_t *p, const char *path)
{
    memset(p, 0, sizeof *p);
    jdoc_t d;
    int rc = jdoc_load(&d, path, JSON_MAX_PROOF);
    if (rc) return rc;
    rc = proof_from_doc(p, &d);
    jdoc_free(&d);
    if (rc) memset(p, 0, sizeof *p);
    return rc;
}

int zp_proof_json_parse(zp_proof_json_t *p, const char *text, size_t len, const char *name)
{
    memset(p, 0, sizeof *p);
    if (len > JSON_MAX_PROOF) return zp_err_set(ZP_ETOOBIG, "%s: %zu bytes, more than the %u allowed", name, len, JSON_MAX_PROOF);
    jdoc_t d;
    int rc = jdoc_parse(&d, name, text, len);
    if (rc) return rc;
    rc = proof_from_doc(p, &d);
    jdoc_free(&d);
    if (rc) memset(p, 0, sizeof *p);
    return rc;
}

/* a JSON number that JavaScript reads exactly as an integer (digits only, <= 2^53): snarkjs
 * takes such public signals (BigInt(3)); larger ones it would already have rounded */
static bool json_int_ok(const jnode_t *n)
{
    if (n->len == 0 || n->len > 16) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n->len; i++) {
        if (n->s[i] < '0' || n->s[i] > '9') return false;
        v = v * 10 + (uint64_t)(n->s[i] - '0');
    }
    return v <= (1ull << 53);
}

static int public_from_doc(char (**sig)[100], size_t *n, jdoc_t *d)
{
    jctx_t c = {d, ""};
    int rc = expect_type(&c, 0, J_ARR);
    if (rc) return rc;
    size_t cnt = d->nodes[0].n;
    char (*v)[100] = calloc(cnt ? cnt : 1, sizeof *v);
    if (!v) return zp_err_set(-ENOMEM, "%s: out of memory for %zu signals", d->name, cnt);
    size_t i = 0;
    for (uint32_t k = d->nodes[0].first; k; k = d->nodes[k].next, i++) {
        size_t l = push_idx(&c, i);
        if (d->nodes[k].type == J_NUM)
            rc = json_int_ok(&d->nodes[k]) ? jnum_text(&c, &d->nodes[k], NULL, 32, NULL, v[i], sizeof v[i], NULL)
                                           : perr(&c, "a number that is not an integer in 0..2^53 (use a decimal string)");
        else
            rc = jnum(&c, k, NULL, 32, NULL, v[i], sizeof v[i], NULL);
        pop(&c, l);
        if (rc) {
            free(v);
            return rc;
        }
    }
    *sig = v;
    *n = cnt;
    return 0;
}

int zp_public_json_read(char (**sig)[100], size_t *n, const char *path)
{
    *sig = NULL;
    *n = 0;
    jdoc_t d;
    int rc = jdoc_load(&d, path, JSON_MAX_FILE);
    if (rc) return rc;
    rc = public_from_doc(sig, n, &d);
    jdoc_free(&d);
    return rc;
}

int zp_public_json_parse(char (**sig)[100], size_t *n, const char *text, size_t len, const char *name)
{
    *sig = NULL;
    *n = 0;
    jdoc_t d;
    int rc = jdoc_parse(&d, name, text, len);
    if (rc) return rc;
    rc = public_from_doc(sig, n, &d);
    jdoc_free(&d);
    return rc;
}

int zp_public_json_check(char (*const sig)[100], size_t n, zp_curve_id_t curve, const char *name)
{
    uint32_t n8;
    const uint8_t *r = zp_fmt_curve_r(curve, &n8);
    if (!r) return zp_err_set(ZP_ECURVE, "%s: unknown curve", name);
    for (size_t i = 0; i < n; i++) {
        uint8_t le[32];
        size_t len = strnlen(sig[i], 100);
        if (len == 100 || zp_fmt_text_to_le(le, 32, sig[i], len) || zp_fmt_cmp_le(le, r, 32) >= 0)
            return zp_err_set(ZP_EFORMAT, "%s: [%zu]: not a canonical scalar of %s (< r)", name, i, zp_curve_name(curve));
    }
    return 0;
}

static int vk_from_doc(zp_vk_json_t *vk, jdoc_t *d)
{
    jctx_t c = {d, ""};
    uint32_t k;
    size_t l;
    int rc;
    /* like snarkjs's verifier: "protocol" and "nPublic" may be absent (it reads neither; the IC
     * length gives the count); when present they must be groth16 and IC length - 1 */
    if ((rc = jheader(&c, 0, false, true, &vk->curve))) return rc;
    uint32_t kic = jget(&c, 0, "IC");
    bool have_np = jget(&c, 0, "nPublic") != 0;
    if (have_np) {
        k = jget(&c, 0, "nPublic");
        l = push_key(&c, "nPublic");
        const jnode_t *np = jnode(&c, k);
        uint64_t v = 0;
        if (np->type != J_NUM) rc = perr(&c, "expected a number, got %s", jtype_name[np->type]);
        for (size_t i = 0; !rc && i < np->len; i++) {
            if (np->s[i] < '0' || np->s[i] > '9') rc = perr(&c, "not a non-negative integer");
            else if ((v = v * 10 + (uint64_t)(np->s[i] - '0')) >= UINT32_MAX) rc = perr(&c, "too large");
        }
        pop(&c, l);
        if (rc) return rc;
        vk->n_public = (uint32_t)v;
    } else if (kic && jnode(&c, kic)->type == J_ARR && jnode(&c, kic)->n >= 1 && jnode(&c, kic)->n <= UINT32_MAX) {
        vk->n_public = (uint32_t)(jnode(&c, kic)->n - 1);
    }   /* else: the IC checks below report it */
    static const char *const g2n[3] = {"vk_beta_2", "vk_gamma_2", "vk_delta_2"};
    char(*g2p[3])[2][ZP_DEC_LEN] = {vk->beta2, vk->gamma2, vk->delta2};
    if ((rc = jreq(&c, 0, "vk_alpha_1", &k))) return rc;
    l = push_key(&c, "vk_alpha_1");
    rc = jg1(&c, k, vk->curve, vk->alpha1);
    pop(&c, l);
    if (rc) return rc;
    for (int i = 0; i < 3; i++) {
        if ((rc = jreq(&c, 0, g2n[i], &k))) return rc;
        l = push_key(&c, g2n[i]);
        rc = jg2(&c, k, vk->curve, g2p[i]);
        pop(&c, l);
        if (rc) return rc;
    }
    if ((rc = jreq(&c, 0, "IC", &k))) return rc;
    l = push_key(&c, "IC");
    if ((rc = expect_type(&c, k, J_ARR))) return rc;
    if (!have_np && jnode(&c, k)->n == 0) return perr(&c, "no points (needs at least IC[0])");
    if (jnode(&c, k)->n != (uint64_t)vk->n_public + 1)
        return perr(&c, "%u points but nPublic is %u (needs nPublic + 1)", jnode(&c, k)->n, vk->n_public);
    vk->ic = calloc((size_t)vk->n_public + 1, sizeof *vk->ic);
    if (!vk->ic) return zp_err_set(-ENOMEM, "%s: out of memory", d->name);
    size_t i = 0;
    for (uint32_t e = jnode(&c, k)->first; e; e = jnode(&c, e)->next, i++) {
        size_t l2 = push_idx(&c, i);
        rc = jg1(&c, e, vk->curve, vk->ic[i]);
        pop(&c, l2);
        if (rc) return rc;
    }
    pop(&c, l);
    return 0;
}

int zp_vk_json_read(zp_vk_json_t *vk, const char *path)
{
    memset(vk, 0, sizeof *vk);
    jdoc_t d;
    int rc = jdoc_load(&d, path, JSON_MAX_FILE);
    if (rc) return rc;
    rc = vk_from_doc(vk, &d);
    jdoc_free(&d);
    if (rc) zp_vk_json_free(vk);
    return rc;
}

int zp_vk_json_parse(zp_vk_json_t *vk, const char *text, size_t len, const char *name)
{
    memset(vk, 0, sizeof *vk);
    jdoc_t d;
    int rc = jdoc_parse(&d, name, text, len);
    if (rc) return rc;
    rc = vk_from_doc(vk, &d);
    jdoc_free(&d);
    if (rc) zp_vk_json_free(vk);
    return rc;
}

void zp_vk_json_free(zp_vk_json_t *vk)
{
    if (!vk) return;
    free(vk->ic);
    memset(vk, 0, sizeof *vk);
}

/* ================================================================ generic tree (fmt.h) */

struct zp_json { jdoc_t d; };

static int json_wrap(zp_json_t **out, jdoc_t *d)
{
    zp_json_t *j = malloc(sizeof *j);
    if (!j) {
        int rc = zp_err_set(-ENOMEM, "%s: out of memory", d->name);
        jdoc_free(d);
        return rc;
    }
    j->d = *d;
    *out = j;
    return 0;
}

int zp_json_parse(zp_json_t **out, const char *text, size_t len, const char *name)
{
    jdoc_t d;
    *out = NULL;
    int rc = jdoc_parse(&d, name, text, len);
    return rc ? rc : json_wrap(out, &d);
}

int zp_json_load(zp_json_t **out, const char *path, size_t max)
{
    jdoc_t d;
    *out = NULL;
    int rc = jdoc_load(&d, path, max);
    return rc ? rc : json_wrap(out, &d);
}

void zp_json_free(zp_json_t **jp)
{
    if (!jp || !*jp) return;
    jdoc_free(&(*jp)->d);
    free(*jp);
    *jp = NULL;
}

int zp_json_type(const zp_json_t *j, uint32_t node) { return j->d.nodes[node].type; }
uint32_t zp_json_count(const zp_json_t *j, uint32_t node) { return j->d.nodes[node].n; }
uint32_t zp_json_first(const zp_json_t *j, uint32_t node) { return j->d.nodes[node].first; }
uint32_t zp_json_next(const zp_json_t *j, uint32_t node) { return j->d.nodes[node].next; }
const char *zp_json_type_name(int type) { return type >= 0 && type <= J_OBJ ? jtype_name[type] : "?"; }

const char *zp_json_text(const zp_json_t *j, uint32_t node, size_t *len)
{
    *len = j->d.nodes[node].len;
    return j->d.nodes[node].s;
}

const char *zp_json_key(const zp_json_t *j, uint32_t node, size_t *len)
{
    *len = j->d.nodes[node].klen;
    return j->d.nodes[node].key;
}
