/* key.c - the proving key in memory: zp_g16_key_load / load_into / close, and the
 * verification key derived from it.
 *
 * Layout of the key memory (one block, every array 64-byte aligned, in this order):
 *   IC (n_public+1 G1) | A (n_vars G1) | B1 (n_vars G1) | C (n_vars-n_public-1 G1) |
 *   H (domain_size G1) | B2 (n_vars G2) | coefs (n_coefs x 48 bytes)
 * Points are the zkey's bytes copied unchanged (affine, Montgomery, LE; (0,0) = infinity);
 * zp_g16_key_load_inplace leaves the point arrays A, B1, C, H, B2 in the zkey's mapping at
 * any alignment (the MSMs read points by memcpy: session 18), IC where 8-byte aligned
 * (checked there; the zkey must stay open while the key is used), copies IC otherwise, then
 * drops the mapping's pages of what it copied (madvise DONTNEED), so nothing is resident
 * twice; its coefficients are checked but not decoded (k->coefs NULL,
 * k->coefs_raw the zkey's entries, read by synthesis where they are: session 17).
 * Coefficients keep the zkey's value (coef*R^2 mod r, "double Montgomery").
 * Checks done while loading (the zkey is untrusted input):
 *   - every coordinate canonical (< q) and every point on its curve (or (0,0)): all arrays.
 *     Measured cost (one core): ~40 ns per G1 and ~90 ns per G2 point on BN254, ~75 / ~185 ns
 *     on BLS12-381; at 2^16 BN254 constraints ~17 ms of checks + ~15 ms of copying (page
 *     faults included), ~5% of one proof. zp_g16_key_load_pool splits copy and checks over
 *     a pool;
 *   - alpha1, beta1, delta1, beta2, gamma2, delta2 and IC: also in the r-torsion subgroup (and,
 *     for the header points, not infinity);
 *   - coefs: matrix 0/1, row < domain_size, wire < n_vars, value < r.
 * Tests: tests/test_groth16.c */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "groth16_int.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

enum { K_IC, K_A, K_B1, K_C, K_H, K_B2, K_COEFS, K_N };

static size_t key_layout(const zp_zkey_t *z, const g16_curve_t *cv, size_t off[K_N])
{
    size_t g1 = cv->g1a_size, g2 = cv->g2a_size;
    size_t len[K_N] = {
        [K_IC] = ((size_t)z->n_public + 1) * g1,
        [K_A] = (size_t)z->n_vars * g1,
        [K_B1] = (size_t)z->n_vars * g1,
        [K_C] = ((size_t)z->n_vars - z->n_public - 1) * g1,
        [K_H] = (size_t)z->domain_size * g1,
        [K_B2] = (size_t)z->n_vars * g2,
        [K_COEFS] = (size_t)z->n_coefs * sizeof(struct zp_g16_coef),
    };
    size_t pos = 0;
    for (int i = 0; i < K_N; i++) {
        off[i] = pos;
        pos += ALIGN64(len[i]);
    }
    return pos;
}

size_t zp_g1a_size(zp_curve_id_t c)
{
    const g16_curve_t *cv = g16_curve(c);
    return cv ? cv->g1a_size : 0;
}

size_t zp_g2a_size(zp_curve_id_t c)
{
    const g16_curve_t *cv = g16_curve(c);
    return cv ? cv->g2a_size : 0;
}

size_t zp_g16_key_bytes(const zp_zkey_t *z)
{
    const g16_curve_t *cv = g16_curve(z->curve);
    if (!cv || z->n_vars < (uint64_t)z->n_public + 1) return 0;
    size_t off[K_N];
    return key_layout(z, cv, off) + 64;   /* + 64: room to align caller memory */
}

static int check_g1(const g16_curve_t *cv, const zp_zkey_t *z, const void *p, size_t n, bool sub, bool inf,
                    const char *what)
{
    size_t bad = cv->g1_check(p, n, sub, inf);
    if (bad == n) return 0;
    return zp_err_set(ZP_EFORMAT, "%s: %s[%zu] is not a valid G1 point (%s)", z->f.path ? z->f.path : "zkey",
                      what, bad, sub ? "canonical, on the curve, in the subgroup" : "canonical, on the curve");
}

static int check_g2(const g16_curve_t *cv, const zp_zkey_t *z, const void *p, size_t n, bool sub, bool inf,
                    const char *what)
{
    size_t bad = cv->g2_check(p, n, sub, inf);
    if (bad == n) return 0;
    return zp_err_set(ZP_EFORMAT, "%s: %s[%zu] is not a valid G2 point (%s)", z->f.path ? z->f.path : "zkey",
                      what, bad, sub ? "canonical, on the curve, in the subgroup" : "canonical, on the curve");
}

static void key_drop_pages(const zp_zkey_t *z, const void *p, size_t n);

/* The coefficients are decoded and checked on the pool (session 16: on one thread they were
 * half of the key load's "point checks, coefficient decode" phase at 2^18), each thread a
 * contiguous slice: the first bad entry of each slice is kept (atomic minimum, so the error
 * names the file's first bad one), rows out of order inside a slice or across a slice's edge
 * clear coefs_sorted. drop: the zkey's pages of the entries decoded so far go back as the
 * decoding goes (in-place loads of a mapped zkey), so the raw and the decoded coefficients
 * are never both resident. */
typedef struct {
    zp_g16_key_t *k;
    const zp_zkey_t *z;
    const g16_curve_t *cv;
    bool drop;
    bool raw;                    /* checked only, read where they are (k->coefs_raw) */
    atomic_size_t bad;           /* the first bad entry; SIZE_MAX: none */
    atomic_bool unsorted;
} coef_job_t;

static bool coef_decode(struct zp_g16_coef *c, const uint8_t *e, const zp_zkey_t *z, const g16_curve_t *cv)
{
    memcpy(&c->matrix, e, 4);
    memcpy(&c->row, e + 4, 4);
    memcpy(&c->wire, e + 8, 4);
    c->pad = 0;
    memcpy(&c->v, e + 12, sizeof c->v);
    return c->matrix <= 1 && c->row < z->domain_size && c->wire < z->n_vars && cv->fr_canonical(&c->v);
}

static void coef_run(void *arg, unsigned tid, unsigned nt)
{
    coef_job_t *j = arg;
    const zp_zkey_t *z = j->z;
    size_t esz = 12 + (size_t)z->n8r, lo, hi;
    zp_split(z->n_coefs, tid, nt, &lo, &hi);
    const uint8_t *base = z->coefs + lo * esz;
    bool unsorted = false;
    uint32_t prev = 0;
    for (size_t i = lo; i < hi; i++) {
        struct zp_g16_coef tmp, *c = j->raw ? &tmp : &j->k->coefs[i];
        if (!coef_decode(c, z->coefs + i * esz, z, j->cv)) {
            size_t cur = atomic_load(&j->bad);
            while (i < cur && !atomic_compare_exchange_weak(&j->bad, &cur, i)) {
            }
            return;
        }
        if (i > lo && c->row < prev) unsorted = true;
        prev = c->row;
        if (j->drop && !j->raw && (i + 1 - lo) % 8192 == 0) key_drop_pages(z, base, (i + 1 - lo) * esz);
    }
    if (unsorted) atomic_store(&j->unsorted, true);
}

static int load_coefs(zp_g16_key_t *k, const zp_zkey_t *z, const g16_curve_t *cv, bool drop, zp_pool_t *pool)
{
    /* in place (drop): the entries stay in the zkey, only checked (z->n8r is 32 on both curves) */
    bool raw = drop && 12 + (size_t)z->n8r == G16_RAW_COEF;
    coef_job_t j = {.k = k, .z = z, .cv = cv, .drop = drop, .raw = raw};
    atomic_init(&j.bad, SIZE_MAX);
    atomic_init(&j.unsorted, false);
    zp_pool_t *use = pool;
    unsigned nt = use ? zp_pool_size(use) : 1;
    zp_pool_run(use, coef_run, &j);
    size_t bad = atomic_load(&j.bad);
    if (bad != SIZE_MAX) {
        struct zp_g16_coef c;
        (void)coef_decode(&c, z->coefs + bad * (12 + (size_t)z->n8r), z, cv);
        return zp_err_set(ZP_EFORMAT,
                          "%s: coefficient %zu (matrix %u, row %u, wire %u) out of range (matrix 0/1, row < %u, "
                          "wire < %u, value < r)", z->f.path ? z->f.path : "zkey", bad, c.matrix, c.row, c.wire,
                          z->domain_size, z->n_vars);
    }
    if (raw) {
        k->coefs = NULL;
        k->coefs_raw = z->coefs;
    }
    /* sorted: no slice out of order, nor any slice's first row below its predecessor's last */
    bool sorted = !atomic_load(&j.unsorted);
    for (unsigned t = 1; sorted && t < nt; t++) {
        size_t lo, hi;
        zp_split(z->n_coefs, t, nt, &lo, &hi);
        if (lo > 0 && lo < z->n_coefs && g16_coef_row(k, lo) < g16_coef_row(k, lo - 1)) sorted = false;
    }
    k->coefs_sorted = sorted;
    return 0;
}

/* the point arrays are copied and checked in parallel: each thread takes the same slice of
 * every array; the first bad index of each array is kept (atomic minimum) */
enum { L_N = 6 };
typedef struct {
    const g16_curve_t *cv;
    struct {
        void *dst;
        const uint8_t *src;
        size_t n;
        const char *what;
        bool g2, subgroup;
        atomic_size_t bad;
    } arr[L_N];
} load_job_t;

static void load_run(void *arg, unsigned tid, unsigned nt)
{
    load_job_t *j = arg;
    for (int i = 0; i < L_N; i++) {
        size_t lo, hi, psz = j->arr[i].g2 ? j->cv->g2a_size : j->cv->g1a_size;
        zp_split(j->arr[i].n, tid, nt, &lo, &hi);
        if (lo == hi) continue;
        uint8_t *dst = (uint8_t *)j->arr[i].dst + lo * psz;
        if (j->arr[i].dst != (const void *)j->arr[i].src)   /* in place: checked where it is */
            memcpy(dst, j->arr[i].src + lo * psz, (hi - lo) * psz);
        size_t bad = (j->arr[i].g2 ? j->cv->g2_check : j->cv->g1_check)(dst, hi - lo, j->arr[i].subgroup, true);
        if (bad < hi - lo) {
            size_t cur = atomic_load(&j->arr[i].bad);
            while (lo + bad < cur && !atomic_compare_exchange_weak(&j->arr[i].bad, &cur, lo + bad)) {
            }
        }
    }
}

static int load_result(load_job_t *j, const zp_zkey_t *z)
{
    for (int i = 0; i < L_N; i++) {
        size_t bad = atomic_load(&j->arr[i].bad);
        if (bad != SIZE_MAX)
            return zp_err_set(ZP_EFORMAT, "%s: %s[%zu] is not a valid %s point (%s)", z->f.path ? z->f.path : "zkey",
                              j->arr[i].what, bad, j->arr[i].g2 ? "G2" : "G1",
                              j->arr[i].subgroup ? "canonical, on the curve, in the subgroup" : "canonical, on the curve");
    }
    return 0;
}

/* in place: every point array whose zkey bytes are 8-byte aligned is used where it is (the
 * zkey's mapping); the others are copied into mem as usual (mem stays sized for all, its
 * unused parts are never touched) */
/* in place, for a zkey this process mapped: drop the mapping's pages of [p, p+n) once their
 * bytes have been copied or decoded (the whole pages inside it), so they are not resident
 * twice; a later read would fault them in again from the file */
static void key_drop_pages(const zp_zkey_t *z, const void *p, size_t n)
{
    if (z->f.mapped) g16_drop_pages(p, n);
}

void g16_drop_pages(const void *p, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0 || !p || n == 0) return;
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~((uintptr_t)pg - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);   /* advice: failure is harmless */
}

static int key_load_into(zp_g16_key_t *k, const zp_zkey_t *z, void *mem, size_t len, zp_pool_t *pool,
                         bool inplace)
{
    const g16_curve_t *cv = g16_curve(z->curve);
    if (!cv) return ZP_ECURVE;
    const char *name = z->f.path ? z->f.path : "zkey";
    if (z->n8r != 32 || z->n8q * 2 != cv->g1a_size)
        return zp_err_set(ZP_EFORMAT, "%s: field sizes n8q %u / n8r %u do not match %s", name, z->n8q, z->n8r, cv->name);
    if (z->n_vars < (uint64_t)z->n_public + 1 || z->domain_size != ((uint64_t)1 << z->log_n) ||
        z->domain_size < (uint64_t)z->n_public + 1)
        return zp_err_set(ZP_EFORMAT, "%s: inconsistent sizes (nVars %u, nPublic %u, domain %u)", name, z->n_vars,
                          z->n_public, z->domain_size);
    size_t off[K_N];
    size_t need = key_layout(z, cv, off);
    uint8_t *base = (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    if (!mem || len < need || (size_t)(base - (uint8_t *)mem) > len - need)
        return zp_err_set(ZP_ETOOBIG, "%s: key needs %zu bytes (+ alignment), %zu given", name, need, len);

    memset(k, 0, sizeof *k);
    k->curve = z->curve;
    k->n_vars = z->n_vars;
    k->n_public = z->n_public;
    k->domain_size = z->domain_size;
    k->log_n = z->log_n;
    k->n_coefs = z->n_coefs;
    k->mem = mem;
    k->mem_len = len;
    memcpy(&k->alpha1, z->alpha1, cv->g1a_size);
    memcpy(&k->beta1, z->beta1, cv->g1a_size);
    memcpy(&k->delta1, z->delta1, cv->g1a_size);
    memcpy(&k->beta2, z->beta2, cv->g2a_size);
    memcpy(&k->gamma2, z->gamma2, cv->g2a_size);
    memcpy(&k->delta2, z->delta2, cv->g2a_size);
    /* in place: the MSMs read their point arrays at any alignment (lib/msm S(pt_load), the
     * checks likewise: session 18), so A, B1, C, H and B2 are used where the zkey has them
     * whatever their offset; IC (a few points, read as typed values by the verification key
     * and the public inputs' sum) only when 8-byte aligned, else copied */
#define KEY_ARR(src, o) (inplace ? (void *)(uintptr_t)(src) : (void *)(base + off[o]))
    k->ic = inplace && !((uintptr_t)z->ic % 8) ? (void *)(uintptr_t)z->ic : (void *)(base + off[K_IC]);
    k->a = KEY_ARR(z->points_a, K_A);
    k->b1 = KEY_ARR(z->points_b1, K_B1);
    k->c = KEY_ARR(z->points_c, K_C);
    k->h = KEY_ARR(z->points_h, K_H);
    k->b2 = KEY_ARR(z->points_b2, K_B2);
#undef KEY_ARR
    k->coefs = (struct zp_g16_coef *)(base + off[K_COEFS]);
    size_t nc = (size_t)z->n_vars - z->n_public - 1;
    load_job_t j;
    memset(&j, 0, sizeof j);
    j.cv = cv;
    const struct { void *dst; const uint8_t *src; size_t n; const char *what; bool g2, subgroup; unsigned moved; } arr[L_N] = {
        {k->ic, z->ic, (size_t)z->n_public + 1, "IC", false, true, ZP_ZKEY_MOVED_IC},
        {k->a, z->points_a, z->n_vars, "pointsA", false, false, ZP_ZKEY_MOVED_A},
        {k->b1, z->points_b1, z->n_vars, "pointsB1", false, false, ZP_ZKEY_MOVED_B1},
        {k->c, z->points_c, nc, "pointsC", false, false, ZP_ZKEY_MOVED_C},
        {k->h, z->points_h, z->domain_size, "pointsH", false, false, ZP_ZKEY_MOVED_H},
        {k->b2, z->points_b2, z->n_vars, "pointsB2", true, false, ZP_ZKEY_MOVED_B2},
    };
    for (int i = 0; i < L_N; i++) {
        j.arr[i].dst = arr[i].dst;
        j.arr[i].src = arr[i].src;
        j.arr[i].n = arr[i].n;
        j.arr[i].what = arr[i].what;
        j.arr[i].g2 = arr[i].g2;
        j.arr[i].subgroup = arr[i].subgroup;
        atomic_init(&j.arr[i].bad, SIZE_MAX);
    }
    zp_pool_run(pool, load_run, &j);
    /* in place: B2's clean file pages (not moved by zp_zkey_align_points) dropped once checked,
     * read again from the page cache by the last MSM (the finalizer's), so they are not
     * resident during synthesis; the G1 arrays' pages kept (their MSMs come right after
     * synthesis: dropping them all and faulting them back cost ~4% of a 2^16 proof, keeping B2
     * too +8 MiB of peak RSS: session 18); moved arrays are the process's own pages and stay */
    for (int i = 0; inplace && i < L_N; i++)
        if (arr[i].g2 && arr[i].dst == (const void *)arr[i].src && !(z->moved & arr[i].moved))
            key_drop_pages(z, arr[i].src, arr[i].n * cv->g2a_size);
    zp_trace_mark("key: point arrays checked (canonical, on the curve)");

    int rc;
    if ((rc = check_g1(cv, z, &k->alpha1, 1, true, false, "alpha1")) ||
        (rc = check_g1(cv, z, &k->beta1, 1, true, false, "beta1")) ||
        (rc = check_g1(cv, z, &k->delta1, 1, true, false, "delta1")) ||
        (rc = check_g2(cv, z, &k->beta2, 1, true, false, "beta2")) ||
        (rc = check_g2(cv, z, &k->gamma2, 1, true, false, "gamma2")) ||
        (rc = check_g2(cv, z, &k->delta2, 1, true, false, "delta2")) || (rc = load_result(&j, z)))
        goto fail;
    zp_trace_mark("key: header points (subgroup)");
    if ((rc = load_coefs(k, z, cv, inplace, pool))) goto fail;
    if (inplace) {
        /* copied arrays (IC where misaligned): the mapping's pages are dead */
        for (int i = 0; i < L_N; i++)
            if (arr[i].dst != (const void *)arr[i].src)
                key_drop_pages(z, arr[i].src, arr[i].n * (arr[i].g2 ? cv->g2a_size : cv->g1a_size));
        if (!k->coefs_raw) key_drop_pages(z, z->coefs, (size_t)z->n_coefs * (12 + (size_t)z->n8r));   /* raw: read by synthesis, dropped after it */
    }
    return 0;
fail:
    memset(k, 0, sizeof *k);
    return rc;
}

int zp_g16_key_load_into(zp_g16_key_t *k, const zp_zkey_t *z, void *mem, size_t len)
{
    return key_load_into(k, z, mem, len, NULL, false);
}

static int key_load_alloc(zp_g16_key_t *k, const zp_zkey_t *z, zp_pool_t *pool, bool inplace)
{
    size_t len = zp_g16_key_bytes(z);
    if (!len) return g16_curve(z->curve) ? zp_err_set(ZP_EFORMAT, "zkey: nVars < nPublic + 1") : ZP_ECURVE;
    void *mem = g16_alloc(len);
    if (!mem) return zp_err_set(-ENOMEM, "proving key: cannot allocate %zu bytes", len);
    int rc = key_load_into(k, z, mem, len, pool, inplace);
    if (rc) {
        free(mem);
        return rc;
    }
    k->mem_owned = 1;
    return 0;
}

int zp_g16_key_load_pool(zp_g16_key_t *k, const zp_zkey_t *z, void *mem, size_t len, zp_pool_t *pool)
{
    if (mem) return key_load_into(k, z, mem, len, pool, false);
    return key_load_alloc(k, z, pool, false);
}

int zp_g16_key_load_inplace(zp_g16_key_t *k, const zp_zkey_t *z, zp_pool_t *pool)
{
    return key_load_alloc(k, z, pool, true);
}

int zp_g16_key_load(zp_g16_key_t *k, const zp_zkey_t *z)
{
    return zp_g16_key_load_pool(k, z, NULL, 0, NULL);
}

void zp_g16_key_close(zp_g16_key_t *k)
{
    if (!k) return;
    if (k->mem_owned) free(k->mem);
    memset(k, 0, sizeof *k);
}

int zp_g16_vk_from_key(zp_g16_vk_t *vk, const zp_g16_key_t *k)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    memset(vk, 0, sizeof *vk);
    vk->ic = calloc((size_t)k->n_public + 1, sizeof *vk->ic);
    if (!vk->ic) return zp_err_set(-ENOMEM, "verification key: out of memory");
    vk->curve = k->curve;
    vk->n_public = k->n_public;
    vk->alpha1 = k->alpha1;
    vk->beta2 = k->beta2;
    vk->gamma2 = k->gamma2;
    vk->delta2 = k->delta2;
    for (size_t i = 0; i <= k->n_public; i++) memcpy(&vk->ic[i], (const uint8_t *)k->ic + i * cv->g1a_size, cv->g1a_size);
    return 0;
}

int zp_g16_vk_from_json(zp_g16_vk_t *vk, const zp_vk_json_t *j)
{
    const g16_curve_t *cv = g16_curve(j->curve);
    if (!cv) return ZP_ECURVE;
    return cv->vk_from_json(vk, j);
}

void zp_g16_vk_free(zp_g16_vk_t *vk)
{
    if (!vk) return;
    free(vk->ic);
    vk->ic = NULL;
}

int zp_g16_vk_from_zkey(zp_g16_vk_t *vk, const zp_zkey_t *z)
{
    const g16_curve_t *cv = g16_curve(z->curve);
    if (!cv) return ZP_ECURVE;
    const char *name = z->f.path ? z->f.path : "zkey";
    if (z->n8q * 2 != cv->g1a_size) return zp_err_set(ZP_EFORMAT, "%s: n8q %u does not match %s", name, z->n8q, cv->name);
    memset(vk, 0, sizeof *vk);
    vk->curve = z->curve;
    vk->n_public = z->n_public;
    memcpy(&vk->alpha1, z->alpha1, cv->g1a_size);
    memcpy(&vk->beta2, z->beta2, cv->g2a_size);
    memcpy(&vk->gamma2, z->gamma2, cv->g2a_size);
    memcpy(&vk->delta2, z->delta2, cv->g2a_size);
    vk->ic = calloc((size_t)z->n_public + 1, sizeof *vk->ic);
    if (!vk->ic) return zp_err_set(-ENOMEM, "verification key: out of memory");
    for (size_t i = 0; i <= z->n_public; i++) memcpy(&vk->ic[i], z->ic + i * cv->g1a_size, cv->g1a_size);
    int rc = 0;
    if (cv->g1_check(&vk->alpha1, 1, true, false) != 1) rc = zp_err_set(ZP_EFORMAT, "%s: alpha1 is not a valid G1 point", name);
    else if (cv->g2_check(&vk->beta2, 1, true, false) != 1) rc = zp_err_set(ZP_EFORMAT, "%s: beta2 is not a valid G2 point", name);
    else if (cv->g2_check(&vk->gamma2, 1, true, false) != 1) rc = zp_err_set(ZP_EFORMAT, "%s: gamma2 is not a valid G2 point", name);
    else if (cv->g2_check(&vk->delta2, 1, true, false) != 1) rc = zp_err_set(ZP_EFORMAT, "%s: delta2 is not a valid G2 point", name);
    else
        for (size_t i = 0; i <= z->n_public && !rc; i++)
            if (cv->g1_check(&vk->ic[i], 1, true, true) != 1) rc = zp_err_set(ZP_EFORMAT, "%s: IC[%zu] is not a valid G1 point", name, i);
    if (rc) zp_g16_vk_free(vk);
    return rc;
}

/* ---- a key at offsets inside a mapped block (shm/keystore.c) ---- */
void zp_g16_key_offsets(zp_g16_key_offs_t *o, const zp_g16_key_t *k, const void *base)
{
    const uint8_t *b = base;
    o->ic = (uint64_t)((const uint8_t *)k->ic - b);
    o->a = (uint64_t)((const uint8_t *)k->a - b);
    o->b1 = (uint64_t)((const uint8_t *)k->b1 - b);
    o->c = (uint64_t)((const uint8_t *)k->c - b);
    o->h = (uint64_t)((const uint8_t *)k->h - b);
    o->b2 = (uint64_t)((const uint8_t *)k->b2 - b);
    o->coefs = (uint64_t)((const uint8_t *)k->coefs - b);
    o->dens_a = k->compact ? (uint64_t)((const uint8_t *)k->dens_a - b) : 0;
    o->dens_b = k->compact ? (uint64_t)((const uint8_t *)k->dens_b - b) : 0;
    o->pfx_a = k->compact ? (uint64_t)((const uint8_t *)k->pfx_a - b) : 0;
    o->pfx_b = k->compact ? (uint64_t)((const uint8_t *)k->pfx_b - b) : 0;
}

/* a compacted query's bitmap and prefix counts (untrusted): bits past n_vars clear, pfx[0] = 0,
 * pfx[i+1] = pfx[i] + popcount(word i), pfx[words] = total (what gathers index with) */
static int check_dens(const uint64_t *d, const uint32_t *pfx, size_t n_vars, uint32_t total, const char *what)
{
    size_t words = (n_vars + 63) / 64;
    if (n_vars % 64 && (d[words - 1] >> (n_vars % 64)))
        return zp_err_set(ZP_EFORMAT, "key block: density %s has bits set past the %zu wires", what, n_vars);
    uint64_t run = 0;
    for (size_t i = 0; i <= words; i++) {
        if (pfx[i] != run)
            return zp_err_set(ZP_EFORMAT, "key block: density %s: prefix count [%zu] is %u, the bitmap says %llu", what,
                              i, pfx[i], (unsigned long long)run);
        if (i < words) run += (uint64_t)__builtin_popcountll(d[i]);
    }
    if (run != total)
        return zp_err_set(ZP_EFORMAT, "key block: density %s has %llu bits set, the key has %u points", what,
                          (unsigned long long)run, total);
    return 0;
}

static int bind_arr(void **dst, uint8_t *base, size_t len, uint64_t off, size_t n, size_t esz, const char *what)
{
    /* n * esz cannot overflow: n < 2^33, esz <= 192 */
    uint64_t bytes = (uint64_t)n * esz;
    if (off > len || bytes > len - off || (((uintptr_t)base + off) & 63))
        return zp_err_set(ZP_EFORMAT, "key block: %s at offset %llu (+%llu bytes) outside the %zu-byte block or misaligned",
                          what, (unsigned long long)off, (unsigned long long)bytes, len);
    *dst = base + off;
    return 0;
}

int zp_g16_key_bind(zp_g16_key_t *k, const zp_g16_key_offs_t *o, void *base, size_t len)
{
    const g16_curve_t *cv = g16_curve(k->curve);
    if (!cv) return ZP_ECURVE;
    if (k->conv > 1 || (k->conv == 1 && k->curve != ZP_CURVE_BLS12_381))   /* zp_g16_conv_id_t */
        return zp_err_set(ZP_EFORMAT, "key block: conventions id %u on %s (known: 0 snarkjs, 1 bellman on BLS12-381)",
                          k->conv, cv->name);
    if (k->log_n > 32 || k->n_vars < (uint64_t)k->n_public + 1 || k->domain_size != ((uint64_t)1 << k->log_n) ||
        k->domain_size < (uint64_t)k->n_public + 1)
        return zp_err_set(ZP_EFORMAT, "key block: inconsistent sizes (nVars %u, nPublic %u, domain %u, log %u)",
                          k->n_vars, k->n_public, k->domain_size, k->log_n);
    uint8_t *b = base;
    size_t g1 = cv->g1a_size, g2 = cv->g2a_size;
    void *coefs = NULL, *da = NULL, *db = NULL, *pa = NULL, *pb = NULL;
    int rc;
    if (k->compact != (k->conv == 1))   /* bellman keys are kept compacted, zkeys never are */
        return zp_err_set(ZP_EFORMAT, "key block: compact %u with conventions id %u (bellman keys are compacted, "
                          "snarkjs keys are not)", k->compact, k->conv);
    if (k->compact > 1 || (k->compact && (k->n_a > k->n_vars || k->n_b > k->n_vars)))
        return zp_err_set(ZP_EFORMAT, "key block: compact %u with %u / %u points in A / B for %u wires", k->compact,
                          k->n_a, k->n_b, k->n_vars);
    size_t na = zp_g16_key_n_a(k), nb = zp_g16_key_n_b(k), words = ((size_t)k->n_vars + 63) / 64;
    if ((rc = bind_arr(&k->ic, b, len, o->ic, (size_t)k->n_public + 1, g1, "IC")) ||
        (rc = bind_arr(&k->a, b, len, o->a, na, g1, "pointsA")) ||
        (rc = bind_arr(&k->b1, b, len, o->b1, nb, g1, "pointsB1")) ||
        (rc = bind_arr(&k->c, b, len, o->c, (size_t)k->n_vars - k->n_public - 1, g1, "pointsC")) ||
        (rc = bind_arr(&k->h, b, len, o->h, k->domain_size, g1, "pointsH")) ||
        (rc = bind_arr(&k->b2, b, len, o->b2, nb, g2, "pointsB2")) ||
        (rc = bind_arr(&coefs, b, len, o->coefs, k->n_coefs, sizeof(struct zp_g16_coef), "coefs")))
        goto fail;
    if (k->compact &&
        ((rc = bind_arr(&da, b, len, o->dens_a, words, 8, "density A")) ||
         (rc = bind_arr(&db, b, len, o->dens_b, words, 8, "density B")) ||
         (rc = bind_arr(&pa, b, len, o->pfx_a, words + 1, 4, "prefix counts A")) ||
         (rc = bind_arr(&pb, b, len, o->pfx_b, words + 1, 4, "prefix counts B")) ||
         (rc = check_dens(da, pa, k->n_vars, k->n_a, "A")) || (rc = check_dens(db, pb, k->n_vars, k->n_b, "B"))))
        goto fail;
    k->dens_a = da;
    k->dens_b = db;
    k->pfx_a = pa;
    k->pfx_b = pb;
    k->coefs = coefs;
    uint32_t prev = 0;
    k->coefs_sorted = 1;
    for (uint32_t i = 0; i < k->n_coefs; i++) {
        const struct zp_g16_coef *c = &k->coefs[i];
        if (c->matrix > 1 || c->row >= k->domain_size || c->wire >= k->n_vars) {
            rc = zp_err_set(ZP_EFORMAT, "key block: coefficient %u (matrix %u, row %u, wire %u) out of range", i,
                            c->matrix, c->row, c->wire);
            goto fail;
        }
        if (c->row < prev) k->coefs_sorted = 0;
        prev = c->row;
    }
    k->mem = base;
    k->mem_len = len;
    k->mem_owned = 0;
    return 0;
fail:
    k->ic = k->a = k->b1 = k->c = k->h = k->b2 = NULL;
    k->coefs = NULL;
    k->dens_a = k->dens_b = NULL;
    k->pfx_a = k->pfx_b = NULL;
    return rc;
}
