/* input.c - input.json for the witness calculator, read as snarkjs reads it.
 * snarkjs `wtns calculate`: JSON.parse (numbers become doubles), unstringifyBigInts, then per
 * top-level key circom_runtime's flatArray (nested arrays flattened row-major, depth-first) and
 * normalize (BigInt(v) % p, negatives lifted by p). So a JSON number is the double nearest its
 * text (12345678901234567890 is 12345678901234567168), a string is what JavaScript's BigInt()
 * takes (whitespace trimmed, "" = 0, optional sign on decimals, 0x / 0o / 0b prefixes), true and
 * false are 1 and 0; null, objects, fractions and anything else are an error naming the signal
 * and its flat index. Values are held as the parsed JSON tree; zp_wc_input_value reduces one
 * value mod p (little-endian u32 words) on demand (the child process does it, once it knows p).
 * Magnitudes up to 4096 bits (1233 decimal digits) are taken; longer ones are refused.
 * Tests: tests/test_witness.c, tests/fuzz/fuzz_input.c */
#include "lib/witness/witness_int.h"
#include "lib/fmt/fmt.h"
#include "lib/util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BIG_WORDS 128                 /* 4096 bits */
#define INPUT_MAX_FILE (1ull << 30)

uint64_t zp_wc_fnv1a64(const char *s, size_t len)
{
    /* JavaScript hashes UTF-16 code units (str[i].charCodeAt(0)): decode UTF-8 (the JSON
     * reader checked it) into code units; ASCII names hash their bytes */
    uint64_t h = 0xCBF29CE484222325ull;
    const unsigned char *p = (const unsigned char *)s, *e = p + len;
    while (p < e) {
        uint32_t u = *p++;
        if (u >= 0xc0) {
            int k = u >= 0xf0 ? 3 : u >= 0xe0 ? 2 : 1;
            u &= 0x3fu >> k;
            for (int i = 0; i < k && p < e; i++) u = u << 6 | (*p++ & 0x3fu);
        }
        if (u >= 0x10000) {
            u -= 0x10000;
            h = (h ^ (0xd800 + (u >> 10))) * 0x100000001B3ull;
            u = 0xdc00 + (u & 0x3ff);
        }
        h = (h ^ u) * 0x100000001B3ull;
    }
    return h;
}

void zp_wc_input_free(zp_wc_input_t **inp)
{
    if (!inp || !*inp) return;
    zp_wc_input_t *in = *inp;
    zp_json_free(&in->doc);
    free(in->sig);
    free(in->val);
    free(in->name);
    free(in);
    *inp = NULL;
}

static int push_values(zp_wc_input_t *in, uint32_t node, size_t *cap)
{
    if (zp_json_type(in->doc, node) == ZP_JSON_ARR) {
        for (uint32_t c = zp_json_first(in->doc, node); c; c = zp_json_next(in->doc, c)) {
            int rc = push_values(in, c, cap);
            if (rc) return rc;
        }
        return 0;
    }
    if (in->nval == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        uint32_t *nv = realloc(in->val, nc * sizeof *nv);
        if (!nv) return zp_err_set(-ENOMEM, "%s: out of memory", in->name);
        in->val = nv;
        *cap = nc;
    }
    in->val[in->nval++] = node;
    return 0;
}

static int input_build(zp_wc_input_t *in)
{
    if (zp_json_type(in->doc, 0) != ZP_JSON_OBJ)
        return zp_err_set(ZP_EFORMAT, "%s: the input is %s, not an object of signal names", in->name,
                          zp_json_type_name(zp_json_type(in->doc, 0)));
    in->nsig = zp_json_count(in->doc, 0);
    in->sig = calloc(in->nsig ? in->nsig : 1, sizeof *in->sig);
    if (!in->sig) return zp_err_set(-ENOMEM, "%s: out of memory", in->name);
    size_t cap = 0, k = 0;
    for (uint32_t m = zp_json_first(in->doc, 0); m; m = zp_json_next(in->doc, m), k++) {
        zp_wc_sig_t *s = &in->sig[k];
        s->name = zp_json_key(in->doc, m, &s->nlen);
        s->hash = zp_wc_fnv1a64(s->name, s->nlen);
        s->first = in->nval;
        int rc = push_values(in, m, &cap);
        if (rc) return rc;
        s->count = in->nval - s->first;
        if (s->count > UINT32_MAX)
            return zp_err_set(ZP_ETOOBIG, "%s: signal \"%.*s\" has %zu values", in->name, (int)s->nlen, s->name, s->count);
    }
    return 0;
}

static int input_new(zp_wc_input_t **out, const char *name)
{
    *out = calloc(1, sizeof **out);
    if (!*out || !((*out)->name = strdup(name))) {
        free(*out);
        *out = NULL;
        return zp_err_set(-ENOMEM, "%s: out of memory", name);
    }
    return 0;
}

int zp_wc_input_parse(zp_wc_input_t **out, const char *text, size_t len, const char *name)
{
    int rc = input_new(out, name);
    if (rc) return rc;
    if ((rc = zp_json_parse(&(*out)->doc, text, len, name)) || (rc = input_build(*out))) zp_wc_input_free(out);
    return rc;
}

int zp_wc_input_load(zp_wc_input_t **out, const char *path)
{
    int rc = input_new(out, path);
    if (rc) return rc;
    if ((rc = zp_json_load(&(*out)->doc, path, INPUT_MAX_FILE)) || (rc = input_build(*out))) zp_wc_input_free(out);
    return rc;
}

size_t zp_wc_input_signals(const zp_wc_input_t *inp) { return inp->nsig; }
size_t zp_wc_input_values(const zp_wc_input_t *inp) { return inp->nval; }

/* ---------------------------------------------------------------- big integers, u32 words LE */

typedef struct {
    uint32_t w[BIG_WORDS + 1];
    unsigned n;                       /* words in use */
} big_t;

/* v = v * m + a; false when it outgrows BIG_WORDS */
static bool big_muladd(big_t *v, uint32_t m, uint32_t a)
{
    uint64_t carry = a;
    for (unsigned i = 0; i < v->n; i++) {
        uint64_t t = (uint64_t)v->w[i] * m + carry;
        v->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        if (v->n == BIG_WORDS) return false;
        v->w[v->n++] = (uint32_t)carry;
    }
    return true;
}

static int digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* digits in base 2, 8, 10 or 16; -1 bad digit, -2 too long */
static int big_from_digits(big_t *v, const char *s, size_t len, unsigned base)
{
    memset(v, 0, sizeof *v);
    if (!len) return -1;
    for (size_t i = 0; i < len; i++) {
        int d = digit(s[i]);
        if (d >= (int)base) return -1;
        if (!big_muladd(v, base, (uint32_t)d)) return -2;
    }
    return 0;
}

/* an integral double, exactly */
static int big_from_double(big_t *v, double x)
{
    memset(v, 0, sizeof *v);
    if (x == 0) return 0;
    int e;
    double m = frexp(x, &e);                 /* x = m * 2^e, 0.5 <= m < 1 */
    uint64_t mant = (uint64_t)ldexp(m, 53);
    int sh = e - 53;
    if (sh < 0) { mant >>= -sh; sh = 0; }    /* integral: the bits shifted out are zero */
    v->w[0] = (uint32_t)mant;
    v->w[1] = (uint32_t)(mant >> 32);
    v->n = 2;
    for (; sh >= 16; sh -= 16)
        if (!big_muladd(v, 1u << 16, 0)) return -2;
    if (sh && !big_muladd(v, 1u << sh, 0)) return -2;
    return 0;
}

static int cmp_words(const uint32_t *a, const uint32_t *b, unsigned n)
{
    for (unsigned i = n; i-- > 0;)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static void sub_words(uint32_t *a, const uint32_t *b, unsigned n)   /* a -= b, a >= b */
{
    uint64_t borrow = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t t = (uint64_t)a[i] - b[i] - borrow;
        a[i] = (uint32_t)t;
        borrow = (t >> 63) & 1;
    }
}

/* out = v mod p, pn32 words (p > 0) */
static void big_mod(uint32_t *out, const big_t *v, const uint32_t *p, unsigned pn32)
{
    uint32_t r[BIG_WORDS + 2] = {0};
    if (v->n <= pn32) {
        memcpy(r, v->w, v->n * 4);
        while (cmp_words(r, p, pn32) >= 0) sub_words(r, p, pn32);   /* at most a few times */
        memcpy(out, r, pn32 * 4);
        return;
    }
    /* bitwise long division: r = 2r + bit, r < 2p fits pn32 + 1 words */
    uint32_t pp[BIG_WORDS + 2] = {0};
    memcpy(pp, p, pn32 * 4);
    for (unsigned wi = v->n; wi-- > 0;) {
        for (int b = 31; b >= 0; b--) {
            uint32_t carry = (v->w[wi] >> b) & 1;
            for (unsigned i = 0; i <= pn32; i++) {
                uint32_t nc = r[i] >> 31;
                r[i] = r[i] << 1 | carry;
                carry = nc;
            }
            if (cmp_words(r, pp, pn32 + 1) >= 0) sub_words(r, pp, pn32 + 1);
        }
    }
    memcpy(out, r, pn32 * 4);
}

static bool js_space(const unsigned char *s, size_t len, size_t *k)
{
    if (!len) return false;
    unsigned c = s[0];
    if (c == ' ' || (c >= 9 && c <= 13)) { *k = 1; return true; }
    if (len >= 2 && c == 0xc2 && s[1] == 0xa0) { *k = 2; return true; }          /* NBSP */
    if (len >= 3) {
        unsigned u = (c & 0x0f) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
        if ((c & 0xf0) == 0xe0 &&
            (u == 0xfeff || u == 0x1680 || (u >= 0x2000 && u <= 0x200a) || u == 0x2028 || u == 0x2029 ||
             u == 0x202f || u == 0x205f || u == 0x3000)) { *k = 3; return true; }
    }
    return false;
}

/* JavaScript's BigInt(string) */
static int big_from_js_string(big_t *v, bool *neg, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t k;
    while (js_space(s, len, &k)) { s += k; len -= k; }
    for (;;) {    /* trailing space: find the last char that starts a space sequence */
        size_t i = len, cut = 0;
        for (size_t j = len >= 3 ? len - 3 : 0; j < len; j++)
            if (js_space(s + j, len - j, &k) && j + k == len) { cut = k; break; }
        if (!cut) break;
        len = i - cut;
    }
    *neg = false;
    if (!len) { memset(v, 0, sizeof *v); return 0; }
    const char *p = (const char *)s;
    if (len > 2 && p[0] == '0' && strchr("xXoObB", p[1])) {
        unsigned base = (p[1] | 0x20) == 'x' ? 16 : (p[1] | 0x20) == 'o' ? 8 : 2;
        return big_from_digits(v, p + 2, len - 2, base);
    }
    if (p[0] == '+' || p[0] == '-') {
        *neg = p[0] == '-';
        p++;
        len--;
    }
    return big_from_digits(v, p, len, 10);
}

/* the signal of flat value i, for messages only (a binary search: signals are in value order) */
static const zp_wc_sig_t *sig_of(const zp_wc_input_t *in, size_t i)
{
    size_t lo = 0, hi = in->nsig;      /* the last signal with first <= i */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->sig[mid].first <= i) lo = mid;
        else hi = mid;
    }
    return &in->sig[lo];
}

int zp_wc_input_value(uint32_t *out, const zp_wc_input_t *in, size_t i, const uint32_t *p, unsigned pn32)
{
    uint32_t node = in->val[i];
    int t = zp_json_type(in->doc, node);
    big_t v;
    bool neg = false;
    int rc = 0;
    size_t len;
    const char *txt = NULL;
    memset(&v, 0, sizeof v);
    if (t == ZP_JSON_TRUE) {
        v.w[0] = 1;
        v.n = 1;
    } else if (t == ZP_JSON_FALSE) {
    } else if (t == ZP_JSON_NUM) {
        txt = zp_json_text(in->doc, node, &len);
        char buf[512];
        if (len >= sizeof buf) rc = -1;
        else {
            memcpy(buf, txt, len);
            buf[len] = 0;
            double x = strtod(buf, NULL);   /* JSON.parse: the nearest double */
            if (!isfinite(x) || x != floor(x)) rc = -3;
            else {
                neg = x < 0;
                rc = big_from_double(&v, fabs(x));
            }
        }
    } else if (t == ZP_JSON_STR) {
        txt = zp_json_text(in->doc, node, &len);
        rc = big_from_js_string(&v, &neg, txt, len);
    } else {
        const zp_wc_sig_t *sg = sig_of(in, i);
        return zp_err_set(ZP_EFORMAT, "%s: signal \"%.*s\" value %zu is %s, not a number or a numeric string", in->name,
                          (int)sg->nlen, sg->name, i - sg->first, zp_json_type_name(t));
    }
    if (rc) {
        const zp_wc_sig_t *sg = sig_of(in, i);
        int shown = txt ? (int)(len > 80 ? 80 : len) : 0;
        return zp_err_set(rc == -2 ? ZP_ETOOBIG : ZP_EFORMAT, "%s: signal \"%.*s\" value %zu (%s%.*s%s): %s", in->name,
                          (int)sg->nlen, sg->name, i - sg->first, t == ZP_JSON_STR ? "\"" : "", shown, txt ? txt : "",
                          t == ZP_JSON_STR ? "\"" : "",
                          rc == -2 ? "longer than 4096 bits" : rc == -3 ? "not an integer" : "not an integer literal");
    }
    big_mod(out, &v, p, pn32);
    bool zero = true;
    for (unsigned k = 0; k < pn32; k++) zero &= out[k] == 0;
    if (neg && !zero) {   /* p - r */
        uint32_t r[BIG_WORDS];
        memcpy(r, p, pn32 * 4);
        sub_words(r, out, pn32);
        memcpy(out, r, pn32 * 4);
    }
    return 0;
}
