/* test_msm_fixed.c - unit tests of lib/msm/msm_fixed.h: the fixed-base MSM over a table equals
 * the naive sum of scalar multiplications and the regular MSM (msm.h) for G1 of BN254 and
 * BLS12-381, sizes 0, 1, non powers of two up to 4100, several windows c and depths (1: no
 * table; 2, 3; the full W: one round), 1, 2 and 3 threads; scalars mix 0, 1, r-1, 2^k, r-2^k,
 * unreduced 2^256-1 and random ones, points include infinity, repeats and negations; also the
 * level API with phi's x stored (the bench's variant). The
 * table is untrusted input: a corrupted, short, foreign or mis-sized table is refused by
 * the check and by the MSM with a message naming what is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msm/msm_fixed.h"
#include "lib/util/util.h"

#define TEST_SEED 0x3c6ef372fe94f82bULL
#include "tests/test_common.h"

/* scalar i: edge values by turn, random ones in between */
static void edge_scalar(zp_scalar_t *k, size_t i, const zp_scalar_t *r)
{
    memset(k, 0, sizeof *k);
    unsigned b = (unsigned)(rnd64() % 256);
    switch (i % 9) {
    case 0: break;                                   /* 0 */
    case 1: k->l[0] = 1; break;                      /* 1 */
    case 2:                                          /* r - 1 */
        *k = *r;
        k->l[0] -= 1;
        break;
    case 3: k->l[b / 64] = 1ULL << (b % 64); break;  /* 2^b */
    case 4: {                                        /* r - 2^b (b < 253) */
        *k = *r;
        unsigned e = b % 253;
        uint64_t borrow = 1ULL << (e % 64);
        for (unsigned j = e / 64; j < 4 && borrow; j++) {
            uint64_t v = k->l[j] - borrow;
            borrow = k->l[j] < borrow;
            k->l[j] = v;
        }
        break;
    }
    case 5:                                          /* 2^256 - 1 (unreduced) */
        for (int j = 0; j < 4; j++) k->l[j] = ~0ULL;
        break;
    case 6: k->l[0] = rnd64() % 5000; break;         /* small */
    default:
        for (int j = 0; j < 4; j++) k->l[j] = rnd64();
        k->l[3] &= r->l[3] >> 1;
        break;
    }
}

#define FIXED_TESTS(C, FQ)                                                                     \
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
    /* random multiples of G with infinity, repeated and negated points mixed in */           \
    static void points_##C(zp_g1a_##C##_t *pa, size_t n)                                      \
    {                                                                                          \
        zp_g1_##C##_t g, *pj = malloc((n + 1) * sizeof *pj);                                   \
        zp_##FQ##_t *scr = malloc((n + 1) * sizeof *scr);                                      \
        zp_g1a_##C##_t ga;                                                                     \
        zp_g1_##C##_generator(&ga);                                                            \
        zp_g1_##C##_from_affine(&g, &ga);                                                      \
        for (size_t i = 0; i < n; i++) {                                                       \
            zp_scalar_t k = {{rnd64(), rnd64(), rnd64(), rnd64() >> 8}};                       \
            if (i >= 3 && i % 3 == 0)                                                          \
                zp_g1_##C##_add(&pj[i], &pj[i - 1], &pj[i - 3]);                               \
            else                                                                               \
                zp_g1_##C##_mul(&pj[i], &g, &k);                                               \
        }                                                                                      \
        zp_g1_##C##_batch_to_affine(pa, pj, n, scr);                                           \
        for (size_t i = 5; i < n; i += 17) memset(&pa[i], 0, sizeof pa[i]);  /* infinity */   \
        for (size_t i = 7; i < n; i += 23) pa[i] = pa[i - 1];                /* repeat */     \
        for (size_t i = 11; i < n; i += 29) zp_g1a_##C##_neg(&pa[i], &pa[i - 2]); /* -P */    \
        free(pj);                                                                              \
        free(scr);                                                                             \
    }                                                                                          \
    static void test_sizes_##C(zp_pool_t *const *pools, unsigned npools, const size_t *sizes,  \
                               size_t nsizes)                                                  \
    {                                                                                          \
        static const unsigned cs[] = {4, 7, 11, 13};                                           \
        zp_scalar_t rm;                                                                        \
        memcpy(rm.l, zp_fr_##C##_modulus.l, sizeof rm.l);                                      \
        const zp_scalar_t *r = &rm;                                                            \
        for (size_t si = 0; si < nsizes; si++) {                                               \
            size_t n = sizes[si];                                                              \
            zp_g1a_##C##_t *pa = malloc((n + 1) * sizeof *pa);                                 \
            zp_scalar_t *k = malloc((n + 1) * sizeof *k);                                      \
            points_##C(pa, n);                                                                 \
            for (size_t i = 0; i < n; i++) edge_scalar(&k[i], i + si, r);                      \
            zp_g1_##C##_t want, reg, got;                                                      \
            naive_##C(&want, pa, k, n);                                                        \
            {                                                                                  \
                void *s = NULL;                                                                \
                size_t sz = zp_msm_g1_##C##_scratch_size(n, 1);                                \
                CHECK(!posix_memalign(&s, 64, sz ? sz : 64));                                  \
                zp_msm_g1_##C(&reg, pa, k, n, s, NULL);                                        \
                free(s);                                                                       \
                CHECK(zp_g1_##C##_eq(&reg, &want));                                            \
            }                                                                                  \
            for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {                         \
                unsigned c = cs[ci], W = zp_msm_fixed_g1_##C##_windows(c);                     \
                const unsigned depths[] = {1, 2, 3, W};                                        \
                for (size_t di = 0; di < 4; di++) {                                            \
                    unsigned depth = depths[di];                                               \
                    if (n > 300 && (di == 1 || ci == 0)) continue;  /* keep it short */        \
                    size_t tb = zp_msm_fixed_g1_##C##_table_size(n, c, depth);                 \
                    void *tab = NULL;                                                          \
                    CHECK(tb >= ZP_MSM_FIXED_HDR_BYTES);                                       \
                    if (posix_memalign(&tab, 64, tb)) {                                        \
                        fails++;                                                               \
                        continue;                                                              \
                    }                                                                          \
                    CHECK(!zp_msm_fixed_g1_##C##_table_build(tab, tb, pa, n, c, depth, pools[di % npools])); \
                    char err[200] = "";                                                        \
                    CHECK(!zp_msm_fixed_g1_##C##_check(tab, tb, pa, n, true, err, sizeof err)); \
                    for (unsigned pi = 0; pi < npools; pi++) {                                 \
                        unsigned nt = zp_pool_size(pools[pi]);                                 \
                        void *s = NULL;                                                        \
                        size_t sz = zp_msm_fixed_g1_##C##_scratch_size(n, c, depth, nt);       \
                        CHECK(sz > 0);                                                         \
                        if (posix_memalign(&s, 64, sz)) {                                      \
                            fails++;                                                           \
                            continue;                                                          \
                        }                                                                      \
                        memset(&got, 0x5a, sizeof got);                                        \
                        int rc = zp_msm_fixed_g1_##C(&got, pa, k, n, tab, tb, s, pools[pi], err, sizeof err); \
                        CHECK(rc == 0);                                                        \
                        if (rc || !zp_g1_##C##_eq(&got, &want) || !zp_g1_##C##_eq(&got, &reg)) { \
                            fprintf(stderr, #C " n=%zu c=%u depth=%u threads=%u: %s\n", n, c,   \
                                    depth, nt, rc ? err : "wrong sum");                        \
                            fails++;                                                           \
                        }                                                                      \
                        /* the same through the level API with phi's x stored */               \
                        if (pi == npools - 1 && depth > 1 && s) {                              \
                            const zp_g1a_##C##_t *lv[ZP_GLV_BITS / ZP_MSM_FIXED_C_MIN + 1];    \
                            const zp_##FQ##_t *px[ZP_GLV_BITS / ZP_MSM_FIXED_C_MIN + 1];       \
                            zp_##FQ##_t *pxa = malloc(((size_t)depth * n + 1) * sizeof *pxa);  \
                            const zp_##FQ##_t *beta = zp_g1_##C##_endo_beta();                 \
                            for (unsigned d = 0; d < depth; d++) {                             \
                                const zp_g1a_##C##_t *l = d ? (const zp_g1a_##C##_t *)(const void *)((const uint8_t *)tab + ZP_MSM_FIXED_HDR_BYTES) + (size_t)(d - 1) * n : pa; \
                                if (d) lv[d - 1] = l;                                          \
                                for (size_t i = 0; i < n; i++) zp_##FQ##_mul(&pxa[(size_t)d * n + i], &l[i].x, beta); \
                                px[d] = pxa + (size_t)d * n;                                   \
                            }                                                                  \
                            unsigned R = (W + depth - 1) / depth;                              \
                            zp_msm_fixed_g1_##C##_levels(&got, pa, lv, px, depth, R, c, k, n, s, pools[pi]); \
                            if (!zp_g1_##C##_eq(&got, &want)) {                                \
                                fprintf(stderr, #C " n=%zu c=%u depth=%u: wrong sum with stored phi\n", n, c, depth); \
                                fails++;                                                       \
                            }                                                                  \
                            free(pxa);                                                         \
                        }                                                                      \
                        free(s);                                                               \
                    }                                                                          \
                    free(tab);                                                                 \
                }                                                                              \
            }                                                                                  \
            free(pa);                                                                          \
            free(k);                                                                           \
        }                                                                                      \
    }                                                                                          \
    /* a table is refused, with the field named, when anything about it is wrong */           \
    static void test_refuse_##C(void)                                                          \
    {                                                                                          \
        enum { N = 300 };                                                                      \
        const unsigned c = 9, depth = 3;                                                       \
        zp_g1a_##C##_t *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb);             \
        zp_scalar_t *k = malloc(N * sizeof *k);                                                \
        points_##C(pa, N);                                                                     \
        points_##C(pb, N);                                                                     \
        zp_scalar_t rm;                                                                        \
        memcpy(rm.l, zp_fr_##C##_modulus.l, sizeof rm.l);                                      \
        for (size_t i = 0; i < N; i++) edge_scalar(&k[i], i, &rm);                             \
        size_t tb = zp_msm_fixed_g1_##C##_table_size(N, c, depth);                             \
        uint8_t *tab = NULL, *bad = NULL;                                                      \
        void *s = NULL;                                                                        \
        size_t sz = zp_msm_fixed_g1_##C##_scratch_size(N, c, depth, 1);                        \
        if (posix_memalign((void **)&tab, 64, tb) || posix_memalign((void **)&bad, 64, tb) ||  \
            posix_memalign(&s, 64, sz)) {                                                      \
            fails++;                                                                           \
            return;                                                                            \
        }                                                                                      \
        CHECK(!zp_msm_fixed_g1_##C##_table_build(tab, tb, pa, N, c, depth, NULL));             \
        char err[200];                                                                         \
        zp_msm_fixed_hdr_t *h = (zp_msm_fixed_hdr_t *)(void *)bad;                             \
        zp_g1_##C##_t out, inf;                                                                \
        zp_g1_##C##_set_inf(&inf);                                                             \
        /* expect: check fails with msg (full check), and the MSM too if hdr_only */           \
        struct {                                                                               \
            const char *msg;                                                                   \
            int what;                                                                          \
        } cases[] = {                                                                          \
            {"levels checksum", 0}, {"header checksum", 1}, {"bad magic", 2},                 \
            {"used with 301", 3}, {"short table", 4}, {"shorter than its", 5},           \
            {"other bases", 6}, {"group", 7}, {"inconsistent", 8}, {"out of range", 9},        \
            {"not 64-byte aligned", 10},                                                       \
        };                                                                                     \
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {                       \
            memcpy(bad, tab, tb);                                                              \
            size_t bytes = tb, n = N;                                                          \
            const zp_g1a_##C##_t *bases = pa;                                                  \
            const uint8_t *t = bad;                                                            \
            bool resum = true;                                                                 \
            switch (cases[ci].what) {                                                          \
            case 0: bad[tb - 7] ^= 0x10; resum = false; break;  /* a level byte */            \
            case 1: h->c++; resum = false; break;              /* header without its sum */    \
            case 2: h->magic[0] = 'X'; break;                                                  \
            case 3: n = N + 1; resum = false; break;           /* used with more bases */      \
            case 4: bytes = tb - 64; resum = false; break;                                     \
            case 5: bytes = 100; resum = false; break;                                         \
            case 6: bases = pb; resum = false; break;                                          \
            case 7: h->group ^= 3; break;                                                      \
            case 8: h->rounds++; break;                                                        \
            case 9: h->depth = 0; break;                                                       \
            case 10: t = bad + 8; bytes = tb - 8; resum = false; break;                        \
            }                                                                                  \
            if (resum) {                                                                       \
                h->hdr_sum = 0;                                                                \
                h->hdr_sum = zp_msm_fixed_sum(h, sizeof *h, 0);                                \
            }                                                                                  \
            err[0] = 0;                                                                        \
            int rc = zp_msm_fixed_g1_##C##_check(t, bytes, bases, n, true, err, sizeof err);   \
            CHECK(rc == -1);                                                                   \
            if (!strstr(err, cases[ci].msg) || !strstr(err, "fixed-base table")) {             \
                fprintf(stderr, #C " case %zu: want '%s', got '%s'\n", ci, cases[ci].msg, err); \
                fails++;                                                                       \
            }                                                                                  \
            /* the MSM re-checks the header: refused unless the damage is past it */          \
            out = inf;                                                                         \
            err[0] = 0;                                                                        \
            rc = zp_msm_fixed_g1_##C(&out, bases, k, n, t, bytes, s, NULL, err, sizeof err);   \
            bool hdr = cases[ci].what != 0 && cases[ci].what != 6;                             \
            CHECK(rc == (hdr ? -1 : 0));                                                       \
            if (hdr) {                                                                         \
                CHECK(strstr(err, cases[ci].msg) != NULL);                                     \
                CHECK(zp_g1_##C##_eq(&out, &inf));                                             \
            }                                                                                  \
        }                                                                                      \
        /* a sound table still checks (the cases above worked on copies); header-only ok */   \
        CHECK(!zp_msm_fixed_g1_##C##_check(tab, tb, pa, N, false, err, sizeof err));           \
        /* bad parameters */                                                                   \
        unsigned W = zp_msm_fixed_g1_##C##_windows(c);                                         \
        CHECK(zp_msm_fixed_g1_##C##_table_size(N, c, 0) == 0);                                 \
        CHECK(zp_msm_fixed_g1_##C##_table_size(N, c, W + 1) == 0);                             \
        CHECK(zp_msm_fixed_g1_##C##_table_size(N, ZP_MSM_FIXED_C_MIN - 1, 2) == 0);            \
        CHECK(zp_msm_fixed_g1_##C##_table_size(N, ZP_MSM_FIXED_C_MAX + 1, 2) == 0);            \
        CHECK(zp_msm_fixed_g1_##C##_table_size(N, c, W) > 0);                                  \
        CHECK(zp_msm_fixed_g1_##C##_table_build(bad, tb - 1, pa, N, c, depth, NULL) == -1);    \
        CHECK(zp_msm_fixed_g1_##C##_table_build(bad, tb, pa, N, c, W + 1, NULL) == -1);        \
        CHECK(zp_msm_fixed_g1_##C##_scratch_size(N, c, 0, 1) == 0);                            \
        free(tab);                                                                             \
        free(bad);                                                                             \
        free(s);                                                                               \
        free(pa);                                                                              \
        free(pb);                                                                              \
        free(k);                                                                               \
    }
FIXED_TESTS(bn254, fq_bn254)
FIXED_TESTS(bls12_381, fq_bls12_381)

int main(void)
{
    zp_pool_t *pools[3] = {NULL, zp_pool_new(2), zp_pool_new(3)};
    if (!pools[1] || !pools[2]) {
        fprintf(stderr, "test_msm_fixed: cannot create thread pools\n");
        return 1;
    }
    /* 2500 and 4100: several point ranges per round with 2 and 3 threads (n >= 2048) */
    static const size_t sizes[] = {0, 1, 2, 3, 9, 31, 100, 257, 2500, 4100};
    const size_t ns = sizeof sizes / sizeof sizes[0];
    test_sizes_bn254(pools, 3, sizes, ns);
    test_sizes_bls12_381(pools, 3, sizes, ns);
    test_refuse_bn254();
    test_refuse_bls12_381();
    zp_pool_destroy(&pools[1]);
    zp_pool_destroy(&pools[2]);
    if (fails) {
        fprintf(stderr, "test_msm_fixed: %d checks failed\n", fails);
        return 1;
    }
    printf("test_msm_fixed: ok\n");
    return 0;
}
