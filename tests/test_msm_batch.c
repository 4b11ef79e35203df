/* test_msm_batch.c - unit tests of the same-base batched MSM (lib/msm/msm_batch.h): for G1 of
 * BN254 and BLS12-381, every job's result equals the plain multi-MSM on its own scalars
 * (zp_msm_<G>_<C>_multi_ex, itself checked against the naive sum by tests/test_msm.c) and,
 * for small sizes, the naive sum. m = 1..4 jobs (and 10: groups of ZP_MSM_BATCH_MAX), 1 and 2
 * bases, sizes 0, 1, 2, 9, odd and non-powers of two up to 2500, one of 9000 with 16 threads
 * (point ranges split across tasks), 1/2/3 threads, with the endomorphism, without it and
 * with forced windows. Jobs differ: uniform scalars, witness-like (0/1/small/r-small), all 0,
 * all 1, all r-1, edge values (0, 1, 2, r-1, r-2, 2^128 +- 1, lambda) and repeats of one
 * value (bucket conflicts); points include infinity, repeats and negations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msm/msm_batch.h"
#include "lib/util/util.h"

#define TEST_SEED 0x452821e638d01377ULL
#include "tests/test_common.h"

enum { MJ = 10, NB = 2 };

/* scalar i of job j, kind chosen per job */
static void pick(zp_scalar_t *k, unsigned kind, const zp_scalar_t *r, const zp_scalar_t *lam,
                 const zp_scalar_t *rep)
{
    memset(k, 0, sizeof *k);
    unsigned sel = (unsigned)(rnd64() % 10);
    switch (kind) {
    case 0: /* uniform below r */
        for (int j = 0; j < 4; j++) k->l[j] = rnd64();
        k->l[3] &= r->l[3] >> 1;
        return;
    case 1: /* witness-like */
        if (sel < 4) return;
        if (sel < 7) { k->l[0] = 1; return; }
        if (sel < 8) { k->l[0] = rnd64() >> (rnd64() % 64); return; }
        *k = *r;
        if (sel < 9) { k->l[0] -= 1 + rnd64() % 100; return; }       /* -1, -2, ... */
        for (int j = 0; j < 4; j++) k->l[j] = rnd64();
        k->l[3] &= r->l[3] >> 1;
        return;
    case 2: return;                                                   /* all 0 */
    case 3: k->l[0] = 1; return;                                      /* all 1 */
    case 4: *k = *r; k->l[0] -= 1; return;                            /* all r-1 */
    case 5: /* edge values */
        switch (sel) {
        case 0: return;
        case 1: k->l[0] = 1; return;
        case 2: k->l[0] = 2; return;
        case 3: *k = *r; k->l[0] -= 1; return;
        case 4: *k = *r; k->l[0] -= 2; return;
        case 5: k->l[2] = 1; k->l[0] = rnd64() & 1; return;           /* 2^128 (+1) */
        case 6: k->l[0] = k->l[1] = ~0ULL; return;                    /* 2^128 - 1 */
        case 7: *k = *lam; return;
        case 8: for (int j = 0; j < 4; j++) k->l[j] = ~0ULL; return;  /* unreduced */
        default: *k = *rep; return;
        }
    default: *k = *rep; return;                                       /* one value */
    }
}

#define BATCH_TESTS(C, FQ)                                                                     \
    static void naive_##C(zp_g1_##C##_t *out, const zp_g1a_##C##_t *p, const zp_scalar_t *k, size_t n) \
    {                                                                                          \
        zp_g1_##C##_set_inf(out);                                                              \
        for (size_t i = 0; i < n; i++) {                                                       \
            zp_g1_##C##_t t, u;                                                                \
            zp_g1_##C##_from_affine(&t, &p[i]);                                                \
            zp_g1_##C##_mul(&u, &t, &k[i]);                                                    \
            zp_g1_##C##_add(out, out, &u);                                                     \
        }                                                                                      \
    }                                                                                          \
    /* n points: multiples of G built by additions, with infinity, repeats and negations */   \
    static void bpoints_##C(zp_g1a_##C##_t *pa, size_t n)                                      \
    {                                                                                          \
        zp_g1_##C##_t *pj = malloc((n + 1) * sizeof *pj), g;                                   \
        zp_##FQ##_t *scr = malloc((n + 1) * sizeof *scr);                                      \
        zp_g1a_##C##_t ga;                                                                     \
        zp_g1_##C##_generator(&ga);                                                            \
        zp_g1_##C##_from_affine(&g, &ga);                                                      \
        zp_scalar_t k0 = {{rnd64(), rnd64(), rnd64(), rnd64() >> 4}};                          \
        if (n) zp_g1_##C##_mul(&pj[0], &g, &k0);                                               \
        for (size_t i = 1; i < n; i++) zp_g1_##C##_add(&pj[i], &pj[i - 1], i % 3 ? &g : &pj[0]); \
        zp_g1_##C##_batch_to_affine(pa, pj, n, scr);                                           \
        for (size_t i = 2; i < n; i++) {                                                       \
            unsigned sel = (unsigned)(rnd64() % 16);                                           \
            if (sel == 0) memset(&pa[i], 0, sizeof pa[i]);                                     \
            else if (sel == 1) pa[i] = pa[rnd64() % i];                                        \
            else if (sel == 2) zp_g1a_##C##_neg(&pa[i], &pa[rnd64() % i]);                     \
        }                                                                                      \
        free(pj);                                                                              \
        free(scr);                                                                             \
    }                                                                                          \
    static void test_##C(zp_pool_t **pools, unsigned npools, size_t n)                         \
    {                                                                                          \
        const zp_scalar_t *r = (const zp_scalar_t *)(const void *)&zp_fr_##C##_modulus;        \
        zp_g1a_##C##_t *pa[NB];                                                                \
        zp_scalar_t *k[MJ], rep;                                                               \
        for (int j = 0; j < 4; j++) rep.l[j] = rnd64();                                        \
        rep.l[3] &= r->l[3] >> 1;                                                              \
        for (int b = 0; b < NB; b++) {                                                         \
            pa[b] = malloc((n + 1) * sizeof *pa[b]);                                           \
            bpoints_##C(pa[b], n);                                                             \
        }                                                                                      \
        for (unsigned j = 0; j < MJ; j++) {                                                    \
            k[j] = malloc((n + 1) * sizeof *k[j]);                                             \
            static const unsigned kinds[MJ] = {1, 0, 5, 6, 2, 3, 4, 5, 1, 0};               \
            unsigned kind = kinds[j];                                                          \
            for (size_t i = 0; i < n; i++) pick(&k[j][i], kind, r, &zp_glv_##C##_lambda, &rep); \
        }                                                                                      \
        /* references: per job, the multi-MSM over the NB bases; the naive sum when small */  \
        zp_g1_##C##_t want[MJ * NB], got[MJ * NB];                                             \
        for (unsigned j = 0; j < MJ; j++) {                                                    \
            size_t sz = zp_msm_g1_##C##_multi_scratch_size(n, NB, 1);                          \
            void *scr = NULL;                                                                  \
            if (posix_memalign(&scr, 64, sz ? sz : 64)) abort();                               \
            zp_msm_g1_##C##_multi(&want[j * NB], (const zp_g1a_##C##_t *const *)pa, NB, k[j], n, scr, NULL); \
            free(scr);                                                                         \
            if (n <= 300)                                                                      \
                for (unsigned b = 0; b < NB; b++) {                                            \
                    zp_g1_##C##_t nv;                                                          \
                    naive_##C(&nv, pa[b], k[j], n);                                            \
                    CHECK(zp_g1_##C##_eq(&nv, &want[j * NB + b]));                             \
                }                                                                              \
        }                                                                                      \
        static const unsigned ms[] = {1, 2, 3, 4, MJ};                                         \
        for (unsigned pi = 0; pi < npools; pi++) {                                             \
            unsigned nt = zp_pool_size(pools[pi]);                                             \
            for (unsigned mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)                         \
                for (unsigned nb = 1; nb <= NB; nb++)                                          \
                    for (int mode = 0; mode < 6; mode++) {                                     \
                        unsigned m = ms[mi], off = mode >= 3 ? 4 : 0; /* jobs off.. */        \
                        if (mode % 3 && (nb == 1 || m == MJ)) continue;                        \
                        if (m + off > MJ) continue;                                            \
                        if (n >= 1000 && (mode % 3 || pi == 2)) continue;   /* time */          \
                        zp_msm_opts_t o = {.no_endo = mode % 3 == 1, .c = mode % 3 == 2 ? 3 + (unsigned)(n % 9) : 0}; \
                        size_t sz = zp_msm_g1_##C##_batch_scratch_size(n, nb, m, nt, &o);       \
                        void *scr = NULL;                                                      \
                        if (posix_memalign(&scr, 64, sz ? sz : 64)) abort();                   \
                        memset(got, 0xa5, sizeof got);                                         \
                        zp_msm_g1_##C##_batch(got, (const zp_g1a_##C##_t *const *)pa, nb,      \
                                              (const zp_scalar_t *const *)(k + off), m, n, scr, pools[pi], &o); \
                        for (unsigned j = 0; j < m; j++)                                       \
                            for (unsigned b = 0; b < nb; b++)                                  \
                                if (!zp_g1_##C##_eq(&got[j * nb + b], &want[(off + j) * NB + b])) {    \
                                    fprintf(stderr, "batch g1_%s n=%zu m=%u bases=%u job=%u base=%u " \
                                            "threads=%u endo=%d c=%u: differs from the per-job MSM\n", \
                                            #C, n, m, nb, off + j, b, nt, !o.no_endo, o.c);          \
                                    fails++;                                                   \
                                }                                                              \
                        free(scr);                                                             \
                    }                                                                          \
        }                                                                                      \
        for (int b = 0; b < NB; b++) free(pa[b]);                                              \
        for (unsigned j = 0; j < MJ; j++) free(k[j]);                                          \
    }

BATCH_TESTS(bn254, fq_bn254)
BATCH_TESTS(bls12_381, fq_bls12_381)

int main(void)
{
    zp_pool_t *pools[3] = {NULL, zp_pool_new(2), zp_pool_new(3)};
    zp_pool_t *wide[1] = {zp_pool_new(16)};
    if (!pools[1] || !pools[2] || !wide[0]) {
        fprintf(stderr, "test_msm_batch: cannot create thread pools\n");
        return 1;
    }
    static const size_t sizes[] = {0, 1, 2, 8, 9, 17, 31, 100, 257, 1000, 2500};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        test_bn254(pools, 3, sizes[i]);
        test_bls12_381(pools, 3, sizes[i]);
    }
    test_bn254(wide, 1, 9000);
    test_bls12_381(wide, 1, 9000);
    zp_pool_destroy(&wide[0]);
    zp_pool_destroy(&pools[1]);
    zp_pool_destroy(&pools[2]);
    if (fails) {
        fprintf(stderr, "test_msm_batch: %d checks failed\n", fails);
        return 1;
    }
    printf("test_msm_batch: ok\n");
    return 0;
}
