/* test_msm.c - unit tests of lib/msm: every MSM equals the naive sum of scalar
 * multiplications (lib/ec), for G1/G2 of BN254 and BLS12-381, sizes 0..~1000 and one size
 * that splits points across tasks, with 1, 2 and 3 threads. Inputs mix random scalars with
 * 0, 1, r-1, small values, unreduced 256-bit values and repeated scalars (conflicting buckets), and random points with
 * infinity, repeated points and negated points (P + P and P + (-P) inside a bucket).
 * The multi-MSM (several point sets over one scalar array) is checked on witness-like
 * scalars (mostly 0/1, small bit lengths), all-ones, all-small and dense inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "lib/msm/msm.h"
#include "lib/msm/msm_int.h"
#include "lib/util/util.h"

#define TEST_SEED 0x243f6a8885a308d3ULL
#include "tests/test_common.h"

/* scalar i of a test vector: a mix of special and random values below r, and values around
 * the GLV split's bounds (2^128, r - 2^128, lambda) and the GLS split's (2^gb, r - 2^gb, mu,
 * gb = zp_gls_<C>_bits) */
static void pick_scalar(zp_scalar_t *k, size_t i, const zp_scalar_t *r, const zp_scalar_t *rep,
                        const zp_scalar_t *lam, const zp_scalar_t *mu, unsigned gb)
{
    memset(k, 0, sizeof *k);
    switch (rnd64() % 18) {
    case 0: break;                                           /* 0 */
    case 1: k->l[0] = 1; break;                              /* 1 */
    case 2:                                                  /* r - 1 */
        *k = *r;
        k->l[0] -= 1;
        break;
    case 3: k->l[0] = rnd64() % 1000; break;                 /* small */
    case 4: *k = *rep; break;                                /* repeated: same buckets */
    case 5:                                                  /* unreduced, up to 2^256-1 */
        for (int j = 0; j < 4; j++) k->l[j] = rnd64();
        break;
    case 10:                                                 /* 2^128 +- small */
        if (rnd64() & 1) {
            k->l[0] = ~0ULL - rnd64() % 4;
            k->l[1] = ~0ULL;
        } else {
            k->l[0] = rnd64() % 4;
            k->l[2] = 1;
        }
        break;
    case 11:                                                 /* r - 2^128 +- small */
        *k = *r;
        k->l[2] -= 1;
        k->l[0] += rnd64() % 4 - 2;                          /* r's limb 0 is odd and > 2 */
        break;
    case 12:                                                 /* r - small (-1, -2, ...) */
        *k = *r;
        k->l[0] -= 1 + rnd64() % 1000;
        break;
    case 13:                                                 /* lambda + small */
        *k = *lam;
        k->l[0] += rnd64() % 4;
        break;
    case 14:                                                 /* 2^gb - 2 .. 2^gb + 1 */
        k->l[gb / 64] = 1ULL << (gb % 64);
        if (rnd64() & 1) {
            k->l[0] += rnd64() % 2;
        } else {                                             /* 2^gb - 1 or - 2: borrow up */
            uint64_t d = 1 + rnd64() % 2;
            for (unsigned j = 0; j <= gb / 64; j++) {
                uint64_t v = k->l[j] - d;
                d = k->l[j] < d;
                k->l[j] = v;
            }
        }
        break;
    case 15:                                                 /* r - 2^gb +- small */
        *k = *r;
        if (gb % 64 == 0) k->l[gb / 64] -= 1;
        else k->l[gb / 64] -= 1ULL << (gb % 64);             /* r's limb gb/64 holds it: both curves */
        k->l[0] += rnd64() % 4 - 2;
        break;
    case 16:                                                 /* mu + small */
        *k = *mu;
        k->l[0] += rnd64() % 4;
        break;
    case 17: {                                               /* 64..191 bits */
        unsigned b = 64 + (unsigned)(rnd64() % 128);
        for (unsigned j = 0; j < 4; j++) k->l[j] = 64 * j >= b ? 0 : 64 * (j + 1) <= b ? rnd64() : rnd64() >> (64 * (j + 1) - b);
        break;
    }
    default:
        for (int j = 0; j < 4; j++) k->l[j] = rnd64();
        k->l[3] &= r->l[3] >> 1;                             /* < r */
        break;
    }
    (void)i;
}

#define MSM_TESTS(G, C, FQ)                                                                    \
    static void naive_##G##_##C(zp_##G##_##C##_t *out, const zp_##G##a_##C##_t *p,             \
                                const zp_scalar_t *k, size_t n)                                \
    {                                                                                          \
        zp_##G##_##C##_set_inf(out);                                                           \
        for (size_t i = 0; i < n; i++) {                                                       \
            zp_##G##_##C##_t t, u;                                                             \
            zp_##G##_##C##_from_affine(&t, &p[i]);                                             \
            zp_##G##_##C##_mul(&u, &t, &k[i]);                                                 \
            zp_##G##_##C##_add(out, out, &u);                                                  \
        }                                                                                      \
    }                                                                                          \
    /* n points: a few random multiples of G, then sums, negations, repeats and infinity */    \
    static void points_##G##_##C(zp_##G##a_##C##_t *pa, size_t n)                             \
    {                                                                                          \
        zp_##G##_##C##_t *pj = malloc((n + 1) * sizeof *pj), g;                                \
        zp_##FQ##_t *scr = malloc((n + 1) * sizeof *scr);                                      \
        zp_##G##a_##C##_t ga;                                                                  \
        zp_##G##_##C##_generator(&ga);                                                         \
        zp_##G##_##C##_from_affine(&g, &ga);                                                   \
        for (size_t i = 0; i < n; i++) {                                                       \
            if (i < 4) {                                                                       \
                zp_scalar_t k = {{rnd64(), rnd64(), rnd64(), rnd64() >> 4}};                   \
                zp_##G##_##C##_mul(&pj[i], &g, &k);                                            \
            } else {                                                                           \
                zp_##G##_##C##_add(&pj[i], &pj[i - 1], &pj[rnd64() % 4]);                      \
            }                                                                                  \
        }                                                                                      \
        zp_##G##_##C##_batch_to_affine(pa, pj, n, scr);                                        \
        for (size_t i = 4; i < n; i++) {                                                       \
            unsigned sel = (unsigned)(rnd64() % 16);                                           \
            if (sel == 0) memset(&pa[i], 0, sizeof pa[i]);          /* infinity */              \
            else if (sel == 1) pa[i] = pa[rnd64() % i];              /* repeated */             \
            else if (sel == 2) zp_##G##a_##C##_neg(&pa[i], &pa[rnd64() % i]); /* negated */     \
        }                                                                                      \
        free(pj);                                                                              \
        free(scr);                                                                             \
    }                                                                                          \
    static void test_##G##_##C(zp_pool_t **pools, unsigned npools, const size_t *sizes,        \
                               size_t nsizes)                                                  \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        for (size_t si = 0; si < nsizes; si++) {                                               \
            size_t n = sizes[si];                                                              \
            zp_##G##a_##C##_t *pa = malloc((n + 1) * sizeof *pa);                              \
            zp_scalar_t *k = malloc((n + 1) * sizeof *k), rep;                                 \
            for (int j = 0; j < 4; j++) rep.l[j] = rnd64();                                    \
            rep.l[3] &= r->l[3] >> 1;                                                          \
            points_##G##_##C(pa, n);                                                           \
            for (size_t i = 0; i < n; i++) pick_scalar(&k[i], i, r, &rep, &zp_glv_##C##_lambda, &zp_gls_##C##_mu, zp_gls_##C##_bits);                     \
            /* the worst case for bucket conflicts: every scalar and point equal */            \
            if (si == nsizes - 1 && n > 8)                                                     \
                for (size_t i = 0; i < n / 4; i++) {                                           \
                    k[i] = rep;                                                                \
                    pa[i] = pa[n - 1];                                                         \
                }                                                                              \
            zp_##G##_##C##_t want, got;                                                        \
            naive_##G##_##C(&want, pa, k, n);                                                  \
            for (unsigned pi = 0; pi < npools; pi++) {                                         \
                unsigned nt = zp_pool_size(pools[pi]);                                         \
                size_t sz = zp_msm_##G##_##C##_scratch_size(n, nt);                            \
                void *scr = NULL;                                                              \
                if (posix_memalign(&scr, 64, sz ? sz : 64)) abort();                           \
                zp_msm_##G##_##C(&got, pa, k, n, scr, pools[pi]);                              \
                if (!zp_##G##_##C##_eq(&got, &want)) {                                         \
                    fprintf(stderr, "msm %s n=%zu threads=%u: wrong sum\n", #G "_" #C, n, nt);  \
                    fails++;                                                                   \
                }                                                                              \
                free(scr);                                                                     \
                /* without the endomorphism, forced windows with and without it, the           \
                 * 4-dimensional split (BLS12-381 G2's default from 2^17 points; on G1 it    \
                 * means the GLV one) with and without a forced window, and the 2-dim one */   \
                for (int mode = 0; mode < 6 && pi < 2; mode++) {                               \
                    zp_msm_opts_t o = {.no_endo = mode == 0 || mode == 2,                      \
                                       .c = mode == 1 || mode == 2 || mode == 4 ? 3 + (unsigned)((n + mode) % 7) : 0,\
                                       .dim = mode == 3 || mode == 4 ? 4 : mode == 5 ? 2 : 0};  \
                    sz = zp_msm_##G##_##C##_ex_scratch_size(n, 1, nt, &o);                     \
                    if (posix_memalign(&scr, 64, sz ? sz : 64)) abort();                       \
                    const zp_##G##a_##C##_t *pp = pa;                                          \
                    zp_msm_##G##_##C##_multi_ex(&got, &pp, 1, k, n, scr, pools[pi], &o);       \
                    if (!zp_##G##_##C##_eq(&got, &want)) {                                     \
                        fprintf(stderr, "msm %s n=%zu threads=%u endo=%d dim=%u c=%u: wrong sum\n", \
                                #G "_" #C, n, nt, !o.no_endo, o.dim, o.c);                     \
                        fails++;                                                               \
                    }                                                                          \
                    free(scr);                                                                 \
                }                                                                              \
            }                                                                                  \
            /* all scalars 1: the plain sum; all zero: infinity */                             \
            if (n > 0 && n < 300) {                                                            \
                for (size_t i = 0; i < n; i++) {                                               \
                    memset(&k[i], 0, sizeof k[i]);                                             \
                    k[i].l[0] = 1;                                                             \
                }                                                                              \
                naive_##G##_##C(&want, pa, k, n);                                              \
                void *scr = NULL;                                                              \
                if (posix_memalign(&scr, 64, zp_msm_##G##_##C##_scratch_size(n, 1))) abort();  \
                zp_msm_##G##_##C(&got, pa, k, n, scr, NULL);                                   \
                CHECK(zp_##G##_##C##_eq(&got, &want));                                         \
                memset(k, 0, n * sizeof *k);                                                   \
                zp_msm_##G##_##C(&got, pa, k, n, scr, NULL);                                   \
                CHECK(zp_##G##_##C##_is_inf(&got));                                            \
                free(scr);                                                                     \
            }                                                                                  \
            free(pa);                                                                          \
            free(k);                                                                           \
        }                                                                                      \
    }

/* witness-like scalars: mostly 0 and 1, some small (bit-length classes), a few full */
static void pick_sparse(zp_scalar_t *k, const zp_scalar_t *r)
{
    memset(k, 0, sizeof *k);
    unsigned sel = (unsigned)(rnd64() % 20);
    if (sel < 8) return;                                      /* 0 */
    if (sel < 14) { k->l[0] = 1; return; }                    /* 1 */
    if (sel < 16) { k->l[0] = rnd64() >> (rnd64() % 64); return; } /* < 2^64, any length */
    if (sel < 18) {                                           /* < 2^128 */
        k->l[0] = rnd64();
        k->l[1] = rnd64() >> (rnd64() % 64);
        return;
    }
    for (int j = 0; j < 4; j++) k->l[j] = rnd64();
    k->l[3] &= r->l[3] >> 1;
}

/* scratch of sz bytes with a canary after it (checked by canary_intact: the MSM wrote nothing
 * past the size the scratch-size function gave) */
enum { SCRATCH_CANARY = 1 << 16 };   /* a whole thread's working set past the end, at small sizes */
static uint8_t *scratch_canary(size_t sz)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, sz + SCRATCH_CANARY)) abort();
    memset((uint8_t *)p + sz, 0xa5, SCRATCH_CANARY);
    return p;
}

static bool canary_intact(const uint8_t *p, size_t sz)
{
    for (size_t b = 0; b < SCRATCH_CANARY; b++)
        if (p[sz + b] != 0xa5) return false;
    return true;
}

/* the multi-MSM (several point sets, one scalar array) against the naive sums, on
 * witness-like scalars (also exercising the scalar-1 path and the bit-length split) and on
 * all-ones / all-small / dense inputs */
#define MSM_MULTI_TESTS(G, C)                                                                  \
    static void test_multi_##G##_##C(zp_pool_t **pools, unsigned npools, size_t n)             \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        enum { M = 3 };                                                                        \
        zp_##G##a_##C##_t *pa[M];                                                              \
        zp_scalar_t *k = malloc((n + 1) * sizeof *k);                                          \
        for (int j = 0; j < M; j++) {                                                          \
            pa[j] = malloc((n + 1) * sizeof *pa[j]);                                           \
            points_##G##_##C(pa[j], n);                                                        \
        }                                                                                      \
        for (int mode = 0; mode < 4; mode++) {                                                 \
            for (size_t i = 0; i < n; i++) {                                                   \
                if (mode == 0) pick_sparse(&k[i], r);                                          \
                else if (mode == 3) { /* dense: no zero or one, a few short (no index) */      \
                    for (int j = 0; j < 4; j++) k[i].l[j] = rnd64();                           \
                    k[i].l[3] &= r->l[3] >> 1;                                                 \
                    if (i % 100 == 7) { memset(&k[i], 0, sizeof k[i]); k[i].l[0] = 2 + rnd64() % 999; } \
                } else {                                                                       \
                    memset(&k[i], 0, sizeof k[i]);                                             \
                    k[i].l[0] = mode == 1 ? 1 : 1 + rnd64() % 7;  /* all 1 / all 3 bits */     \
                }                                                                              \
            }                                                                                  \
            zp_##G##_##C##_t want[M], got[M];                                                  \
            for (int j = 0; j < M; j++) naive_##G##_##C(&want[j], pa[j], k, n);                \
            for (unsigned pi = 0; pi < npools; pi++) {                                         \
                unsigned nt = zp_pool_size(pools[pi]);                                         \
                for (unsigned m = 1; m <= M; m++) {                                            \
                    size_t sz = zp_msm_##G##_##C##_multi_scratch_size(n, m, nt);               \
                    uint8_t *scr = scratch_canary(sz);                                         \
                    memset(got, 0xa5, sizeof got);                                             \
                    zp_msm_##G##_##C##_multi(got, (const zp_##G##a_##C##_t *const *)pa, m, k, n, \
                                             scr, pools[pi]);                                  \
                    CHECK(canary_intact(scr, sz));                                             \
                    for (unsigned j = 0; j < m; j++)                                           \
                        if (!zp_##G##_##C##_eq(&got[j], &want[j])) {                           \
                            fprintf(stderr, "msm multi %s n=%zu m=%u j=%u mode=%d threads=%u: " \
                                    "wrong sum\n", #G "_" #C, n, m, j, mode, nt);              \
                            fails++;                                                           \
                        }                                                                      \
                    if (m == M) { /* the same without the endomorphism and with each split */    \
                        for (int e = 0; e < 3; e++) {                                          \
                            zp_msm_opts_t o = {.no_endo = e == 0, .dim = e == 2 ? 4 : 2};      \
                            size_t sz4 = zp_msm_##G##_##C##_ex_scratch_size(n, m, nt, &o);     \
                            uint8_t *s4 = scratch_canary(sz4);                                 \
                            zp_msm_##G##_##C##_multi_ex(got, (const zp_##G##a_##C##_t *const *)pa, m, k, n,\
                                                        s4, pools[pi], &o);                    \
                            CHECK(canary_intact(s4, sz4));  /* (session 19: the dim-4 budget) */ \
                            free(s4);                                                          \
                            for (unsigned j = 0; j < m; j++) CHECK(zp_##G##_##C##_eq(&got[j], &want[j]));\
                        }                                                                      \
                    }                                                                          \
                    if (m == 1) { /* the plain MSM on the same input */                        \
                        zp_msm_##G##_##C(&got[0], pa[0], k, n, scr, pools[pi]);                \
                        CHECK(zp_##G##_##C##_eq(&got[0], &want[0]));                           \
                    }                                                                          \
                    free(scr);                                                                 \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        for (int j = 0; j < M; j++) free(pa[j]);                                               \
        free(k);                                                                               \
    }

/* the two-array MSM (sum2: Groth16's C + H as one MSM) against the naive sum of both arrays,
 * on general scalars (pick_scalar) in the first array and witness-like ones in the second,
 * with the default split, without the endomorphism (two MSMs added), with each split and a
 * forced window; sizes with either array empty, tiny totals (the naive path) and sizes
 * whose boundary n1 falls inside a task's point range */
#define MSM_SUM2_TESTS(G, C)                                                                   \
    static void test_sum2_##G##_##C(zp_pool_t **pools, unsigned npools, size_t n1, size_t n2)  \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        zp_##G##a_##C##_t *p1 = malloc((n1 + 1) * sizeof *p1), *p2 = malloc((n2 + 1) * sizeof *p2); \
        zp_scalar_t *k1 = malloc((n1 + 1) * sizeof *k1), *k2 = malloc((n2 + 1) * sizeof *k2), rep; \
        for (int j = 0; j < 4; j++) rep.l[j] = rnd64();                                        \
        rep.l[3] &= r->l[3] >> 1;                                                              \
        points_##G##_##C(p1, n1);                                                              \
        points_##G##_##C(p2, n2);                                                              \
        for (size_t i = 0; i < n1; i++)                                                        \
            pick_scalar(&k1[i], i, r, &rep, &zp_glv_##C##_lambda, &zp_gls_##C##_mu, zp_gls_##C##_bits); \
        for (size_t i = 0; i < n2; i++) pick_sparse(&k2[i], r);                                \
        if (n1 > 2 && n2 > 2) { /* the same point and scalar across the boundary */            \
            p2[0] = p1[n1 - 1];                                                                \
            k2[0] = k1[n1 - 1] = rep;                                                          \
            zp_##G##a_##C##_neg(&p2[1], &p1[n1 - 2]);                                          \
            k2[1] = k1[n1 - 2];                                                                \
        }                                                                                      \
        zp_##G##_##C##_t want, t, got;                                                         \
        naive_##G##_##C(&want, p1, k1, n1);                                                    \
        naive_##G##_##C(&t, p2, k2, n2);                                                       \
        zp_##G##_##C##_add(&want, &want, &t);                                                  \
        for (unsigned pi = 0; pi < npools; pi++) {                                             \
            unsigned nt = zp_pool_size(pools[pi]);                                             \
            for (int mode = 0; mode < 5; mode++) {                                             \
                zp_msm_opts_t o = {.no_endo = mode == 1, .dim = mode == 2 ? 4 : mode == 3 ? 2 : 0, \
                                   .c = mode == 4 ? 3 + (unsigned)((n1 + n2) % 9) : 0};        \
                size_t sz = zp_msm_##G##_##C##_sum2_scratch_size(n1, n2, nt, &o);              \
                void *scr = NULL;                                                              \
                if (posix_memalign(&scr, 64, sz ? sz : 64)) abort();                           \
                memset(&got, 0xa5, sizeof got);                                                \
                zp_msm_##G##_##C##_sum2_ex(&got, p1, k1, n1, p2, k2, n2, scr, pools[pi], &o);  \
                if (!zp_##G##_##C##_eq(&got, &want)) {                                         \
                    fprintf(stderr, "msm sum2 %s n1=%zu n2=%zu threads=%u mode=%d: wrong sum\n", \
                            #G "_" #C, n1, n2, nt, mode);                                      \
                    fails++;                                                                   \
                }                                                                              \
                free(scr);                                                                     \
            }                                                                                  \
        }                                                                                      \
        free(p1);                                                                              \
        free(p2);                                                                              \
        free(k1);                                                                              \
        free(k2);                                                                              \
    }

MSM_TESTS(g1, bn254, fq_bn254)
MSM_TESTS(g2, bn254, fq2_bn254)
MSM_TESTS(g1, bls12_381, fq_bls12_381)
MSM_TESTS(g2, bls12_381, fq2_bls12_381)
MSM_MULTI_TESTS(g1, bn254)
MSM_MULTI_TESTS(g2, bn254)
MSM_MULTI_TESTS(g1, bls12_381)
MSM_MULTI_TESTS(g2, bls12_381)
MSM_SUM2_TESTS(g1, bn254)
MSM_SUM2_TESTS(g2, bn254)
MSM_SUM2_TESTS(g1, bls12_381)
MSM_SUM2_TESTS(g2, bls12_381)

/* The bucket reduction by halving folds (msm_impl.h S(weigh_fold), from 256 buckets up) and
 * the top window's digit copies, on inputs that make the folded pairs equal (P + P: the
 * doubling path) or opposite (P + (-P): the bucket empties) and on random ones, with forced
 * windows of 10..16 bits, with and without the endomorphism. */
#define MSM_FOLD_TESTS(G, C)                                                                   \
    /* the MSM of (pa, k) with window c, with or without the endomorphism, equals want */     \
    static bool fold_run_##G##_##C(const zp_##G##a_##C##_t *pa, const zp_scalar_t *k, size_t n, \
                                   zp_pool_t *pool, unsigned c, int endo,                      \
                                   const zp_##G##_##C##_t *want)                               \
    {                                                                                          \
        zp_msm_opts_t o = {.no_endo = !endo, .c = c};                                          \
        size_t sz = zp_msm_##G##_##C##_ex_scratch_size(n, 1, zp_pool_size(pool), &o);         \
        void *scr = NULL;                                                                      \
        if (posix_memalign(&scr, 64, sz)) abort();                                             \
        zp_##G##_##C##_t got;                                                                  \
        zp_msm_##G##_##C##_multi_ex(&got, &pa, 1, k, n, scr, pool, &o);                        \
        free(scr);                                                                             \
        return zp_##G##_##C##_eq(&got, want);                                                  \
    }                                                                                          \
    static void test_fold_##G##_##C(zp_pool_t *pool, size_t nrand)                             \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        zp_##G##a_##C##_t ga;                                                                  \
        zp_##G##_##C##_generator(&ga);                                                         \
        static const unsigned cs[] = {10, 12};                                                 \
        for (size_t ci = 0; ci < 2; ci++)                                                      \
            for (int kind = 0; kind < 2; kind++) {                                             \
                size_t n = ((size_t)1 << (cs[ci] - 1)) - 1;                                    \
                zp_##G##a_##C##_t *pa = malloc(n * sizeof *pa);                                \
                zp_scalar_t *k = calloc(n, sizeof *k);                                         \
                for (size_t i = 0; i < n; i++) {                                               \
                    k[i].l[0] = i + 1;                   /* one point per bucket */             \
                    pa[i] = ga;                                                                \
                    if (kind == 1 && i + 1 > (n + 1) / 2) zp_##G##a_##C##_neg(&pa[i], &ga);   \
                }                                                                              \
                zp_##G##_##C##_t want;                                                         \
                naive_##G##_##C(&want, pa, k, n);                                              \
                for (int endo = 0; endo < 2; endo++)                                           \
                    if (!fold_run_##G##_##C(pa, k, n, pool, cs[ci], endo, &want)) {            \
                        fprintf(stderr, "fold %s c=%u kind=%d endo=%d: wrong sum\n", #G "_" #C,  \
                                cs[ci], kind, endo);                                           \
                        fails++;                                                               \
                    }                                                                          \
                free(pa);                                                                      \
                free(k);                                                                       \
            }                                                                                  \
        /* random points and scalars (full size, and 10% repeated: conflicts, XYZZ parts) */   \
        zp_##G##a_##C##_t *pa = malloc(nrand * sizeof *pa);                                    \
        zp_scalar_t *k = malloc(nrand * sizeof *k), rep;                                       \
        for (int j = 0; j < 4; j++) rep.l[j] = rnd64();                                        \
        rep.l[3] &= r->l[3] >> 1;                                                              \
        points_##G##_##C(pa, nrand);                                                           \
        for (size_t i = 0; i < nrand; i++) {                                                   \
            for (int j = 0; j < 4; j++) k[i].l[j] = rnd64();                                   \
            k[i].l[3] &= r->l[3] >> 1;                                                         \
            if (i % 10 == 3) k[i] = rep;                                                       \
        }                                                                                      \
        zp_##G##_##C##_t want;                                                                 \
        naive_##G##_##C(&want, pa, k, nrand);                                                  \
        for (unsigned c = 10; c <= 16; c += 2)                                                 \
            for (int endo = 0; endo < 2; endo++)                                               \
                if (!fold_run_##G##_##C(pa, k, nrand, pool, c, endo, &want)) {                 \
                    fprintf(stderr, "fold %s random n=%zu c=%u endo=%d: wrong sum\n",           \
                            #G "_" #C, nrand, c, endo);                                        \
                    fails++;                                                                   \
                }                                                                              \
        free(pa);                                                                              \
        free(k);                                                                               \
    }
MSM_FOLD_TESTS(g1, bn254)
MSM_FOLD_TESTS(g2, bn254)
MSM_FOLD_TESTS(g1, bls12_381)
MSM_FOLD_TESTS(g2, bls12_381)

/* msm_int.h's norm into Fq and the inverse from the norm's inverse (the batched inversion of
 * msm_impl.h's flush runs on them): against the plain Fq / Fq2 arithmetic of lib/ff on
 * random and edge elements (0, 1, p-1, 2^k - 1, 2^k, 2^k + 1) */
#define MSM_NORM_TESTS(C)                                                                      \
    static void edge_fq_##C(zp_fq_##C##_t *e, size_t i)                                        \
    {                                                                                          \
        const zp_fq_##C##_t *p = &zp_fq_##C##_modulus;                                         \
        zp_fq_##C##_t v;                                                                       \
        memset(&v, 0, sizeof v);                                                               \
        size_t nb = 64 * ZP_fq_##C##_LIMBS;                                                    \
        if (i == 1) v.l[0] = 1;                                                                \
        if (i == 2) {                                          /* p - 1 */                     \
            v = *p;                                                                            \
            v.l[0] -= 1;                                                                       \
        }                                                                                      \
        if (i >= 3 && i < 3 + 3 * (nb / 64)) {                 /* 2^k + (-1, 0, 1) */          \
            unsigned kb = 64 * (unsigned)((i - 3) / 3 + 1);     /* the last: p's top bit */ \
            if (kb >= nb) kb = (unsigned)nb - 1 - (unsigned)__builtin_clzll(p->l[nb / 64 - 1]); \
            int dlt = (int)((i - 3) % 3) - 1;                                                  \
            if (kb < nb) v.l[kb / 64] = 1ull << (kb % 64);                                     \
            if (dlt < 0) {                                                                     \
                for (unsigned j = 0; j < ZP_fq_##C##_LIMBS && !(v.l[j]--); j++) {}             \
            } else if (dlt > 0) {                                                              \
                v.l[0] |= 1;                                                                   \
            }                                                                                  \
        }                                                                                      \
        if (i >= 3 + 3 * (nb / 64)) {                          /* random below p */            \
            for (unsigned j = 0; j < ZP_fq_##C##_LIMBS; j++) v.l[j] = rnd64();                 \
            v.l[ZP_fq_##C##_LIMBS - 1] &= p->l[ZP_fq_##C##_LIMBS - 1] >> 1;                    \
        }                                                                                      \
        CHECK(zp_fq_##C##_is_canonical(&v));                                                   \
        zp_fq_##C##_to_mont(e, &v);                                                            \
    }                                                                                          \
    static void test_norm_##C(void)                                                            \
    {                                                                                          \
        const size_t ne = 3 + 3 * ZP_fq_##C##_LIMBS + 12;                                      \
        for (size_t i = 0; i < ne; i++)                                                        \
            for (size_t j = 0; j < ne; j++) {                                                  \
                zp_fq2_##C##_t a, inv, want, prod;                                             \
                zp_fq_##C##_t nr, t, ni;                                                       \
                edge_fq_##C(&a.c0, i);                                                         \
                edge_fq_##C(&a.c1, j);                                                         \
                mf_fq2_##C##_norm(&nr, &a);                                                    \
                zp_fq_##C##_sqr(&t, &a.c0);                                                    \
                zp_fq_##C##_sqr(&ni, &a.c1);                                                   \
                zp_fq_##C##_add(&t, &t, &ni);                                                  \
                CHECK(zp_fq_##C##_eq(&nr, &t));                                                \
                CHECK(zp_fq_##C##_is_canonical(&nr));                                          \
                if (zp_fq2_##C##_is_zero(&a)) {                                                \
                    CHECK(zp_fq_##C##_is_zero(&nr));                                           \
                    continue;                                                                  \
                }                                                                              \
                zp_fq_##C##_inv(&ni, &nr);                                                     \
                mf_fq2_##C##_inv_norm(&inv, &a, &ni);                                          \
                zp_fq2_##C##_inv(&want, &a);                                                   \
                CHECK(zp_fq2_##C##_eq(&inv, &want));                                           \
                zp_fq2_##C##_mul(&prod, &inv, &a);                                             \
                CHECK(zp_fq_##C##_is_one(&prod.c0) && zp_fq_##C##_is_zero(&prod.c1));          \
                mf_fq_##C##_norm(&t, &a.c0);                   /* Fq: N(a) = a */              \
                CHECK(zp_fq_##C##_eq(&t, &a.c0));                                              \
                mf_fq_##C##_inv_norm(&t, &a.c0, &ni);                                          \
                CHECK(zp_fq_##C##_eq(&t, &ni));                                                \
            }                                                                                  \
    }
MSM_NORM_TESTS(bn254)
MSM_NORM_TESTS(bls12_381)

/* G1 and G2 batches of additions on the vector path (msm_vec_impl.h) and off it: points
 * repeated with the same scalar (a doubling lane: the bucket holds P when P comes again),
 * negated with it (P + (-P): the bucket empties), infinity, random; windows whose batches
 * reach the vector path's minimum (K = 2^(c-5)), batches not a multiple of its 32 lanes */
#define MSM_VEC_TESTS(G, C)                                                                    \
    static void test_vec_##G##_##C(zp_pool_t *pool, size_t n)                                  \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        zp_##G##a_##C##_t *pa = malloc(n * sizeof *pa);                                        \
        zp_scalar_t *k = malloc(n * sizeof *k);                                                \
        points_##G##_##C(pa, n);                                                               \
        for (size_t i = 0; i < n; i++) {                                                       \
            for (int j = 0; j < 4; j++) k[i].l[j] = rnd64();                                   \
            k[i].l[3] &= r->l[3] >> 1;                                                         \
            if (i % 7 == 1) {                                                                  \
                pa[i] = pa[0];                                                                 \
                k[i] = k[0];                                                                   \
            } else if (i % 7 == 2) {                                                           \
                zp_##G##a_##C##_neg(&pa[i], &pa[0]);                                           \
                k[i] = k[0];                                                                   \
            }                                                                                  \
        }                                                                                      \
        zp_##G##_##C##_t want;                                                                 \
        naive_##G##_##C(&want, pa, k, n);                                                      \
        bool had = zp_msm_vector();                                                            \
        static const unsigned cs[] = {11, 12, 16};                                             \
        for (int vec = 0; vec < 2; vec++) {                                                    \
            if (zp_msm_set_vector(vec) != (bool)vec) continue;   /* no IFMA on this CPU */     \
            for (size_t ci = 0; ci < 3; ci++)                                                  \
                for (int endo = 0; endo < 2; endo++)                                           \
                    if (!fold_run_##G##_##C(pa, k, n, pool, cs[ci], endo, &want)) {            \
                        fprintf(stderr, "vec %s n=%zu c=%u endo=%d vector=%d: wrong sum\n",     \
                                #G "_" #C, n, cs[ci], endo, vec);                              \
                        fails++;                                                               \
                    }                                                                          \
        }                                                                                      \
        zp_msm_set_vector(had);                                                                \
        free(pa);                                                                              \
        free(k);                                                                               \
    }
/* forced K / P (opts.k, opts.p, session 17: the tuning knobs a calibration alternates) and
 * windows per task (opts.g, session 19; with windows c = 5..8 for an odd and an even count
 * of full windows, and where 2K does not fit): the naive sum for K below, at and above the
 * plan's and past the clamps, P 1..8, both methods, witness-like scalars (scalar-1 tasks
 * beside the windows) and uniform ones */
#define MSM_KP_TESTS(G, C)                                                                     \
    static void test_kp_##G##_##C(zp_pool_t *pool, size_t n)                                   \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        zp_##G##a_##C##_t *pa = malloc(n * sizeof *pa);                                        \
        zp_scalar_t *k = malloc(n * sizeof *k);                                                \
        points_##G##_##C(pa, n);                                                               \
        static const unsigned kp[][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {16, 3, 0, 0}, {64, 1, 0, 0}, {200, 2, 0, 0}, \
                                         {1024, 8, 0, 0}, {5000, 0, 0, 0}, {0, 100, 0, 0}, {0, 0, 1, 0},          \
                                         {0, 0, 2, 0}, {0, 0, 2, 7}, {0, 0, 2, 8}, {0, 2, 2, 8}, {512, 0, 2, 0},   \
                                         {1024, 0, 2, 0}, {16, 0, 2, 5}, {0, 0, 9, 6}};                             \
        for (int shape = 0; shape < 2; shape++) {                                              \
            for (size_t i = 0; i < n; i++) {                                                   \
                for (int j = 0; j < 4; j++) k[i].l[j] = rnd64();                               \
                k[i].l[3] &= r->l[3] >> 1;                                                     \
                if (shape && i % 3 == 0) memset(&k[i], 0, sizeof k[i]), k[i].l[0] = i % 2;     \
            }                                                                                  \
            zp_##G##_##C##_t want;                                                             \
            naive_##G##_##C(&want, pa, k, n);                                                  \
            for (size_t t = 0; t < sizeof kp / sizeof kp[0]; t++)                              \
                for (int m = 1; m <= 2; m++) {                                                 \
                    zp_msm_opts_t o = {.method = (zp_msm_method_t)m, .k = kp[t][0], .p = kp[t][1],  \
                                       .g = kp[t][2], .c = kp[t][3]};                                    \
                    size_t sz = zp_msm_##G##_##C##_ex_scratch_size(n, 1, zp_pool_size(pool), &o); \
                    uint8_t *scr = scratch_canary(sz);                                         \
                    zp_##G##_##C##_t got;                                                      \
                    const zp_##G##a_##C##_t *pc = pa;                                          \
                    zp_msm_##G##_##C##_multi_ex(&got, &pc, 1, k, n, scr, pool, &o);            \
                    CHECK(canary_intact(scr, sz));                                             \
                    free(scr);                                                                 \
                    if (!zp_##G##_##C##_eq(&got, &want)) {                                     \
                        fprintf(stderr, "kp %s n=%zu k=%u p=%u g=%u c=%u method %d shape %d: wrong sum\n", \
                                #G "_" #C, n, kp[t][0], kp[t][1], kp[t][2], kp[t][3], m, shape); \
                        fails++;                                                               \
                    }                                                                          \
                }                                                                              \
        }                                                                                      \
        free(pa);                                                                              \
        free(k);                                                                               \
    }
MSM_KP_TESTS(g1, bn254)
MSM_KP_TESTS(g2, bn254)
MSM_KP_TESTS(g1, bls12_381)
MSM_KP_TESTS(g2, bls12_381)

MSM_VEC_TESTS(g1, bn254)
MSM_VEC_TESTS(g2, bn254)
MSM_VEC_TESTS(g1, bls12_381)
MSM_VEC_TESTS(g2, bls12_381)

/* ---- the key load's vector point check (session 17): the same verdict as the scalar checks
 * (canonical coordinates, on the curve, or (0,0)) on valid arrays with infinities, and on
 * every kind of bad point at every lane of a block and in the unexamined tail; nothing
 * examined without the vector path ---- */
#define MSM_CHECK_TESTS(G, C, FQ)                                                              \
    static size_t check_ref_##G##_##C(const zp_##G##a_##C##_t *p, size_t n)                    \
    {                                                                                          \
        const zp_fq_##C##_t *w = (const zp_fq_##C##_t *)(const void *)p;                       \
        const size_t nw = sizeof *p / sizeof *w;                                               \
        for (size_t i = 0; i < n; i++) {                                                       \
            for (size_t k = 0; k < nw; k++)                                                    \
                if (!zp_fq_##C##_is_canonical(&w[i * nw + k])) return i;                       \
            if (!zp_##G##a_##C##_is_inf(&p[i]) && !zp_##G##a_##C##_on_curve(&p[i])) return i;   \
        }                                                                                      \
        return n;                                                                              \
    }                                                                                          \
    static void test_check_##G##_##C(void)                                                     \
    {                                                                                          \
        enum { N = 37 };                                                                       \
        zp_##G##a_##C##_t pa[N], bad;                                                          \
        points_##G##_##C(pa, N);                                                               \
        memset(&pa[9], 0, sizeof pa[9]);                                                       \
        bool had = zp_msm_vector();                                                            \
        size_t done;                                                                           \
        zp_msm_set_vector(false);                                                              \
        if (zp_msm_##G##_##C##_check_v(pa, N, &done) != 0 || done != 0) {                      \
            fprintf(stderr, "check_v %s: examined points without the vector path\n", #G "_" #C); \
            fails++;                                                                           \
        }                                                                                      \
        if (!zp_msm_set_vector(true)) {                                                        \
            zp_msm_set_vector(had);                                                            \
            return;                                                                            \
        }                                                                                      \
        size_t got = zp_msm_##G##_##C##_check_v(pa, N, &done);                                 \
        if (done != N / 8 * 8 || got != done || check_ref_##G##_##C(pa, N) != N) {             \
            fprintf(stderr, "check_v %s: valid array: got %zu done %zu\n", #G "_" #C, got, done); \
            fails++;                                                                           \
        }                                                                                      \
        const zp_fq_##C##_t *q = &zp_fq_##C##_modulus;                                         \
        for (int kind = 0; kind < 5; kind++)                                                   \
            for (size_t at = 0; at < N; at += (at < 16 ? 1 : 5)) {                            \
                zp_##G##a_##C##_t keep = pa[at];                                               \
                zp_fq_##C##_t *w = (zp_fq_##C##_t *)(void *)&pa[at];                           \
                const size_t nw = sizeof bad / sizeof *w;                                      \
                if (kind == 0) {                        /* off the curve: y's first word + 1 */ \
                    if (zp_##G##a_##C##_is_inf(&pa[at])) zp_##G##_##C##_generator(&pa[at]);     \
                    w[nw / 2].l[0] ^= 1;                                                       \
                } else if (kind == 1) {                 /* (0, 1): not the infinity */          \
                    memset(&pa[at], 0, sizeof pa[at]);                                         \
                    w[nw / 2] = zp_fq_##C##_one;                                               \
                } else if (kind == 2) {                 /* a coordinate word = p (>= p) */      \
                    w[(at * 7) % nw] = *q;                                                     \
                } else if (kind == 3) {                 /* all ones */                          \
                    memset(&pa[at], 0xff, sizeof pa[at]);                                      \
                } else {                                /* x + p where it fits: same residue */ \
                    zp_fq_##C##_t t = w[0];                                                    \
                    unsigned __int128 cy = 0;                                                  \
                    for (size_t l = 0; l < sizeof t.l / sizeof t.l[0]; l++) {                 \
                        cy += (unsigned __int128)t.l[l] + q->l[l];                             \
                        t.l[l] = (uint64_t)cy;                                                 \
                        cy >>= 64;                                                             \
                    }                                                                          \
                    if (cy) {                                   /* does not fit: skip */        \
                        pa[at] = keep;                                                         \
                        continue;                                                              \
                    }                                                                          \
                    if (zp_##G##a_##C##_is_inf(&pa[at])) memset(&t, 0, sizeof t), t.l[0] = 1;  \
                    w[0] = t;                                                                  \
                }                                                                              \
                size_t want = check_ref_##G##_##C(pa, N);                                      \
                got = zp_msm_##G##_##C##_check_v(pa, N, &done);                                \
                bool ok = want != at ? false : at < done ? got == at : got == done;            \
                if (!ok) {                                                                     \
                    fprintf(stderr, "check_v %s kind %d at %zu: got %zu done %zu ref %zu\n",   \
                            #G "_" #C, kind, at, got, done, want);                             \
                    fails++;                                                                   \
                }                                                                              \
                pa[at] = keep;                                                                 \
            }                                                                                  \
        zp_msm_set_vector(had);                                                                \
    }
MSM_CHECK_TESTS(g1, bn254, fq_bn254)
MSM_CHECK_TESTS(g2, bn254, fq2_bn254)
MSM_CHECK_TESTS(g1, bls12_381, fq_bls12_381)
MSM_CHECK_TESTS(g2, bls12_381, fq2_bls12_381)

/* ---- the method choice (issue 31; lib/msm/msm_calib.c) ---- */

/* path = a temporary file holding text; false if it cannot be written */
static bool calib_write(char *path, size_t cap, const char *text, size_t len)
{
    const char *td = getenv("TMPDIR");
    snprintf(path, cap, "%s/test_msm_calib_XXXXXX", td && *td ? td : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return false;
    bool ok = write(fd, text, len) == (ssize_t)len;
    close(fd);
    return ok;
}

/* text as a table file (path keeps its name), loaded, the file removed: the load's result */
static int calib_load_text(char *path, size_t cap, const char *text, size_t len)
{
    if (!calib_write(path, cap, text, len)) return -EIO;
    int rc = zp_msm_calib_load(path);
    unlink(path);
    return rc;
}

/* a table that switches every key (both shapes) from endo to plain between 400 and 600 points:
 * ratio endo/plain 0.9 at 2^8, 1.1 at 2^10, interpolated in log2 n (0.98, where the split
 * stops, at 2^8.8 = 446 points) */
static bool calib_switch_table(char *path, size_t cap)
{
    static const char *gc[] = {"g1 bn254", "g1 bls12_381", "g2 bn254", "g2 bls12_381"};
    char text[2048];
    size_t o = (size_t)snprintf(text, sizeof text, "# test table\n\nzkpipe-msm-calib 1\nmachine test  table\n");
    for (int i = 0; i < 4; i++)
        for (int w = 0; w < 2; w++)
            o += (size_t)snprintf(text + o, sizeof text - o, "%s %s 8 0.9 1.0   # comment\n%s %s 10 1.1 1.0\n",
                                  gc[i], w ? "witness" : "uniform", gc[i], w ? "witness" : "uniform");
    return calib_write(path, cap, text, o);
}

/* every method against the naive sum around the switch of calib_switch_table: AUTO (NULL
 * opts and opts.method = AUTO) at 200 and 400 points (endo) and 600, 1100 (plain), ENDO and
 * PLAIN forced, both scalar shapes, 1..3 threads; sum2 with 300 + 300 points (one MSM of 600:
 * plain, so two MSMs of 300: endo each) */
/* k[0..n): witness-like (shape 1: sparse, small) or every-kind scalars (shape 0: pick_scalar's
 * edge cases around the GLV / GLS splits) of curve C */
#define FILL_SCALARS(C, k, n, shape, r, rep)                                                   \
    for (size_t i = 0; i < (n); i++) {                                                         \
        if (shape) pick_sparse(&(k)[i], r);                                                    \
        else pick_scalar(&(k)[i], i, r, &(rep), &zp_glv_##C##_lambda, &zp_gls_##C##_mu,        \
                         zp_gls_##C##_bits);                                                   \
    }

#define MSM_AUTO_TESTS(G, GN, C, CV)                                                           \
    static void test_auto_##G##_##C(zp_pool_t **pools, unsigned npools, const size_t *sizes,   \
                                    size_t nsizes)                                             \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        for (size_t si = 0; si < nsizes; si++) {                                               \
            const size_t n = sizes[si];                                                        \
            const zp_msm_method_t want_m = n < 446 ? ZP_MSM_ENDO : ZP_MSM_PLAIN;             \
            CHECK(zp_msm_auto_method(GN, CV, false, n) == want_m);                             \
            CHECK(zp_msm_auto_method(GN, CV, true, n) == want_m);                              \
            zp_##G##a_##C##_t *pa = malloc(n * sizeof *pa);                                    \
            zp_scalar_t *k = malloc(n * sizeof *k), rep = {{rnd64(), rnd64(), 7, 0}};          \
            points_##G##_##C(pa, n);                                                           \
            for (int shape = 0; shape < 2; shape++) {                                          \
                FILL_SCALARS(C, k, n, shape, r, rep);                                          \
                zp_##G##_##C##_t want, got;                                                    \
                naive_##G##_##C(&want, pa, k, n);                                              \
                for (unsigned pi = 0; pi < npools; pi++) {                                     \
                    unsigned nt = zp_pool_size(pools[pi]);                                     \
                    for (int mode = 0; mode < 4; mode++) {                                     \
                        zp_msm_opts_t o = {.method = mode == 1 ? ZP_MSM_AUTO : mode == 2 ? ZP_MSM_ENDO \
                                                     : mode == 3 ? ZP_MSM_PLAIN : ZP_MSM_AUTO}; \
                        size_t sz = mode ? zp_msm_##G##_##C##_ex_scratch_size(n, 1, nt, &o)    \
                                         : zp_msm_##G##_##C##_scratch_size(n, nt);             \
                        void *scr = NULL;                                                      \
                        if (posix_memalign(&scr, 64, sz)) abort();                             \
                        const zp_##G##a_##C##_t *pp = pa;                                      \
                        if (mode == 0) zp_msm_##G##_##C(&got, pa, k, n, scr, pools[pi]);       \
                        else zp_msm_##G##_##C##_multi_ex(&got, &pp, 1, k, n, scr, pools[pi], &o); \
                        if (!zp_##G##_##C##_eq(&got, &want)) {                                 \
                            fprintf(stderr, "msm auto %s n=%zu threads=%u shape=%d mode=%d: wrong sum\n", \
                                    #G "_" #C, n, nt, shape, mode);                            \
                            fails++;                                                           \
                        }                                                                      \
                        free(scr);                                                             \
                    }                                                                          \
                }                                                                              \
                if (n == 600) {                  /* sum2 of 300 + 300, default opts */         \
                    zp_##G##_##C##_t a, b;                                                     \
                    naive_##G##_##C(&a, pa, k, 300);                                           \
                    naive_##G##_##C(&b, pa + 300, k + 300, 300);                               \
                    zp_##G##_##C##_add(&want, &a, &b);                                         \
                    void *scr = NULL;                                                          \
                    if (posix_memalign(&scr, 64, zp_msm_##G##_##C##_sum2_scratch_size(300, 300, 2, NULL))) \
                        abort();                                                               \
                    zp_msm_##G##_##C##_sum2_ex(&got, pa, k, 300, pa + 300, k + 300, 300, scr, pools[1], NULL); \
                    if (!zp_##G##_##C##_eq(&got, &want)) {                                     \
                        fprintf(stderr, "msm auto sum2 %s 300+300 shape=%d: wrong sum\n", #G "_" #C, shape); \
                        fails++;                                                               \
                    }                                                                          \
                    free(scr);                                                                 \
                }                                                                              \
            }                                                                                  \
            free(pa);                                                                          \
            free(k);                                                                           \
        }                                                                                      \
    }
MSM_AUTO_TESTS(g1, 1, bn254, 0)
MSM_AUTO_TESTS(g1, 1, bls12_381, 1)
MSM_AUTO_TESTS(g2, 2, bn254, 0)
MSM_AUTO_TESTS(g2, 2, bls12_381, 1)

/* every window the calibration may pick (the model's and one bit either side, both methods)
 * against the naive sum, with the scratch sized for NULL opts (it must cover every offset:
 * a canary after it is checked), 1..3 threads, uniform-like and witness-like scalars; then
 * AUTO under calib_window_table, and plan_info's offsets and windows against that table */
#define MSM_WINDOW_TESTS(G, GN, C, CV)                                                         \
    static void test_window_##G##_##C(zp_pool_t **pools, unsigned npools, const size_t *sizes, \
                                      size_t nsizes)                                           \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        enum { CANARY = 256 };                                                                 \
        for (size_t si = 0; si < nsizes; si++) {                                               \
            const size_t n = sizes[si];                                                        \
            zp_##G##a_##C##_t *pa = malloc(n * sizeof *pa);                                    \
            zp_scalar_t *k = malloc(n * sizeof *k), rep = {{rnd64(), rnd64(), 7, 0}};          \
            points_##G##_##C(pa, n);                                                           \
            for (int shape = 0; shape < 2; shape++) {                                          \
                FILL_SCALARS(C, k, n, shape, r, rep);                                          \
                zp_##G##_##C##_t want, got;                                                    \
                naive_##G##_##C(&want, pa, k, n);                                              \
                for (unsigned pi = 0; pi < npools; pi++) {                                     \
                    unsigned nt = zp_pool_size(pools[pi]);                                     \
                    size_t sz = zp_msm_##G##_##C##_scratch_size(n, nt);                        \
                    uint8_t *scr = NULL;                                                       \
                    if (posix_memalign((void **)&scr, 64, sz + CANARY)) abort();               \
                    for (int mode = 0; mode < 11; mode++) {                                    \
                        zp_msm_opts_t o = {.method = mode % 6 < 3 ? ZP_MSM_ENDO : ZP_MSM_PLAIN, \
                                           .model_window = true, .window_delta = mode % 3 - 1}; \
                        if (mode == 6) o = (zp_msm_opts_t){0};  /* AUTO, the table's offsets */ \
                        if (mode > 6) {   /* K and P offsets (session 20), the scratch covers them */ \
                            o.k_delta = mode & 1 ? 1 : -1;                                     \
                            o.p_delta = mode & 2 ? 1 : -1;                                     \
                        }                                                                      \
                        memset(scr + sz, 0xa5, CANARY);                                        \
                        const zp_##G##a_##C##_t *pp = pa;                                      \
                        zp_msm_##G##_##C##_multi_ex(&got, &pp, 1, k, n, scr, pools[pi], &o);   \
                        bool canary = true;                                                    \
                        for (unsigned b = 0; b < CANARY; b++) canary &= scr[sz + b] == 0xa5;   \
                        if (!zp_##G##_##C##_eq(&got, &want) || !canary) {                      \
                            fprintf(stderr, "msm window %s n=%zu threads=%u shape=%d mode=%d: %s\n", \
                                    #G "_" #C, n, nt, shape, mode, canary ? "wrong sum" : "wrote past the scratch"); \
                            fails++;                                                           \
                        }                                                                      \
                    }                                                                          \
                    free(scr);                                                                 \
                }                                                                              \
            }                                                                                  \
            /* plan_info: the table's offsets (calib_window_table; K and P: calib_kp_table),   \
             * the model's window + offset */                                                  \
            for (unsigned nt = 1; nt <= 2; nt++) {                                             \
                zp_msm_info_t au, m0, mp;                                                      \
                zp_msm_##G##_##C##_plan_info(&au, n, nt, false, NULL);                         \
                zp_msm_opts_t o0 = {.method = au.method, .model_window = true};                \
                zp_msm_##G##_##C##_plan_info(&m0, n, nt, false, &o0);                          \
                int want_dc = n < 600 ? (nt == 1 ? 1 : -1) : (nt == 1 ? -1 : 1);               \
                if (au.method == ZP_MSM_PLAIN) want_dc = -want_dc;                             \
                o0.window_delta = want_dc;                                                     \
                zp_msm_##G##_##C##_plan_info(&mp, n, nt, false, &o0);                          \
                CHECK(au.method == (n < 446 ? ZP_MSM_ENDO : ZP_MSM_PLAIN));                    \
                CHECK(m0.dc == 0 && au.dc == want_dc && au.c == mp.c);                         \
                unsigned wc = (int)m0.c + want_dc < 2 ? 2 : (int)m0.c + want_dc > 16 ? 16 : (unsigned)((int)m0.c + want_dc); \
                CHECK(mp.c == wc);                                                             \
                /* K doubled with one thread, halved and P doubled with two (clamped to       \
                 * 16..1024 and 1..64): the kp rows at the window the table takes */           \
                const unsigned wk = nt == 1 ? (mp.K < 1024 ? 2 * mp.K : mp.K) : (mp.K / 2 >= 16 ? mp.K / 2 : mp.K); \
                const unsigned wp = nt == 1 ? mp.P : mp.P < 64 ? 2 * mp.P : mp.P;            \
                CHECK(mp.dk == 0 && mp.dp == 0 && au.K == wk && au.P == wp);                   \
                CHECK(au.dk == (wk > mp.K) - (wk < mp.K) && au.dp == (wp > mp.P));             \
            }                                                                                  \
            free(pa);                                                                          \
            free(k);                                                                           \
        }                                                                                      \
    }
MSM_WINDOW_TESTS(g1, 1, bn254, 0)
MSM_WINDOW_TESTS(g1, 1, bls12_381, 1)
MSM_WINDOW_TESTS(g2, 2, bn254, 0)
MSM_WINDOW_TESTS(g2, 2, bls12_381, 1)

/* a version 2 table: the method switches from endo to plain at 446 points as in
 * calib_switch_table (both thread classes, both shapes); one thread: endo's window +1 up to
 * 2^9 (its -1 row 1% faster than the model's: not taken) and -1 from 2^10 (more than 2%),
 * plain's the opposite; three threads (the many-thread class): the signs swapped. Between
 * 2^9 and 2^10 the offset is interpolated (0 at 2^9.5 = 724 points). */
static bool calib_window_table(char *path, size_t cap)
{
    static const char *gc[] = {"g1 bn254", "g1 bls12_381", "g2 bn254", "g2 bls12_381"};
    char *text = malloc(16384);
    if (!text) return false;
    size_t o = (size_t)snprintf(text, 16384, "zkpipe-msm-calib 2\nmachine window test\n");
    for (int i = 0; i < 4; i++)
        for (int w = 0; w < 2; w++)
            for (int t = 1; t <= 3; t += 2)
                for (int l = 8; l <= 10; l++) {
                    const int up = (l <= 9) == (t == 1);  /* endo +1 (plain -1), else the opposite */
                    const double ratio = l == 8 ? 0.9 : l == 9 ? 1.0 : 1.1;
                    const char *sh = w ? "witness" : "uniform";
                    for (int m = 0; m < 2; m++) {
                        const int fast = (up != m) ? 1 : -1;  /* the offset measured faster */
                        const double base = m ? 100.0 : 100.0 * ratio;
                        o += (size_t)snprintf(text + o, 16384 - o,
                                              "%s %s %d %d %s 0 %.3f\n%s %s %d %d %s %d %.3f\n%s %s %d %d %s %d %.3f\n",
                                              gc[i], sh, l, t, m ? "plain" : "endo", base,
                                              gc[i], sh, l, t, m ? "plain" : "endo", fast, base * 0.95,
                                              gc[i], sh, l, t, m ? "plain" : "endo", -fast, base * 0.99);
                    }
                }
    bool ok = calib_write(path, cap, text, o);
    free(text);
    return ok;
}

/* a format 4 file of kp rows alone (session 20) for every key, both paths, 2^8..2^10, at every
 * window offset: one thread K doubled (ratio 0.9), three threads K halved and P doubled (0.9;
 * K doubled 0.99: within 2%, not taken). Loaded over calib_window_table: its windows stay. */
static bool calib_kp_table(char *path, size_t cap)
{
    static const char *gc[] = {"g1 bn254", "g1 bls12_381", "g2 bn254", "g2 bls12_381"};
    const size_t sz = 65536;
    char *text = malloc(sz);
    if (!text) return false;
    size_t o = (size_t)snprintf(text, sz, "zkpipe-msm-calib 4\nmachine kp test\n");
    for (int p = 0; p < 2; p++) {
        o += (size_t)snprintf(text + o, sz - o, "path %s\n", p ? "vector" : "scalar");
        for (int i = 0; i < 4; i++)
            for (int w = 0; w < 2; w++)
                for (int l = 8; l <= 10; l++)
                    for (int m = 0; m < 2; m++)
                        for (int dc = -1; dc <= 1; dc++) {
                            const char *sh = w ? "witness" : "uniform", *me = m ? "plain" : "endo";
                            o += (size_t)snprintf(text + o, sz - o,
                                                  "kp %s %s %d 1 %s %d 1 0 0.9\nkp %s %s %d 3 %s %d -1 1 0.9\n"
                                                  "kp %s %s %d 3 %s %d 1 0 0.99  # within 2%%\n",
                                                  gc[i], sh, l, me, dc, gc[i], sh, l, me, dc, gc[i], sh, l, me, dc);
                        }
    }
    bool ok = o < sz && calib_write(path, cap, text, o);
    free(text);
    return ok;
}

static void test_window(zp_pool_t **pools)
{
    char path[256];
    CHECK(calib_window_table(path, sizeof path));
    CHECK(zp_msm_calib_load(path) == 0);
    CHECK(zp_msm_calib_threads() == 3);
    unlink(path);
    /* interpolation of the offset in log2 n: one thread, G1 BN254 uniform, plain from 446
     * points: -1 at 2^9 (512), +1 at 2^10, 0 at 2^9.5; endo at 400: +1 */
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 400, 1).dc[0] == 1);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 512, 1).dc[1] == -1);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 724, 1).dc[1] == 0);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1024, 1).dc[1] == 1);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 400, 2).dc[0] == -1);
    /* an offset within 2% of the model's window is not taken; one more than 2% faster is */
    static const char near[] = "zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 plain 0 100\n"
                               "g1 bn254 uniform 12 1 plain 1 98.5\ng1 bn254 uniform 12 1 endo 0 100\n"
                               "g1 bn254 uniform 12 1 endo -1 97.5\ng1 bn254 uniform 12 1 endo 1 98\n";
    CHECK(calib_load_text(path, sizeof path, near, sizeof near - 1) == 0);
    zp_msm_pick_t pk = zp_msm_auto_pick(1, 0, 1.0, 4096, 1);
    CHECK(pk.dc[1] == 0 && pk.dc[0] == -1 && pk.method == ZP_MSM_ENDO);  /* 97.5 / 100 */
    CHECK(zp_msm_calib_load(path) == -ENOENT);
    /* the rest of the window table (the near file replaced only G1 BN254 uniform, 1T) */
    CHECK(calib_window_table(path, sizeof path));
    CHECK(zp_msm_calib_load(path) == 0);
    unlink(path);
    /* the kp rows over it: the windows and methods kept, the K / P offsets taken */
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1024, 1).dk[1] == 0);
    CHECK(calib_kp_table(path, sizeof path));
    CHECK(zp_msm_calib_load(path) == 0);
    unlink(path);
    pk = zp_msm_auto_pick(1, 0, 1.0, 1024, 1);
    CHECK(pk.method == ZP_MSM_PLAIN && pk.dc[1] == 1 && pk.dk[1] == 1 && pk.dp[1] == 0);
    pk = zp_msm_auto_pick(2, 1, 0.15, 400, 3);
    CHECK(pk.method == ZP_MSM_ENDO && pk.dc[0] == -1 && pk.dk[0] == -1 && pk.dp[0] == 1);
    static const size_t s1[] = {300, 1100, 2500}, s2[] = {200, 1100};
    test_window_g1_bn254(pools, 3, s1, 3);
    test_window_g1_bls12_381(pools, 3, s1, 3);
    test_window_g2_bn254(pools, 3, s2, 2);
    test_window_g2_bls12_381(pools, 3, s2, 2);
    zp_msm_calib_reset();
}

/* the calibration file parser: each malformed file refused with ZP_EFORMAT and a message
 * naming the file and line; a refused file leaves the table in use unchanged */
static void test_calib_errors(void)
{
    static const struct { const char *text, *line, *what; } bad[] = {
        {"", ":0:", "no header"},
        {"# only a comment\n\n", ":2:", "no header"},
        {"zkpipe-msm-calib 5\n", ":1:", "expected the header"},
        {"zkpipe-msm-calib 4\n", ":1:", "no rows"},
        {"zkpipe-msm-calib 3\n", ":1:", "no rows"},
        {"zkpipe-msm-calib 2\n", ":1:", "no rows"},
        {"g1 bn254 uniform 12 1 1\n", ":1:", "expected the header"},
        {"zkpipe-msm-calib 1\n", ":1:", "no rows"},
        {"zkpipe-msm-calib 1\nmachine a\n# c\n", ":3:", "no rows"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1\n", ":2:", "6 fields"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1 1 1 1 1\n", ":2:", "more than 6"},
        {"zkpipe-msm-calib 1\ng3 bn254 uniform 12 1 1\n", ":2:", "group 'g3'"},
        {"zkpipe-msm-calib 1\ng1 bn256 uniform 12 1 1\n", ":2:", "curve 'bn256'"},
        {"zkpipe-msm-calib 1\ng1 bn254 dense 12 1 1\n", ":2:", "scalars 'dense'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 0 1 1\n", ":2:", "log2n '0'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 31 1 1\n", ":2:", "log2n '31'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12x 1 1\n", ":2:", "log2n '12x'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform -3 1 1\n", ":2:", "log2n '-3'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 0 1\n", ":2:", "ENDO_MS '0'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1 -1\n", ":2:", "PLAIN_MS '-1'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 nan 1\n", ":2:", "ENDO_MS 'nan'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1 inf\n", ":2:", "PLAIN_MS 'inf'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1e10 1\n", ":2:", "ENDO_MS '1e10'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1,5 1\n", ":2:", "ENDO_MS '1,5'"},
        {"zkpipe-msm-calib 1\n\ng1 bn254 uniform 12 1 1\ng2 bn254 uniform 12 1 1\ng1 bn254 uniform 12 2 2\n",
         ":5:", "the first at line 3"},
        {"zkpipe-msm-calib 1\nmachine a\nmachine b\n", ":3:", "second 'machine'"},
        {"zkpipe-msm-calib 1\ng1 bn254 uniform 12 1 1\n\x01\x02 x\n", ":3:", "6 fields"},
        /* version 2: GROUP CURVE SCALARS LOG2N THREADS METHOD DC MS */
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 1\n", ":2:", "8 fields"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 endo 0\n", ":2:", "8 fields"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 endo 0 5 5\n", ":2:", "more than 8"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 0 endo 0 5\n", ":2:", "threads '0'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1025 endo 0 5\n", ":2:", "threads '1025'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 2x endo 0 5\n", ":2:", "threads '2x'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 fast 0 5\n", ":2:", "method 'fast'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 endo 2 5\n", ":2:", "window offset '2'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 endo -2 5\n", ":2:", "window offset '-2'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 plain x 5\n", ":2:", "window offset 'x'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 plain 0 0\n", ":2:", "MS '0'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 plain 0 nan\n", ":2:", "MS 'nan'"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 1 endo 0 5\ng1 bn254 uniform 12 1 endo 0 6\n", ":3:",
         "the first at line 2"},
        {"zkpipe-msm-calib 2\ng1 bn254 uniform 12 2 endo 0 5\ng1 bn254 uniform 14 4 endo 0 5\n", ":3:",
         "threads 4, but line 2 has 2"},
        /* version 3: path lines */
        {"zkpipe-msm-calib 3\ng1 bn254 uniform 12 1 endo 0 5\n", ":2:", "a row before any 'path"},
        {"zkpipe-msm-calib 3\nmachine m\npath avx\n", ":3:", "path 'avx' is not scalar or vector"},
        {"zkpipe-msm-calib 3\npath\n", ":2:", "path '' is not scalar or vector"},
        {"zkpipe-msm-calib 3\npath vector scalar\n", ":2:", "path 'vector' is not scalar or vector"},
        {"zkpipe-msm-calib 2\npath vector\n", ":2:", "a 'path' line in a format 2 file"},
        {"zkpipe-msm-calib 1\npath scalar\n", ":2:", "a 'path' line in a format 1 file"},
        {"zkpipe-msm-calib 3\npath vector\ng1 bn254 uniform 12 1 endo 0 5\npath scalar\n"
         "g1 bn254 uniform 12 1 endo 0 5\npath vector\ng1 bn254 uniform 12 1 endo 0 6\n", ":7:",
         "on the path vector (the first at line 3)"},
        {"zkpipe-msm-calib 3\npath scalar\ng1 bn254 uniform 12 1 endo 0 5 1\n", ":3:", "more than 8"},
        {"zkpipe-msm-calib 3\npath scalar\ng1 bn254 uniform 12 1 endo 0 -5\n", ":3:", "MS '-5'"},
        /* version 4: kp rows */
        {"zkpipe-msm-calib 3\npath scalar\nkp g1 bn254 uniform 12 1 endo 0 1 0 0.9\n", ":3:",
         "a 'kp' row in a format 3 file"},
        {"zkpipe-msm-calib 4\nkp g1 bn254 uniform 12 1 endo 0 1 0 0.9\n", ":2:", "a row before any 'path"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 1 0\n", ":3:", "(11 fields), got 10"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 1 0 0.9 1\n", ":3:", "got more than 11"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 2 0 0.9\n", ":3:", "K offset '2'"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 0 -2 0.9\n", ":3:", "P offset '-2'"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 0 0 0.9\n", ":3:", "both 0"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 1 0 0\n", ":3:", "RATIO '0'"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 1 0 101\n", ":3:", "RATIO '101'"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 2 1 0 0.9\n", ":3:", "window offset '2'"},
        {"zkpipe-msm-calib 4\npath vector\nkp g3 bn254 uniform 12 1 endo 0 1 0 0.9\n", ":3:", "group 'g3'"},
        {"zkpipe-msm-calib 4\npath vector\nkp g1 bn254 uniform 12 1 endo 0 1 0 0.9\n"
         "kp g1 bn254 uniform 12 1 endo 0 1 0 0.8\n", ":4:", "a second kp row for g1 bn254 uniform 2^12 1 endo "
         "window +0 K +1 P +0 on the path vector (the first at line 3)"},
        {"zkpipe-msm-calib 4\npath vector\ng1 bn254 uniform 12 2 endo 0 5\nkp g1 bn254 uniform 12 4 endo 0 1 0 0.9\n",
         ":4:", "threads 4, but line 3 has 2"},
    };
    char path[256];
    CHECK(calib_switch_table(path, sizeof path));
    CHECK(zp_msm_calib_load(path) == 0);
    CHECK(strstr(zp_msm_calib_source(), path) && strstr(zp_msm_calib_source(), "(test  table)"));
    unlink(path);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char bp[256];
        CHECK(calib_write(bp, sizeof bp, bad[i].text, strlen(bad[i].text)));
        int rc = zp_msm_calib_load(bp);
        const char *m = zp_err_msg();
        char where[300];
        snprintf(where, sizeof where, "%s%s", bp, bad[i].line);
        if (rc != ZP_EFORMAT || !strstr(m, where) || !strstr(m, bad[i].what)) {
            fprintf(stderr, "calib bad file %zu: rc %d, message '%s' (want '%s' and '%s')\n", i, rc, m, where,
                    bad[i].what);
            fails++;
        }
        unlink(bp);
    }
    /* a line too long, a NUL byte */
    char big[700];
    memset(big, 'x', sizeof big);
    memcpy(big, "zkpipe-msm-calib 1\n", 19);
    big[sizeof big - 1] = '\n';
    char bp[256];
    CHECK(calib_write(bp, sizeof bp, big, sizeof big));
    CHECK(zp_msm_calib_load(bp) == ZP_EFORMAT && strstr(zp_err_msg(), ":2: line longer"));
    unlink(bp);
    static const char nul[] = "zkpipe-msm-calib 1\ng1 bn254 uniform 12 1 1\0 2\n";
    CHECK(calib_write(bp, sizeof bp, nul, sizeof nul - 1));
    CHECK(zp_msm_calib_load(bp) == ZP_EFORMAT && strstr(zp_err_msg(), ":2: a NUL byte"));
    unlink(bp);
    CHECK(zp_msm_calib_load("/nonexistent/msm-calib.txt") == -ENOENT &&
          strstr(zp_err_msg(), "/nonexistent/msm-calib.txt"));
    /* the refused files left the test table in use; a file with one key keeps the others */
    CHECK(zp_msm_auto_method(1, 0, false, 600) == ZP_MSM_PLAIN);
    CHECK(zp_msm_auto_method(2, 1, true, 400) == ZP_MSM_ENDO);
    CHECK(zp_msm_auto_method(2, 1, true, 460) == ZP_MSM_PLAIN);
    static const char one[] = "zkpipe-msm-calib 1\ng2 bn254 uniform 16 2 1\n";
    CHECK(calib_write(bp, sizeof bp, one, sizeof one - 1));
    CHECK(zp_msm_calib_load(bp) == 0);
    CHECK(zp_msm_auto_method(2, 0, false, 100) == ZP_MSM_PLAIN);
    CHECK(zp_msm_auto_method(2, 0, true, 100) == ZP_MSM_ENDO);    /* the previous table's */
    CHECK(zp_msm_auto_method(1, 0, false, 600) == ZP_MSM_PLAIN);
    unlink(bp);
    /* a mix between the two measured shapes: ratio 0.8 (witness, 0.15 long) .. 1.2 (uniform) */
    static const char mix[] = "zkpipe-msm-calib 1\ng1 bn254 uniform 16 1.2 1\ng1 bn254 witness 16 0.8 1\n";
    CHECK(calib_write(bp, sizeof bp, mix, sizeof mix - 1));
    CHECK(zp_msm_calib_load(bp) == 0);
    CHECK(zp_msm_auto_method(1, 0, true, 1 << 16) == ZP_MSM_ENDO);
    CHECK(zp_msm_auto_method(1, 0, false, 1 << 16) == ZP_MSM_PLAIN);
    CHECK(zp_msm_auto_method_mix(1, 0, 0.0, 1 << 16) == ZP_MSM_ENDO);
    CHECK(zp_msm_auto_method_mix(1, 0, 0.5, 1 << 16) == ZP_MSM_ENDO);   /* 0.965 */
    CHECK(zp_msm_auto_method_mix(1, 0, 0.6, 1 << 16) == ZP_MSM_PLAIN);  /* 1.012 */
    unlink(bp);
    zp_msm_calib_reset();
    CHECK(strstr(zp_msm_calib_source(), "built-in") != NULL);
}

/* kp rows (format 4, session 20) in the pick: a ratio below 0.98 at the window the table takes
 * is taken (the lowest); the method stays the window rows' choice; rows at another window, and
 * within 2%, are not; a file of kp rows alone keeps the windows, a
 * file of window rows for a key drops its kp rows */
static void test_calib_kp(void)
{
#define KP_ROWS                                                                                \
    "g1 bn254 uniform 12 1 endo 0 100\ng1 bn254 uniform 12 1 plain 0 110\n"                    \
    "g1 bn254 uniform 16 1 endo 0 100\ng1 bn254 uniform 16 1 plain 0 110\n"                    \
    "kp g1 bn254 uniform 12 1 endo 0 -1 0 0.99\nkp g1 bn254 uniform 12 1 endo 0 1 0 0.95\n"    \
    "kp g1 bn254 uniform 16 1 plain 0 -1 0 0.8\nkp g1 bn254 uniform 16 1 endo 1 -1 0 0.5\n"    \
    "g1 bn254 uniform 12 2 endo 0 100\ng1 bn254 uniform 12 2 plain 0 110\n"                    \
    "kp g1 bn254 uniform 12 2 endo 0 0 1 0.9\nkp g1 bn254 uniform 12 2 endo 0 1 0 0.95\n"
    static const char tab[] = "zkpipe-msm-calib 4\nmachine kp\npath scalar\n" KP_ROWS "path vector\n" KP_ROWS;
#undef KP_ROWS
    char path[256];
    for (int v = 0; v < 2; v++) {
        zp_msm_calib_reset();
        const zp_msm_pick_t bw = zp_msm_auto_pick_path(1, 0, 0.15, 1 << 12, 1, v);  /* built-in */
        CHECK(calib_load_text(path, sizeof path, tab, sizeof tab - 1) == 0);
        zp_msm_pick_t pk = zp_msm_auto_pick_path(1, 0, 1.0, 1 << 12, 1, v);
        CHECK(pk.method == ZP_MSM_ENDO && pk.dc[0] == 0 && pk.dk[0] == 1 && pk.dp[0] == 0);
        pk = zp_msm_auto_pick_path(1, 0, 1.0, 1 << 13, 1, v);   /* 0.75 of the way: rounds to 1 */
        CHECK(pk.dk[0] == 1);
        pk = zp_msm_auto_pick_path(1, 0, 1.0, 1 << 15, 1, v);   /* 0.25 */
        CHECK(pk.dk[0] == 0);
        /* the method from the window rows alone: endo 100 < plain 110 (plain's K/2 at 0.8 does
         * not turn it); endo's dc +1 kp row is not at its window */
        pk = zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 1, v);
        CHECK(pk.method == ZP_MSM_ENDO && pk.dk[1] == -1 && pk.dk[0] == 0 && pk.dc[0] == 0);
        pk = zp_msm_auto_pick_path(1, 0, 1.0, 1 << 12, 2, v);   /* P doubled: 0.9 beats 0.95 */
        CHECK(pk.method == ZP_MSM_ENDO && pk.dk[0] == 0 && pk.dp[0] == 1);
        /* another key (the other shape): the built-in table's offsets, as before the load */
        pk = zp_msm_auto_pick_path(1, 0, 0.15, 1 << 12, 1, v);
        CHECK(pk.method == bw.method && !memcmp(pk.dc, bw.dc, sizeof pk.dc) && !memcmp(pk.dk, bw.dk, sizeof pk.dk) &&
              !memcmp(pk.dp, bw.dp, sizeof pk.dp));
        /* with the vector path in use (where the CPU has it) the MSM's plan follows */
        if (v == (int)zp_msm_vector()) {
            zp_msm_info_t au, m0;
            zp_msm_opts_t o = {.method = ZP_MSM_PLAIN, .model_window = true}, op = {.method = ZP_MSM_PLAIN};
            zp_msm_g1_bn254_plan_info(&au, 1 << 16, 1, false, &op);   /* plain at the table's */
            zp_msm_g1_bn254_plan_info(&m0, 1 << 16, 1, false, &o);
            CHECK(au.method == ZP_MSM_PLAIN && au.dk == -1 && au.K * 2 == m0.K && au.c == m0.c);
        }
    }
    /* kp rows alone: the windows stay, the kp rows are replaced */
    static const char kp_only[] = "zkpipe-msm-calib 4\npath scalar\nkp g1 bn254 uniform 12 1 endo 0 1 0 1.5\n"
                                  "path vector\nkp g1 bn254 uniform 12 1 endo 0 1 0 1.5\n";
    CHECK(calib_load_text(path, sizeof path, kp_only, sizeof kp_only - 1) == 0);
    zp_msm_pick_t pk = zp_msm_auto_pick(1, 0, 1.0, 1 << 12, 1);
    CHECK(pk.method == ZP_MSM_ENDO && pk.dk[0] == 0);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1 << 16, 1).dk[1] == 0);             /* plain's 0.8 gone */
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1 << 12, 2).dp[0] == 1);            /* another class: kept */
    /* window rows alone for the key and class: its kp rows go */
    CHECK(calib_load_text(path, sizeof path, tab, sizeof tab - 1) == 0);
    static const char win[] = "zkpipe-msm-calib 3\npath scalar\ng1 bn254 uniform 12 2 endo 0 100\n"
                              "g1 bn254 uniform 12 2 plain 0 110\npath vector\ng1 bn254 uniform 12 2 endo 0 100\n"
                              "g1 bn254 uniform 12 2 plain 0 110\n";
    CHECK(calib_load_text(path, sizeof path, win, sizeof win - 1) == 0);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1 << 12, 2).dp[0] == 0);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1 << 12, 1).dk[0] == 1);            /* 1T kept */
    zp_msm_calib_reset();
}

/* the table per arithmetic path (format 3, session 16): the scalar rows say the split wins
 * (ratio 0.8) with the window +1 for both methods, the vector rows say plain wins (1.25) with
 * -1; every group, curve, shape, both thread classes (1 and 2). The pick follows the path
 * asked for (zp_msm_auto_pick_path) and, where the CPU has both paths, the path in use
 * (zp_msm_set_vector: zp_msm_auto_pick and plan_info, i.e. what an MSM runs) */
static bool calib_path_table(char *path, size_t cap, bool with_scalar, bool with_vector)
{
    static const char *gc[] = {"g1 bn254", "g1 bls12_381", "g2 bn254", "g2 bls12_381"};
    char *text = malloc(32768);
    if (!text) return false;
    size_t o = (size_t)snprintf(text, 32768, "zkpipe-msm-calib 3\nmachine path test\n");
    for (int v = 0; v < 2; v++) {
        if (!(v ? with_vector : with_scalar)) continue;
        o += (size_t)snprintf(text + o, 32768 - o, "path %s\n", v ? "vector" : "scalar");
        for (int i = 0; i < 4; i++)
            for (int w = 0; w < 2; w++)
                for (int t = 1; t <= 2; t++)
                    for (int l = 12; l <= 20; l += 8)
                        for (int m = 0; m < 2; m++) {
                            /* scalar: endo 80, plain 100; vector: endo 125, plain 100; the
                             * offset (+1 scalar, -1 vector) 10% faster */
                            const double base = m ? 100.0 : v ? 125.0 : 80.0;
                            const int fast = v ? -1 : 1;
                            const char *sh = w ? "witness" : "uniform", *me = m ? "plain" : "endo";
                            o += (size_t)snprintf(text + o, 32768 - o,
                                                  "%s %s %d %d %s 0 %.2f\n%s %s %d %d %s %d %.2f\n",
                                                  gc[i], sh, l, t, me, base, gc[i], sh, l, t, me, fast, base * 0.9);
                        }
    }
    bool ok = calib_write(path, cap, text, o);
    free(text);
    return ok;
}

/* plan_info of every group for n points, nt threads, NULL opts (what an AUTO MSM runs): the
 * method and offset want (the plan on the path in use) */
static void calib_path_plans(size_t n, unsigned nt, bool wit, zp_msm_method_t want, int want_dc, const char *what)
{
    zp_msm_info_t in[4];
    zp_msm_g1_bn254_plan_info(&in[0], n, nt, wit, NULL);
    zp_msm_g1_bls12_381_plan_info(&in[1], n, nt, wit, NULL);
    zp_msm_g2_bn254_plan_info(&in[2], n, nt, wit, NULL);
    zp_msm_g2_bls12_381_plan_info(&in[3], n, nt, wit, NULL);
    for (int i = 0; i < 4; i++)
        if (in[i].method != want || in[i].dc != want_dc) {
            fprintf(stderr, "calib paths %s: group %d n=%zu threads=%u witness=%d: method %d dc %d, want %d %d\n",
                    what, i, n, nt, wit, in[i].method, in[i].dc, want, want_dc);
            fails++;
        }
}

static void test_calib_paths(void)
{
    char path[256];
    const bool had = zp_msm_vector();
    CHECK(calib_path_table(path, sizeof path, true, true));
    CHECK(zp_msm_calib_load(path) == 0);
    unlink(path);
    CHECK(strstr(zp_msm_calib_source(), "(path test) (both paths)") != NULL);
    for (unsigned g = 1; g <= 2; g++)
        for (unsigned cv = 0; cv < 2; cv++)
            for (unsigned t = 1; t <= 2; t++)
                for (int w = 0; w < 2; w++) {
                    const double lf = w ? 0.15 : 1.0;
                    for (size_t n = 1 << 10; n <= (1 << 22); n <<= 3) {
                        zp_msm_pick_t ps = zp_msm_auto_pick_path(g, cv, lf, n, t, false);
                        zp_msm_pick_t pv = zp_msm_auto_pick_path(g, cv, lf, n, t, true);
                        CHECK(ps.method == ZP_MSM_ENDO && ps.dc[0] == 1 && ps.dc[1] == 1);
                        CHECK(pv.method == ZP_MSM_PLAIN && pv.dc[0] == -1 && pv.dc[1] == -1);
                    }
                    zp_msm_rows_t rs, rv;
                    zp_msm_calib_rows(&rs, g, cv, w, t, false);
                    zp_msm_calib_rows(&rv, g, cv, w, t, true);
                    CHECK(!rs.vector && !rs.fallback && !rs.none && rs.threads == t);
                    CHECK(rv.vector && !rv.fallback && !rv.none && rv.threads == t);
                }
    /* what an MSM runs: the path in use decides (where this CPU has both) */
    if (zp_msm_set_vector(true)) {
        CHECK(zp_msm_auto_pick(1, 0, 1.0, 1 << 16, 1).method == ZP_MSM_PLAIN);
        calib_path_plans(1 << 16, 1, false, ZP_MSM_PLAIN, -1, "vector");
        calib_path_plans(1 << 14, 2, true, ZP_MSM_PLAIN, -1, "vector");
    } else {
        printf("test_msm: no AVX-512 IFMA: the per-path pick checked through zp_msm_auto_pick_path only\n");
    }
    zp_msm_set_vector(false);
    CHECK(zp_msm_auto_pick(1, 0, 1.0, 1 << 16, 1).method == ZP_MSM_ENDO);
    calib_path_plans(1 << 16, 1, false, ZP_MSM_ENDO, 1, "scalar");
    calib_path_plans(1 << 14, 2, true, ZP_MSM_ENDO, 1, "scalar");
    zp_msm_set_vector(had);

    /* fallbacks: only scalar rows -> the vector path reads them (fallback), and the reverse */
    for (int only_vec = 0; only_vec < 2; only_vec++) {
        zp_msm_calib_clear();
        zp_msm_rows_t r;
        zp_msm_calib_rows(&r, 1, 0, false, 1, true);
        CHECK(r.none);
        CHECK(zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 1, true).method == ZP_MSM_ENDO);  /* no rows */
        CHECK(calib_path_table(path, sizeof path, !only_vec, only_vec));
        CHECK(zp_msm_calib_load(path) == 0);
        unlink(path);
        const bool other = !only_vec;     /* the path without rows */
        zp_msm_calib_rows(&r, 2, 1, true, 2, other);
        CHECK(!r.none && r.fallback && r.vector == (bool)only_vec && r.threads == 2);
        zp_msm_pick_t pk = zp_msm_auto_pick_path(2, 1, 0.15, 1 << 18, 2, other);
        CHECK(pk.method == (only_vec ? ZP_MSM_PLAIN : ZP_MSM_ENDO) && pk.dc[0] == (only_vec ? -1 : 1));
        CHECK(strstr(zp_msm_calib_source(), only_vec ? "scalar path: none" : "vector path: none") != NULL);
    }
    /* the path comes before the thread class: vector one-thread rows (plain) beat scalar
     * two-thread rows (endo) for a two-thread MSM on the vector path */
    zp_msm_calib_clear();
    static const char cls[] = "zkpipe-msm-calib 3\npath scalar\n"
                              "g1 bn254 uniform 16 2 endo 0 80\ng1 bn254 uniform 16 2 plain 0 100\n"
                              "path vector\ng1 bn254 uniform 16 1 endo 0 125\ng1 bn254 uniform 16 1 plain 0 100\n";
    CHECK(calib_load_text(path, sizeof path, cls, sizeof cls - 1) == 0);
    CHECK(zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 2, true).method == ZP_MSM_PLAIN);
    CHECK(zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 2, false).method == ZP_MSM_ENDO);
    CHECK(zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 1, false).method == ZP_MSM_ENDO);   /* 2T rows, fallback */
    /* format 2 rows count for both paths (and replace both paths' rows of their key) */
    static const char v2[] = "zkpipe-msm-calib 2\ng1 bn254 uniform 16 1 endo 0 80\ng1 bn254 uniform 16 1 plain 0 100\n";
    CHECK(calib_load_text(path, sizeof path, v2, sizeof v2 - 1) == 0);
    CHECK(zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 1, true).method == ZP_MSM_ENDO);
    CHECK(zp_msm_auto_pick_path(1, 0, 1.0, 1 << 16, 1, false).method == ZP_MSM_ENDO);
    zp_msm_rows_t r2;
    zp_msm_calib_rows(&r2, 1, 0, false, 1, true);
    CHECK(r2.vector && !r2.fallback && r2.threads == 1);
    /* the built-in table has both paths' rows for every key (the vector ones measured on an
     * AVX-512 IFMA machine) */
    zp_msm_calib_reset();
    CHECK(strstr(zp_msm_calib_source(), "scalar path: built-in") && strstr(zp_msm_calib_source(), "vector path: built-in"));
    for (unsigned g = 1; g <= 2; g++)
        for (unsigned cv = 0; cv < 2; cv++)
            for (unsigned t = 1; t <= 2; t++)
                for (int w = 0; w < 2; w++)
                    for (int v = 0; v < 2; v++) {
                        zp_msm_rows_t r;
                        zp_msm_calib_rows(&r, g, cv, w, t, v);
                        CHECK(!r.none && !r.fallback && r.vector == (bool)v && r.threads == t);
                    }
}

static void test_auto(zp_pool_t **pools)
{
    char path[256];
    CHECK(calib_switch_table(path, sizeof path));
    CHECK(zp_msm_calib_load(path) == 0);
    unlink(path);
    static const size_t s1[] = {200, 400, 600, 1100}, s2[] = {200, 400, 600};
    test_auto_g1_bn254(pools, 3, s1, 4);
    test_auto_g1_bls12_381(pools, 3, s1, 4);
    test_auto_g2_bn254(pools, 3, s2, 3);
    test_auto_g2_bls12_381(pools, 3, s2, 3);
    zp_msm_calib_reset();
}

/* every test above, on the path zp_msm_vector() says */
static void run_all(zp_pool_t **pools, zp_pool_t **wide)
{
    static const size_t g1_sizes[] = {0, 1, 2, 3, 8, 9, 10, 17, 31, 64, 100, 257, 1000, 2500};
    static const size_t g2_sizes[] = {0, 1, 3, 9, 13, 50, 129, 700};
    size_t ng1 = sizeof g1_sizes / sizeof g1_sizes[0], ng2 = sizeof g2_sizes / sizeof g2_sizes[0];
    test_g1_bn254(pools, 3, g1_sizes, ng1);
    test_g1_bls12_381(pools, 3, g1_sizes, ng1);
    test_g2_bn254(pools, 3, g2_sizes, ng2);
    test_g2_bls12_381(pools, 3, g2_sizes, ng2);
    /* large enough for the plan to split points across tasks with several threads, and
     * (16 threads) more threads than windows, so the plan also splits the points (P > 1) */
    static const size_t big[] = {9000};
    test_g1_bn254(wide, 2, big, 1);
    /* multi-MSM, witness-like scalars: small n, and n large enough for several scalar-1
     * tasks (MSM_ONE_MIN = 2048 ones each) and point splits with 16 threads */
    static const size_t msizes[] = {9, 40, 700};
    for (size_t i = 0; i < sizeof msizes / sizeof msizes[0]; i++) {
        test_multi_g1_bn254(pools, 3, msizes[i]);
        test_multi_g1_bls12_381(pools, 3, msizes[i]);
        test_multi_g2_bn254(pools, 3, msizes[i] / 2 + 5);
        test_multi_g2_bls12_381(pools, 3, msizes[i] / 2 + 5);
    }
    test_multi_g1_bn254(wide, 2, 14000);
    /* sum2: (n1, n2) with either empty, tiny totals, and the boundary inside task ranges */
    static const size_t s2[][2] = {{0, 0}, {0, 17}, {23, 0}, {1, 1}, {3, 5}, {5, 4}, {9, 1},
                                   {1, 40}, {100, 31}, {257, 700}};
    for (size_t i = 0; i < sizeof s2 / sizeof s2[0]; i++) {
        test_sum2_g1_bn254(pools, 3, s2[i][0], s2[i][1]);
        test_sum2_g1_bls12_381(pools, 3, s2[i][0], s2[i][1]);
        test_sum2_g2_bn254(pools, 3, s2[i][0] / 2 + (s2[i][0] > 0), s2[i][1] / 2 + (s2[i][1] > 0));
        test_sum2_g2_bls12_381(pools, 3, s2[i][0] / 2 + (s2[i][0] > 0), s2[i][1] / 2 + (s2[i][1] > 0));
    }
    test_sum2_g1_bn254(wide, 2, 4000, 5000);
    test_norm_bn254();
    test_norm_bls12_381();
    test_fold_g1_bn254(pools[1], 3000);
    test_fold_g1_bls12_381(pools[1], 3000);
    test_fold_g2_bn254(NULL, 1200);
    test_fold_g2_bls12_381(NULL, 1200);
    test_vec_g1_bn254(pools[1], 3001);
    test_vec_g1_bls12_381(pools[1], 3001);
    test_vec_g2_bn254(NULL, 1500);
    test_vec_g2_bls12_381(NULL, 1500);
    test_kp_g1_bn254(pools[2], 2500);
    test_kp_g1_bls12_381(pools[1], 1200);
    test_kp_g2_bn254(pools[2], 600);
    test_kp_g2_bls12_381(NULL, 300);
    test_auto(pools);
    test_window(pools);
}

int main(void)
{
    zp_pool_t *pools[3] = {NULL, zp_pool_new(2), zp_pool_new(3)};
    zp_pool_t *wide[2] = {NULL, zp_pool_new(16)};
    if (!pools[1] || !pools[2] || !wide[1]) {
        fprintf(stderr, "test_msm: cannot create thread pools\n");
        return 1;
    }
    /* the default path (vector where the CPU has AVX-512 IFMA), then, where that was the
     * vector path, everything again on the scalar one */
    bool vec = zp_msm_vector();
    printf("test_msm: vector path %s\n", vec ? "on (then off)" : "not available on this CPU");
    test_calib_errors();
    test_calib_paths();
    test_calib_kp();
    test_check_g1_bn254();
    test_check_g2_bn254();
    test_check_g1_bls12_381();
    test_check_g2_bls12_381();
    run_all(pools, wide);
    if (vec) {
        zp_msm_set_vector(false);
        run_all(pools, wide);
        zp_msm_set_vector(true);
    }
    zp_pool_destroy(&wide[1]);
    zp_pool_destroy(&pools[1]);
    zp_pool_destroy(&pools[2]);
    if (fails) {
        fprintf(stderr, "test_msm: %d checks failed\n", fails);
        return 1;
    }
    printf("test_msm: ok\n");
    return 0;
}
