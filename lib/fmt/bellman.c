/* bellman.c - bellman / bellperson .params and .vk, zcash point encodings, the 192-byte proof.
 * See bellman.h for the formats, the checks and the in-place layout. */
#include "lib/fmt/bellman.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fmt/bellman_int.h"
#include "lib/util/util.h"

#define G1B ZP_BLS_G1_UNCOMPRESSED
#define G2B ZP_BLS_G2_UNCOMPRESSED
#define FQB 48

static bool g1_torsion_free_oc(const zp_g1a_bls12_381_t *p);
static bool g2_torsion_free_oc(const zp_g2a_bls12_381_t *p);

static const char *const sec_names[ZP_BSEC_N] = {"ic", "h", "l", "a", "b_g1", "b_g2"};

const char *zp_bsec_name(int sec)
{
    return sec >= 0 && sec < ZP_BSEC_N ? sec_names[sec] : "?";
}

zp_keyfmt_t zp_key_format_sniff(const uint8_t *head, size_t n)
{
    if (n >= 4 && !memcmp(head, "zkey", 4)) return ZP_KEYFMT_ZKEY;
    if (n >= 1 && ((head[0] & 0xe0) == 0 || head[0] == 0x40)) return ZP_KEYFMT_BELLMAN;
    return ZP_KEYFMT_UNKNOWN;
}

int zp_key_format_of_file(zp_keyfmt_t *fmt, const char *path)
{
    uint8_t head[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    ssize_t n = read(fd, head, sizeof head);
    int e = errno;
    close(fd);
    if (n < 0) return zp_err_set(-e, "%s: read: %s", path, strerror(e));
    *fmt = zp_key_format_sniff(head, (size_t)n);
    return 0;
}

/* zp_err_set with the current detail appended (copied first: zp_err_set writes the same buffer) */
static int rewrap(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rewrap(int rc, const char *fmt, ...)
{
    char inner[512], outer[512];
    snprintf(inner, sizeof inner, "%s", zp_err_msg());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(outer, sizeof outer, fmt, ap);
    va_end(ap);
    return zp_err_set(rc, "%s: %s", outer, inner);
}

static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static bool all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++) acc |= p[i];
    return acc == 0;
}

/* flags of an uncompressed encoding; 1 = identity, 0 = affine point follows, <0 error */
static int unc_flags(const uint8_t *in, size_t len)
{
    uint8_t fl = in[0] & 0xe0;
    if (fl & 0x80) return zp_err_set(ZP_EFORMAT, "compression flag set in an uncompressed point");
    if (fl & 0x20) return zp_err_set(ZP_EFORMAT, "sort flag set in an uncompressed point");
    if (fl & 0x40) {
        if ((in[0] & 0x1f) || !all_zero(in + 1, len - 1))
            return zp_err_set(ZP_EFORMAT, "infinity flag with non-zero coordinates");
        return 1;
    }
    return 0;
}

/* one big-endian coordinate; only the first coordinate of an encoding (flags: true) carries the
 * 3 flag bits, every other one must be < p as it stands */
static int fq_be(zp_fq_bls12_381_t *r, const uint8_t *in, const char *what, bool flags)
{
    uint8_t b[FQB];
    memcpy(b, in, FQB);
    if (flags) b[0] &= 0x1f;
    if (zp_fq_bls12_381_from_bytes_be(r, b)) return zp_err_set(ZP_EFORMAT, "%s is not below the field modulus", what);
    return 0;
}

int zp_bls_g1_from_uncompressed(zp_g1a_bls12_381_t *r, const uint8_t in[96], bool subgroup)
{
    int f = unc_flags(in, G1B);
    if (f < 0) return f;
    if (f == 1) { memset(r, 0, sizeof *r); return 0; }
    zp_g1a_bls12_381_t p;
    int rc;
    if ((rc = fq_be(&p.x, in, "x", true)) || (rc = fq_be(&p.y, in + FQB, "y", false))) return rc;
    if (zp_fq_bls12_381_is_zero(&p.x) && zp_fq_bls12_381_is_zero(&p.y))
        return zp_err_set(ZP_EFORMAT, "(0, 0) without the infinity flag");
    if (!zp_g1a_bls12_381_on_curve(&p)) return zp_err_set(ZP_EFORMAT, "not on the curve");
    if (subgroup && !g1_torsion_free_oc(&p))
        return zp_err_set(ZP_EFORMAT, "not in the prime-order subgroup");
    *r = p;
    return 0;
}

int zp_bls_g2_from_uncompressed(zp_g2a_bls12_381_t *r, const uint8_t in[192], bool subgroup)
{
    int f = unc_flags(in, G2B);
    if (f < 0) return f;
    if (f == 1) { memset(r, 0, sizeof *r); return 0; }
    zp_g2a_bls12_381_t p;
    int rc;
    /* x.c1, x.c0, y.c1, y.c0 */
    if ((rc = fq_be(&p.x.c1, in, "x.c1", true)) || (rc = fq_be(&p.x.c0, in + FQB, "x.c0", false)) ||
        (rc = fq_be(&p.y.c1, in + 2 * FQB, "y.c1", false)) || (rc = fq_be(&p.y.c0, in + 3 * FQB, "y.c0", false)))
        return rc;
    if (zp_g2a_bls12_381_is_inf(&p)) return zp_err_set(ZP_EFORMAT, "(0, 0) without the infinity flag");
    if (!zp_g2a_bls12_381_on_curve(&p)) return zp_err_set(ZP_EFORMAT, "not on the curve");
    if (subgroup && !g2_torsion_free_oc(&p))
        return zp_err_set(ZP_EFORMAT, "not in the prime-order subgroup");
    *r = p;
    return 0;
}

void zp_bls_g1_to_uncompressed(uint8_t out[96], const zp_g1a_bls12_381_t *p)
{
    memset(out, 0, G1B);
    if (zp_g1a_bls12_381_is_inf(p)) { out[0] = 0x40; return; }
    zp_fq_bls12_381_to_bytes_be(out, &p->x);
    zp_fq_bls12_381_to_bytes_be(out + FQB, &p->y);
}

void zp_bls_g2_to_uncompressed(uint8_t out[192], const zp_g2a_bls12_381_t *p)
{
    memset(out, 0, G2B);
    if (zp_g2a_bls12_381_is_inf(p)) { out[0] = 0x40; return; }
    zp_fq_bls12_381_to_bytes_be(out, &p->x.c1);
    zp_fq_bls12_381_to_bytes_be(out + FQB, &p->x.c0);
    zp_fq_bls12_381_to_bytes_be(out + 2 * FQB, &p->y.c1);
    zp_fq_bls12_381_to_bytes_be(out + 3 * FQB, &p->y.c0);
}

/* ---- subgroup checks with the endomorphisms (eprint 2021/1130 sec. 4, as zkcrypto/bls12_381's
 * is_torsion_free and EIP-2537): G1: phi(P) = [-x^2] P, G2: psi(P) = [x] P, x = -0xd201000000010000
 * the BLS seed (6 set bits). The scalar multiplications are short double-and-add chains in
 * Jacobian coordinates (no inversion): G1 two chains of [|x|] (126 doublings, 10 additions), G2
 * one (63 doublings in Fq2, 5 mixed additions), instead of the 255 doublings of [r] P. Which power
 * of lib/ec's phi (its beta is one of the two cube roots) has the eigenvalue -x^2 is found once on
 * the generator. Tests: tests/test_bfmt.c (against zp_g?a_bls12_381_in_subgroup, points with a
 * cofactor component of every small order). */
#define BLS_ABS_X 0xd201000000010000ull

static void g1_mul_absx(zp_g1_bls12_381_t *r, const zp_g1_bls12_381_t *p)
{
    zp_g1_bls12_381_t acc = *p;   /* top bit 63 */
    for (int b = 62; b >= 0; b--) {
        zp_g1_bls12_381_dbl(&acc, &acc);
        if (BLS_ABS_X >> b & 1) zp_g1_bls12_381_add(&acc, &acc, p);
    }
    *r = acc;
}

/* 1: phi has eigenvalue -x^2 on G1; 2: phi^2 has; decided on the generator */
static int g1_phi_power(void)
{
    static _Atomic int pw;
    int v = pw;
    if (v) return v;
    zp_g1a_bls12_381_t g, e;
    zp_g1_bls12_381_t j, t, q;
    zp_g1_bls12_381_generator(&g);
    zp_g1_bls12_381_from_affine(&j, &g);
    g1_mul_absx(&t, &j);
    g1_mul_absx(&t, &t);
    zp_g1_bls12_381_neg(&t, &t);
    zp_g1a_bls12_381_endo(&e, &g);
    zp_g1_bls12_381_from_affine(&q, &e);
    v = zp_g1_bls12_381_eq(&q, &t) ? 1 : 2;
    pw = v;
    return v;
}

/* Jacobian t equals affine a (not infinity): t.x = a.x t.z^2, t.y = a.y t.z^3 */
#define JAC_EQ_AFFINE(F, t, a)                                                                 \
    do {                                                                                       \
        if (zp_##F##_is_zero(&(t)->z)) return false;                                           \
        zp_##F##_t z2, z3, u;                                                                  \
        zp_##F##_sqr(&z2, &(t)->z);                                                            \
        zp_##F##_mul(&u, &(a)->x, &z2);                                                        \
        if (!zp_##F##_eq(&u, &(t)->x)) return false;                                           \
        zp_##F##_mul(&z3, &z2, &(t)->z);                                                       \
        zp_##F##_mul(&u, &(a)->y, &z3);                                                        \
        return zp_##F##_eq(&u, &(t)->y);                                                       \
    } while (0)

/* p on the curve, not the identity */
static bool g1_torsion_free_oc(const zp_g1a_bls12_381_t *p)
{
    zp_g1a_bls12_381_t e;
    zp_g1_bls12_381_t j, t;
    zp_g1_bls12_381_from_affine(&j, p);   /* [|x|] P with mixed additions, then [|x|] of that */
    for (int b = 62; b >= 0; b--) {
        zp_g1_bls12_381_dbl(&j, &j);
        if (BLS_ABS_X >> b & 1) zp_g1_bls12_381_add_affine(&j, &j, p);
    }
    g1_mul_absx(&t, &j);
    zp_g1_bls12_381_neg(&t, &t);          /* [-x^2] P */
    zp_g1a_bls12_381_endo(&e, p);
    if (g1_phi_power() == 2) zp_g1a_bls12_381_endo(&e, &e);
    JAC_EQ_AFFINE(fq_bls12_381, &t, &e);
}

static bool g2_torsion_free_oc(const zp_g2a_bls12_381_t *p)
{
    zp_g2a_bls12_381_t s;
    zp_g2_bls12_381_t t;
    zp_g2_bls12_381_from_affine(&t, p);
    for (int b = 62; b >= 0; b--) {
        zp_g2_bls12_381_dbl(&t, &t);
        if (BLS_ABS_X >> b & 1) zp_g2_bls12_381_add_affine(&t, &t, p);
    }
    zp_g2_bls12_381_neg(&t, &t);          /* [x] P, x < 0 */
    zp_g2a_bls12_381_psi(&s, p);
    JAC_EQ_AFFINE(fq2_bls12_381, &t, &s);
}

bool zp_bls_g1_torsion_free(const zp_g1a_bls12_381_t *p)
{
    if (!zp_g1a_bls12_381_on_curve(p)) return false;
    return zp_g1a_bls12_381_is_inf(p) || g1_torsion_free_oc(p);
}

bool zp_bls_g2_torsion_free(const zp_g2a_bls12_381_t *p)
{
    if (!zp_g2a_bls12_381_on_curve(p)) return false;
    return zp_g2a_bls12_381_is_inf(p) || g2_torsion_free_oc(p);
}

/* ---- reader ---- */

typedef struct {
    const char *name;
    int fd;                   /* >= 0: drop converted ranges from the page cache */
    zp_pool_t *pool;          /* NULL: the caller's thread only */
    void *const *into;        /* opts.into: sections converted into these (the file mapped read-only) */
    const uint64_t *cap;
    bool scan;                /* ZP_BKEY_SCAN: counts only */
} ctx_t;

/* into mode: the read-only mapping's pages touching [from, to) given back (rounded outward:
 * a page another thread still reads is only faulted in again from the file, the data is the
 * file's; so a chunk's edge pages do not stay resident until the end) */
static void unmap_range(uint8_t *map, uint64_t from, uint64_t to)
{
    from &= ~(uint64_t)4095;
    to = (to + 4095) & ~(uint64_t)4095;
    if (map && to > from) madvise(map + from, (size_t)(to - from), MADV_DONTNEED);
}

/* drops the page-cache pages that lie wholly in [from, to) of the file (converted: the private
 * copy holds them now; a page shared with a range not yet converted stays, the final drop
 * over the whole file takes it) */
static void drop_range(int fd, uint64_t from, uint64_t to)
{
    if (fd < 0) return;
    from = (from + 4095) & ~(uint64_t)4095;
    to &= ~(uint64_t)4095;
    if (to > from) posix_fadvise(fd, (off_t)from, (off_t)(to - from), POSIX_FADV_DONTNEED);
}

static int head_point(const ctx_t *c, void *out, const uint8_t *p, bool g2, const char *field, bool subgroup)
{
    int rc = g2 ? zp_bls_g2_from_uncompressed(out, p, subgroup) : zp_bls_g1_from_uncompressed(out, p, subgroup);
    if (rc) return rewrap(rc, "%s: %s", c->name, field);
    return 0;
}

/* one section point: decode from in (read whole before out is written; in and out may overlap),
 * refuse the identity, check the subgroup, write the converted point to out. 0 or ZP_EFORMAT
 * with the reason (no file / field: the caller adds them). */
static int conv_point(uint8_t *out, const uint8_t *in, bool g2, bool subgroup)
{
    union { zp_g1a_bls12_381_t g1; zp_g2a_bls12_381_t g2; } t;
    int rc = g2 ? zp_bls_g2_from_uncompressed(&t.g2, in, false) : zp_bls_g1_from_uncompressed(&t.g1, in, false);
    if (rc) return rc;
    if (g2 ? zp_g2a_bls12_381_is_inf(&t.g2) : zp_g1a_bls12_381_is_inf(&t.g1))
        return zp_err_set(ZP_EFORMAT, "point at infinity");
    if (subgroup && !(g2 ? g2_torsion_free_oc(&t.g2) : g1_torsion_free_oc(&t.g1)))
        return zp_err_set(ZP_EFORMAT, "not in the prime-order subgroup");
    memcpy(out, &t, g2 ? G2B : G1B);
    return 0;
}

/* one section converted in place (dst == src) on the pool: threads take chunks in increasing
 * order; a failing point is left as it was and lowers `bad`; a chunk that starts past `bad` is
 * not taken, every chunk below it is finished, so `bad` ends as the smallest failing index
 * whatever the thread count */
#define CHUNK 1024u
typedef struct {
    uint8_t *pts;             /* first encoded point */
    uint8_t *out;             /* into mode: where the first converted point goes (else NULL: in place) */
    uint8_t *map;             /* into mode: the mapping's start (its pages dropped as converted) */
    uint64_t file_off;        /* its file offset (page-cache drops) */
    uint64_t n;
    bool g2, subgroup;
    int fd;
    _Atomic uint64_t next;    /* next chunk */
    _Atomic uint64_t bad;     /* smallest failing index found, n if none */
} conv_job_t;

static void conv_run(void *arg, unsigned tid, unsigned nth)
{
    (void)tid, (void)nth;
    conv_job_t *j = arg;
    uint64_t sz = j->g2 ? G2B : G1B;
    for (;;) {
        uint64_t lo = atomic_fetch_add(&j->next, 1) * CHUNK;
        if (lo >= j->n || lo > atomic_load(&j->bad)) return;
        uint64_t hi = lo + CHUNK < j->n ? lo + CHUNK : j->n;
        for (uint64_t i = lo; i < hi; i++) {
            uint8_t *p = j->pts + i * sz;
            if (conv_point(j->out ? j->out + i * sz : p, p, j->g2, j->subgroup)) {
                uint64_t b = atomic_load(&j->bad);
                while (i < b && !atomic_compare_exchange_weak(&j->bad, &b, i)) {}
                break;
            }
        }
        unmap_range(j->map, j->file_off + lo * sz, j->file_off + hi * sz);
        drop_range(j->fd, j->file_off + lo * sz, j->file_off + hi * sz);
    }
}

/* section s, its count read by count_section */
static int convert_section(const ctx_t *c, zp_bkey_t *k, uint8_t *base, int s, bool subgroup)
{
    zp_bsec_t *sec = &k->sec[s];
    bool g2 = s == ZP_BSEC_B_G2;
    uint64_t sz = g2 ? G2B : G1B, src = sec->file_off, dst = src - (((uintptr_t)base + src) & 7);
    uint64_t bad = sec->n;
    if (src - dst > 4) return zp_err_set(-EINVAL, "%s: %s: buffer not 8-byte aligned", c->name, sec_names[s]);
    uint8_t *out = NULL;   /* into mode: the caller's place for this section */
    if (c->into) {
        if (sec->n > c->cap[s])
            return zp_err_set(ZP_EMISMATCH, "%s: %s: %u points, %llu laid out for it (the file changed since it was "
                              "scanned?)", c->name, sec_names[s], sec->n, (unsigned long long)c->cap[s]);
        if (sec->n && (!c->into[s] || ((uintptr_t)c->into[s] & 7)))
            return zp_err_set(-EINVAL, "%s: %s: no 8-aligned place to convert into", c->name, sec_names[s]);
        out = c->into[s];
    }
    if (out) {   /* from the read-only mapping into the caller's memory: never in place */
        conv_job_t j = {.pts = base + src, .out = out, .map = base, .file_off = src, .n = sec->n, .g2 = g2,
                        .subgroup = subgroup, .fd = c->fd};
        atomic_init(&j.next, 0);
        atomic_init(&j.bad, sec->n);
        zp_pool_run(sec->n >= 2 * CHUNK ? c->pool : NULL, conv_run, &j);
        bad = atomic_load(&j.bad);
    } else if (dst != src || !c->pool || sec->n < 2 * CHUNK) {
        /* shifted down over the count (the IC array), or small: in order on this thread; a
         * point's source is read whole before its converted form overwrites the 4 bytes
         * before it (the previous point's tail, already converted) */
        for (uint64_t i = 0; i < sec->n; i++) {
            int rc = conv_point(base + dst + i * sz, base + src + i * sz, g2, subgroup);
            if (rc) return rewrap(rc, "%s: %s[%llu] (offset %llu)", c->name, sec_names[s], (unsigned long long)i,
                                  (unsigned long long)(src + i * sz));
            if ((i & 4095) == 4095) drop_range(c->fd, src + (i - 4095) * sz, src + (i + 1) * sz);
        }
    } else {
        conv_job_t j = {.pts = base + src, .file_off = src, .n = sec->n, .g2 = g2, .subgroup = subgroup, .fd = c->fd};
        atomic_init(&j.next, 0);
        atomic_init(&j.bad, sec->n);
        zp_pool_run(c->pool, conv_run, &j);
        bad = atomic_load(&j.bad);
    }
    if (bad < sec->n) {   /* left unconverted: decode it again here for the reason */
        uint8_t tmp[G2B];
        const uint8_t *at = base + src + bad * sz;
        memcpy(tmp, at, sz);
        int rc = conv_point(tmp, at, g2, subgroup);
        if (!rc) rc = zp_err_set(ZP_EFORMAT, "refused by a worker thread, accepted on recheck");   /* not reached */
        return rewrap(rc, "%s: %s[%llu] (offset %llu)", c->name, sec_names[s], (unsigned long long)bad,
                      (unsigned long long)(src + bad * sz));
    }
    sec->pts = sec->n ? (out ? out : base + dst) : NULL;
    return 0;
}

/* section s's count at *off, checked against the size before any of its points is read (as
 * bellman reads: one section after the other); advances *off past the section */
static int count_section(const ctx_t *c, zp_bkey_t *k, const uint8_t *base, size_t len, uint64_t *off, int s)
{
    uint64_t sz = s == ZP_BSEC_B_G2 ? G2B : G1B;
    const char *field = sec_names[s];
    if (*off > len || len - *off < 4)
        return zp_err_set(ZP_EFORMAT, "%s: %s: truncated: the count at offset %llu is missing (file has %zu bytes)",
                          c->name, field, (unsigned long long)*off, len);
    uint32_t n = be32(base + *off);
    uint64_t src = *off + 4, need = (uint64_t)n * sz;
    if (need > len - src)
        return zp_err_set(ZP_EFORMAT, "%s: %s: count %u needs %llu bytes at offset %llu, only %llu left in the file",
                          c->name, field, n, (unsigned long long)need, (unsigned long long)src,
                          (unsigned long long)(len - src));
    k->sec[s].count_off = *off;
    k->sec[s].file_off = src;
    k->sec[s].n = n;
    *off = src + need;
    return 0;
}

static int parse(zp_bkey_t *k, uint8_t *base, size_t len, ctx_t *c, unsigned flags)
{
    bool subgroup = !(flags & ZP_BKEY_NO_SUBGROUP);
    int rc;
    static const struct { const char *name; unsigned end; } head[] = {
        {"alpha_g1", 96}, {"beta_g1", 192}, {"beta_g2", 384}, {"gamma_g2", 576}, {"delta_g1", 672}, {"delta_g2", 864}};
    for (unsigned i = 0; i < 6; i++)
        if (len < head[i].end)
            return zp_err_set(ZP_EFORMAT, "%s: %s: truncated: %zu bytes, the verifying key's %s ends at %u", c->name,
                              head[i].name, len, head[i].name, head[i].end);
    const uint8_t *p = base;
    if ((rc = head_point(c, &k->alpha_g1, p, false, "alpha_g1", subgroup))) return rc;
    if ((rc = head_point(c, &k->beta_g1, p += G1B, false, "beta_g1", subgroup))) return rc;
    if ((rc = head_point(c, &k->beta_g2, p += G1B, true, "beta_g2", subgroup))) return rc;
    if ((rc = head_point(c, &k->gamma_g2, p += G2B, true, "gamma_g2", subgroup))) return rc;
    if ((rc = head_point(c, &k->delta_g1, p += G2B, false, "delta_g1", subgroup))) return rc;
    if ((rc = head_point(c, &k->delta_g2, p += G1B, true, "delta_g2", subgroup))) return rc;
    int last = (flags & ZP_BKEY_VK_ONLY) ? ZP_BSEC_IC : ZP_BSEC_B_G2;
    uint64_t end = ZP_BVK_HEAD_BYTES;
    for (int s = ZP_BSEC_IC; s <= last; s++)
        if ((rc = count_section(c, k, base, len, &end, s)) || (!c->scan && (rc = convert_section(c, k, base, s, subgroup))))
            return rc;
    if (c->fd >= 0) posix_fadvise(c->fd, 0, (off_t)(end & ~(uint64_t)4095), POSIX_FADV_DONTNEED);
    k->end = end;
    k->has_params = last == ZP_BSEC_B_G2;
    k->subgroup = subgroup ? ZP_BKEY_SG_CHECKED : ZP_BKEY_SG_SKIPPED;
    k->ic = k->sec[ZP_BSEC_IC].pts;
    k->h = k->sec[ZP_BSEC_H].pts;
    k->l = k->sec[ZP_BSEC_L].pts;
    k->a = k->sec[ZP_BSEC_A].pts;
    k->b_g1 = k->sec[ZP_BSEC_B_G1].pts;
    k->b_g2 = k->sec[ZP_BSEC_B_G2].pts;
    k->n_ic = k->sec[ZP_BSEC_IC].n;
    k->n_h = k->sec[ZP_BSEC_H].n;
    k->n_l = k->sec[ZP_BSEC_L].n;
    k->n_a = k->sec[ZP_BSEC_A].n;
    k->n_b_g1 = k->sec[ZP_BSEC_B_G1].n;
    k->n_b_g2 = k->sec[ZP_BSEC_B_G2].n;
    return 0;
}

/* the pool an open uses: the caller's, none for a small key or threads == 1, else a new one
 * (*own set: destroy it after) */
static zp_pool_t *open_pool(const zp_bkey_opts_t *o, size_t len, bool *own)
{
    *own = false;
    if (o && o->pool) return o->pool;
    unsigned th = o ? o->threads : 0;
    if (th == 1 || len < (size_t)(8 * CHUNK * G1B)) return NULL;
    zp_pool_t *p = zp_pool_new(th);
    *own = p != NULL;
    return p;   /* NULL (no threads): this thread alone */
}

int zp_bkey_parse_opts(zp_bkey_t *k, void *buf, size_t len, const char *name, const zp_bkey_opts_t *o)
{
    memset(k, 0, sizeof *k);
    unsigned flags = o ? o->flags : 0;
    ctx_t c = {.name = name ? name : "(memory)", .fd = -1};
    if ((uintptr_t)buf & 7) return zp_err_set(-EINVAL, "%s: buffer not 8-byte aligned", c.name);
    bool own;
    c.pool = open_pool(o, len, &own);
    k->f.path = name;
    k->f.map = buf;
    k->f.size = len;
    int rc = parse(k, buf, len, &c, flags & (ZP_BKEY_VK_ONLY | ZP_BKEY_NO_SUBGROUP));
    if (own) zp_pool_destroy(&c.pool);
    if (rc) memset(k, 0, sizeof *k);
    return rc;
}

int zp_bkey_parse(zp_bkey_t *k, void *buf, size_t len, const char *name, unsigned flags)
{
    zp_bkey_opts_t o = {.flags = flags};
    return zp_bkey_parse_opts(k, buf, len, name, &o);
}

int zp_bkey_open_opts(zp_bkey_t *k, const char *path, const zp_bkey_opts_t *o)
{
    memset(k, 0, sizeof *k);
    unsigned flags = o ? o->flags : 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return zp_err_set(-e, "%s: fstat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return zp_err_set(ZP_EFORMAT, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size < ZP_BVK_HEAD_BYTES + 4) {
        close(fd);
        return zp_err_set(ZP_EFORMAT, "%s: truncated: %lld bytes, a verifying key needs at least %u", path,
                          (long long)st.st_size, ZP_BVK_HEAD_BYTES + 4);
    }
    if ((uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return zp_err_set(ZP_ETOOBIG, "%s: %lld bytes do not fit in memory", path, (long long)st.st_size);
    }
    size_t len = (size_t)st.st_size;
    /* into / scan: read-only (nothing is converted in the mapping) */
    bool ro = (flags & ZP_BKEY_SCAN) || (o && o->into);
    if (o && o->into && !o->into_cap) {
        close(fd);
        return zp_err_set(-EINVAL, "%s: into without into_cap", path);
    }
    void *m = mmap(NULL, len, ro ? PROT_READ : PROT_READ | PROT_WRITE, ro ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        return zp_err_set(-e, "%s: mmap: %s", path, strerror(e));
    }
    /* the check record (bellman_record.c): trusted, the subgroup checks are skipped */
    zp_bkey_rec_t rec;
    bool use_rec = (flags & ZP_BKEY_USE_RECORD) && !(flags & (ZP_BKEY_NO_SUBGROUP | ZP_BKEY_SCAN));
    bool from_rec = false;
    if (use_rec) {
        zp_bkey_rec_init(&rec, o ? o->record_dir : NULL, &st, m, len, !(flags & ZP_BKEY_VK_ONLY), k->record_note,
                         sizeof k->record_note);
        use_rec = rec.usable;
        from_rec = use_rec && !(flags & ZP_BKEY_RECHECK) &&
                   zp_bkey_rec_match(&rec, k->record_note, sizeof k->record_note);
    }
    bool own;
    ctx_t c = {path, fd, (flags & ZP_BKEY_SCAN) ? NULL : open_pool(o, len, &own), NULL, NULL, (flags & ZP_BKEY_SCAN) != 0};
    if (!(flags & ZP_BKEY_SCAN)) {
        c.into = o ? o->into : NULL;
        c.cap = o ? o->into_cap : NULL;
    } else {
        own = false;
    }
    k->f.path = path;
    k->f.map = m;
    k->f.size = len;
    k->f.mapped = 1;
    char note[sizeof k->record_note];
    memcpy(note, k->record_note, sizeof note);
    int rc = parse(k, m, len, &c, (flags & (ZP_BKEY_VK_ONLY | ZP_BKEY_NO_SUBGROUP)) | (from_rec ? ZP_BKEY_NO_SUBGROUP : 0));
    if (own) zp_pool_destroy(&c.pool);
    struct stat st2;   /* the record matched the file as fstat saw it before the read: still so? */
    if (!rc && from_rec && (fstat(fd, &st2) || st2.st_size != st.st_size || st2.st_mtim.tv_sec != st.st_mtim.tv_sec ||
                            st2.st_mtim.tv_nsec != st.st_mtim.tv_nsec || st2.st_ctim.tv_sec != st.st_ctim.tv_sec ||
                            st2.st_ctim.tv_nsec != st.st_ctim.tv_nsec))
        rc = zp_err_set(-EAGAIN, "%s: changed while it was read (its check record no longer applies): open it again", path);
    if (!rc) {
        memcpy(k->record_note, note, sizeof note);
        if (from_rec) k->subgroup = ZP_BKEY_SG_RECORD;
        else if (use_rec) k->record_written = zp_bkey_rec_write(&rec, fd, k->record_note, sizeof k->record_note);
    }
    close(fd);
    if (rc) {
        munmap(m, len);
        memset(k, 0, sizeof *k);
    } else if (ro) {   /* the points are in the caller's memory (or were not read): nothing stays mapped */
        munmap(m, len);
        k->f.map = NULL;
        k->f.mapped = 0;
    }
    return rc;
}

int zp_bkey_open(zp_bkey_t *k, const char *path, unsigned flags)
{
    zp_bkey_opts_t o = {.flags = flags};
    return zp_bkey_open_opts(k, path, &o);
}

void zp_bkey_close(zp_bkey_t *k)
{
    if (k->f.mapped && k->f.map) munmap((void *)k->f.map, k->f.size);
    memset(k, 0, sizeof *k);
}

/* ---- writer ---- */

static int put(FILE *f, const void *p, size_t n, const char *path)
{
    if (fwrite(p, 1, n, f) != n) return zp_err_set(-EIO, "%s: write: %s", path, strerror(errno));
    return 0;
}

static int put_sec(FILE *f, const void *pts, uint64_t n, bool g2, const char *path, const char *field)
{
    if (n > UINT32_MAX) return zp_err_set(-EINVAL, "%s: %s: %llu points do not fit a u32 count", path, field,
                                          (unsigned long long)n);
    uint8_t cnt[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    int rc = put(f, cnt, 4, path);
    uint8_t buf[G2B];
    for (uint64_t i = 0; !rc && i < n; i++) {
        if (g2) zp_bls_g2_to_uncompressed(buf, &((const zp_g2a_bls12_381_t *)pts)[i]);
        else zp_bls_g1_to_uncompressed(buf, &((const zp_g1a_bls12_381_t *)pts)[i]);
        rc = put(f, buf, g2 ? G2B : G1B, path);
    }
    return rc;
}

int zp_bkey_write(const char *path, const zp_bkey_view_t *v, bool vk_only)
{
    FILE *f = fopen(path, "wb");
    if (!f) return zp_err_set(-errno, "%s: %s", path, strerror(errno));
    uint8_t b[G2B];
    int rc = 0;
    zp_bls_g1_to_uncompressed(b, &v->alpha_g1); rc = rc ? rc : put(f, b, G1B, path);
    zp_bls_g1_to_uncompressed(b, &v->beta_g1); rc = rc ? rc : put(f, b, G1B, path);
    zp_bls_g2_to_uncompressed(b, &v->beta_g2); rc = rc ? rc : put(f, b, G2B, path);
    zp_bls_g2_to_uncompressed(b, &v->gamma_g2); rc = rc ? rc : put(f, b, G2B, path);
    zp_bls_g1_to_uncompressed(b, &v->delta_g1); rc = rc ? rc : put(f, b, G1B, path);
    zp_bls_g2_to_uncompressed(b, &v->delta_g2); rc = rc ? rc : put(f, b, G2B, path);
    rc = rc ? rc : put_sec(f, v->ic, v->n_ic, false, path, "ic");
    if (!vk_only) {
        rc = rc ? rc : put_sec(f, v->h, v->n_h, false, path, "h");
        rc = rc ? rc : put_sec(f, v->l, v->n_l, false, path, "l");
        rc = rc ? rc : put_sec(f, v->a, v->n_a, false, path, "a");
        rc = rc ? rc : put_sec(f, v->b_g1, v->n_b_g1, false, path, "b_g1");
        rc = rc ? rc : put_sec(f, v->b_g2, v->n_b_g2, true, path, "b_g2");
    }
    if (fclose(f) && !rc) rc = zp_err_set(-EIO, "%s: close: %s", path, strerror(errno));
    if (rc) unlink(path);
    return rc;
}

/* ---- proof ---- */

void zp_bproof_write(uint8_t out[192], const zp_bproof_t *p)
{
    zp_g1a_bls12_381_compress(out, &p->a);
    zp_g2a_bls12_381_compress(out + 48, &p->b);
    zp_g1a_bls12_381_compress(out + 144, &p->c);
}

int zp_bproof_read(zp_bproof_t *p, const uint8_t in[192])
{
    int rc;
    if ((rc = zp_g1a_bls12_381_decompress(&p->a, in))) return rewrap(rc, "proof A");
    if ((rc = zp_g2a_bls12_381_decompress(&p->b, in + 48))) return rewrap(rc, "proof B");
    if ((rc = zp_g1a_bls12_381_decompress(&p->c, in + 144))) return rewrap(rc, "proof C");
    if (zp_g1a_bls12_381_is_inf(&p->a)) return zp_err_set(ZP_EFORMAT, "proof A: point at infinity");
    if (zp_g2a_bls12_381_is_inf(&p->b)) return zp_err_set(ZP_EFORMAT, "proof B: point at infinity");
    if (zp_g1a_bls12_381_is_inf(&p->c)) return zp_err_set(ZP_EFORMAT, "proof C: point at infinity");
    return 0;
}
