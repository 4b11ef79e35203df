/* test_cuda_host.c - the CUDA backend's device arithmetic and algorithms, run on the CPU.
 *
 * cu_hostemu.cu compiles the very templates the kernels use (cu_field.cuh, cu_curve.cuh,
 * cu_msm.cuh, cu_ntt.cuh) as host code and runs the kernel bodies in loops; this test checks
 * them against the project's CPU libraries on random and edge-case inputs:
 *   - constants (cu_consts.h) == lib/ff's modulus, R, R^2; limb layouts match;
 *   - field add/sub/neg/dbl/mul/sqr/to_mont/from_mont == lib/ff, all four fields;
 *   - xyzz point adds (mixed, full, signed), doubling, small multiples == lib/ec, including
 *     infinity, P + P and P + (-P);
 *   - the bucket MSM (digits, sort, levelled bucket sums, reductions with the tree over the
 *     groups, with several window sizes, task sizes, group counts, window batches and the
 *     parallelism-derived group count) == naive sum / lib/msm;
 *   - compute_h (NTT, inverse + coset pass, joinABC) == lib/ntt + lib/ff.
 * What it cannot cover: the device executor (launch geometry, CUB, streams): tests/test_cuda.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-worker/cuda/backend_cuda.h"
#include "lib/msm/msm.h"
#include "lib/ntt/ntt.h"

#define TEST_SEED 0x6a09e667f3bcc909ULL
#include "tests/test_common.h"
_Static_assert(sizeof(zp_fr_bn254_t) == 8 * ZP_CU_FR_BN254_LIMBS, "fr_bn254 limbs");
_Static_assert(sizeof(zp_fq_bn254_t) == 8 * ZP_CU_FQ_BN254_LIMBS, "fq_bn254 limbs");
_Static_assert(sizeof(zp_fr_bls12_381_t) == 8 * ZP_CU_FR_BLS12_381_LIMBS, "fr_bls12_381 limbs");
_Static_assert(sizeof(zp_fq_bls12_381_t) == 8 * ZP_CU_FQ_BLS12_381_LIMBS, "fq_bls12_381 limbs");
_Static_assert(ZP_fq_bls12_381_LIMBS == ZP_CU_FQ_BLS12_381_LIMBS && ZP_fr_bn254_LIMBS == ZP_CU_FR_BN254_LIMBS,
               "limb counts");
_Static_assert(sizeof(zp_g1_bls12_381_t) == 8 * ZP_CU_JAC_LIMBS, "Jacobian point = 3 coordinates");
_Static_assert(sizeof(zp_g1a_bn254_t) == 64 && sizeof(zp_g1a_bls12_381_t) == 96, "affine = zkey layout");

static int rnd_fill(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) ((uint8_t *)buf)[i] = (uint8_t)rnd64();
    return 0;
}

/* ---------------------------------------------------------------- constants, fields */

#define FIELD_TESTS(F, CU)                                                                     \
    static void test_field_##F(void)                                                           \
    {                                                                                          \
        static const uint64_t p[] = ZP_CU_##CU##_P, one[] = ZP_CU_##CU##_ONE, r2[] = ZP_CU_##CU##_R2; \
        CHECK(memcmp(p, zp_##F##_modulus.l, sizeof p) == 0);                                   \
        CHECK(memcmp(one, zp_##F##_one.l, sizeof one) == 0);                                   \
        CHECK(memcmp(r2, zp_##F##_r2.l, sizeof r2) == 0);                                      \
        enum { NV = 24 };                                                                      \
        zp_##F##_t v[NV];                                                                      \
        memset(&v[0], 0, sizeof v[0]);                                                         \
        v[1] = zp_##F##_one;                                                                   \
        zp_##F##_neg(&v[2], &zp_##F##_one);                                                    \
        zp_##F##_set_u64(&v[3], 2);                                                            \
        v[4] = zp_##F##_modulus; /* p - 1 as a raw element */                                  \
        v[4].l[0] -= 1;                                                                        \
        memset(&v[5], 0, sizeof v[5]);                                                         \
        v[5].l[0] = 1;                                                                         \
        for (int i = 6; i < NV; i++) zp_##F##_random(&v[i], rnd_fill, NULL);                  \
        for (int rep = 0; rep < 40; rep++)                                                     \
            for (int i = 0; i < NV; i++) {                                                     \
                zp_##F##_t a = v[i], b = v[(i * 7 + rep) % NV], want, got;                     \
                if (rep > 0 && i >= 6) {                                                       \
                    zp_##F##_random(&a, rnd_fill, NULL);                                       \
                    zp_##F##_random(&b, rnd_fill, NULL);                                       \
                }                                                                              \
                zp_##F##_add(&want, &a, &b);                                                   \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_ADD, got.l, a.l, b.l);                      \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_sub(&want, &a, &b);                                                   \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_SUB, got.l, a.l, b.l);                      \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_mul(&want, &a, &b);                                                   \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_MUL, got.l, a.l, b.l);                      \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_neg(&want, &a);                                                       \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_NEG, got.l, a.l, NULL);                     \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_dbl(&want, &a);                                                       \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_DBL, got.l, a.l, NULL);                     \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_sqr(&want, &a);                                                       \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_SQR, got.l, a.l, NULL);                     \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_to_mont(&want, &a);                                                   \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_TO_MONT, got.l, a.l, NULL);                 \
                CHECK(zp_##F##_eq(&want, &got));                                               \
                zp_##F##_from_mont(&want, &a);                                                 \
                zp_cu_host_fp(ZP_CU_##CU, ZP_CU_OP_FROM_MONT, got.l, a.l, NULL);               \
                CHECK(zp_##F##_eq(&want, &got));                                               \
            }                                                                                  \
    }
FIELD_TESTS(fr_bn254, FR_BN254)
FIELD_TESTS(fq_bn254, FQ_BN254)
FIELD_TESTS(fr_bls12_381, FR_BLS12_381)
FIELD_TESTS(fq_bls12_381, FQ_BLS12_381)

/* ---------------------------------------------------------------- curves, MSM, compute_h */

/* scalar i of a test vector, standard form < r: a mix of special and random values */
static void pick_scalar(zp_scalar_t *k, const zp_scalar_t *r, const zp_scalar_t *rep, int mode)
{
    memset(k, 0, sizeof *k);
    unsigned sel = mode == 1 ? (unsigned)(rnd64() % 3) : mode == 2 ? 9 : (unsigned)(rnd64() % 10);
    switch (sel) {
    case 0: break;
    case 1: k->l[0] = 1; break;
    case 2:
        *k = *r;
        k->l[0] -= 1;
        break;
    case 3: k->l[0] = rnd64() % 1000; break;
    case 4: *k = *rep; break;
    case 5: k->l[0] = rnd64(); break;
    default:
        for (int j = 0; j < 4; j++) k->l[j] = rnd64();
        k->l[3] &= r->l[3] >> 1;
        break;
    }
}

#define CURVE_TESTS(C, FQ_CU)                                                                    \
    /* n random affine points: random multiples of the generator, chained by additions */       \
    static zp_g1a_##C##_t *points_##C(size_t n, int specials)                                    \
    {                                                                                            \
        zp_g1a_##C##_t *a = malloc((n ? n : 1) * sizeof *a), g;                                  \
        zp_g1_##C##_t *j = malloc((n ? n : 1) * sizeof *j), p, step;                             \
        zp_fq_##C##_t *scr = malloc((n ? n : 1) * sizeof *scr);                                  \
        zp_scalar_t k = {{rnd64(), rnd64(), rnd64(), rnd64() >> 8}};                             \
        zp_g1_##C##_generator(&g);                                                               \
        zp_g1_##C##_from_affine(&p, &g);                                                         \
        zp_g1_##C##_mul(&step, &p, &k);                                                          \
        k.l[0] = rnd64();                                                                        \
        zp_g1_##C##_mul(&p, &p, &k);                                                             \
        for (size_t i = 0; i < n; i++) {                                                         \
            j[i] = p;                                                                            \
            zp_g1_##C##_add(&p, &p, &step);                                                      \
        }                                                                                        \
        zp_g1_##C##_batch_to_affine(a, j, n, scr);                                               \
        for (size_t i = 0; specials && i < n; i++) {                                             \
            unsigned s = (unsigned)(rnd64() % 16);                                               \
            if (s == 0) memset(&a[i], 0, sizeof a[i]);               /* infinity */             \
            else if (s == 1 && i) a[i] = a[rnd64() % i];              /* repeated */             \
            else if (s == 2 && i) zp_g1a_##C##_neg(&a[i], &a[rnd64() % i]); /* negated */        \
        }                                                                                        \
        free(j);                                                                                 \
        free(scr);                                                                               \
        return a;                                                                                \
    }                                                                                            \
    static void naive_##C(zp_g1_##C##_t *out, const zp_g1a_##C##_t *p, const zp_scalar_t *k, size_t n) \
    {                                                                                            \
        zp_g1_##C##_set_inf(out);                                                                \
        for (size_t i = 0; i < n; i++) {                                                         \
            zp_g1_##C##_t t;                                                                     \
            zp_g1_##C##_from_affine(&t, &p[i]);                                                  \
            zp_g1_##C##_mul(&t, &t, &k[i]);                                                      \
            zp_g1_##C##_add(out, out, &t);                                                       \
        }                                                                                        \
    }                                                                                            \
    static void test_points_##C(void)                                                            \
    {                                                                                            \
        enum { K = 9 };                                                                          \
        for (int rep = 0; rep < 30; rep++) {                                                     \
            zp_g1a_##C##_t *p = points_##C(K, 0);                                                \
            if (rep % 3 == 1) p[4] = p[2];                          /* P + P inside a sum */    \
            if (rep % 3 == 2) zp_g1a_##C##_neg(&p[5], &p[1]);       /* P + (-P) */              \
            if (rep % 5 == 3) memset(&p[3], 0, sizeof p[3]);        /* infinity */              \
            zp_g1_##C##_t want, got, t, half;                                                    \
            /* mixed sum */                                                                      \
            zp_g1_##C##_set_inf(&want);                                                          \
            for (int i = 0; i < K; i++) zp_g1_##C##_add_affine(&want, &want, &p[i]);             \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_SUM_MIXED, got.x.l, p, K, 0);               \
            CHECK(zp_g1_##C##_eq(&want, &got));                                                  \
            CHECK(zp_g1_##C##_on_curve(&got));                                                   \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_SUM_FULL, got.x.l, p, K, 0);                \
            CHECK(zp_g1_##C##_eq(&want, &got));                                                  \
            /* full add of equal halves (doubling path) and of opposite halves (infinity) */    \
            zp_g1a_##C##_t q[4] = {p[0], p[1], p[0], p[1]};                                      \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_SUM_FULL, got.x.l, q, 4, 0);                \
            zp_g1_##C##_set_inf(&half);                                                          \
            zp_g1_##C##_add_affine(&half, &half, &p[0]);                                         \
            zp_g1_##C##_add_affine(&half, &half, &p[1]);                                         \
            zp_g1_##C##_dbl(&t, &half);                                                          \
            CHECK(zp_g1_##C##_eq(&t, &got));                                                     \
            zp_g1a_##C##_neg(&q[2], &p[0]);                                                      \
            zp_g1a_##C##_neg(&q[3], &p[1]);                                                      \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_SUM_FULL, got.x.l, q, 4, 0);                \
            CHECK(zp_g1_##C##_is_inf(&got));                                                     \
            /* doubling and small multiples */                                                   \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_DBL, got.x.l, p, K, 0);                     \
            zp_g1_##C##_dbl(&t, &want);                                                          \
            CHECK(zp_g1_##C##_eq(&t, &got));                                                     \
            uint32_t m = rep < 3 ? (uint32_t)rep : (uint32_t)(rnd64() % 100000);                 \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_MUL_SMALL, got.x.l, p, K, m);               \
            zp_scalar_t ks = {{m, 0, 0, 0}};                                                     \
            zp_g1_##C##_mul(&t, &want, &ks);                                                     \
            CHECK(zp_g1_##C##_eq(&t, &got));                                                     \
            /* signed sum */                                                                     \
            zp_g1_##C##_set_inf(&want);                                                          \
            for (int i = 0; i < K; i++) {                                                        \
                zp_g1a_##C##_t s = p[i];                                                         \
                if (i & 1) zp_g1a_##C##_neg(&s, &p[i]);                                          \
                zp_g1_##C##_add_affine(&want, &want, &s);                                        \
            }                                                                                    \
            zp_cu_host_g1(ZP_CURVE_##FQ_CU, ZP_CU_G1_SUM_SIGNED, got.x.l, p, K, 0);              \
            CHECK(zp_g1_##C##_eq(&want, &got));                                                  \
            free(p);                                                                             \
        }                                                                                        \
    }                                                                                            \
    static int msm_case_##C(size_t n, int mode, const zp_cu_msm_tune_t *tune, int vs_lib)        \
    {                                                                                            \
        zp_g1a_##C##_t *p = points_##C(n, 1);                                                    \
        zp_scalar_t *k = malloc((n ? n : 1) * sizeof *k), rep, r;                                \
        zp_cu_msm_out_t *mo = malloc(sizeof *mo);                                                \
        memcpy(r.l, zp_fr_##C##_modulus.l, sizeof r.l);                                          \
        pick_scalar(&rep, &r, &r, 0);                                                            \
        for (size_t i = 0; i < n; i++) pick_scalar(&k[i], &r, &rep, mode);                       \
        zp_g1_##C##_t want;                                                                      \
        zp_g1_any_t got;                                                                         \
        if (vs_lib) {                                                                            \
            void *scr = aligned_alloc(64, (zp_msm_g1_##C##_scratch_size(n, 1) + 63) / 64 * 64);  \
            zp_msm_g1_##C(&want, p, k, n, scr, NULL);                                            \
            free(scr);                                                                           \
        } else {                                                                                 \
            naive_##C(&want, p, k, n);                                                           \
        }                                                                                        \
        int rc = zp_cu_host_msm(ZP_CURVE_##FQ_CU, mo, p, k[0].l, n, tune);                       \
        CHECK(rc == 0);                                                                          \
        CHECK(zp_cuda_msm_combine(ZP_CURVE_##FQ_CU, &got, mo) == 0);                             \
        int ok = rc == 0 && zp_g1_##C##_eq(&want, &got.C);                                       \
        if (!ok)                                                                                 \
            fprintf(stderr, #C " msm n=%zu mode=%d c=%u task=%u groups=%u pairs=%zu: mismatch\n", n, mode, \
                    tune ? tune->c : 0, tune ? tune->task : 0, tune ? tune->groups : 0, tune ? tune->max_pairs : 0); \
        free(mo);                                                                                \
        free(k);                                                                                 \
        free(p);                                                                                 \
        return ok;                                                                               \
    }                                                                                            \
    static void test_msm_##C(void)                                                               \
    {                                                                                            \
        static const zp_cu_msm_tune_t tunes[] = {                                                \
            {0, 0, 0, 0, 0}, {2, 2, 1, 0, 0}, {3, 3, 2, 5, 0}, {5, 2, 4, 64, 0}, {7, 4, 64, 0, 0},          \
            {4, 2, 8, 1, 0}, {16, 16, 128, 0, 0}, {10, 4, 512, 0, 0}, {9, 0, 0, 0, 1 << 14},           \
        };                                                                                       \
        static const size_t sizes[] = {0, 1, 2, 7, 33, 100};                                     \
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)                                \
            for (size_t t = 0; t < sizeof tunes / sizeof *tunes; t++)                            \
                for (int mode = 0; mode < 3; mode++)                                             \
                    CHECK(msm_case_##C(sizes[s], mode, &tunes[t], 0));                           \
        /* larger, against lib/msm: skewed (binary-like witness) and uniform scalars */         \
        zp_cu_msm_tune_t small_tasks = {6, 3, 8, 3000, 0};                                        \
        CHECK(msm_case_##C(3000, 1, NULL, 1));                                                   \
        CHECK(msm_case_##C(3000, 0, &small_tasks, 1));                                           \
        CHECK(msm_case_##C(2048, 2, NULL, 1));                                                   \
    }                                                                                            \
    static void test_h_##C(void)                                                                 \
    {                                                                                            \
        for (unsigned log_n = 0; log_n <= 11; log_n++) {                                         \
            size_t n = (size_t)1 << log_n;                                                       \
            zp_fr_##C##_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c); \
            zp_fr_##C##_t *a2 = malloc(n * sizeof *a), *b2 = malloc(n * sizeof *b), *c2 = malloc(n * sizeof *c); \
            zp_fr_##C##_t *h = malloc(n * sizeof *h);                                            \
            for (size_t i = 0; i < n; i++) {                                                     \
                zp_fr_##C##_random(&a[i], rnd_fill, NULL);                                       \
                zp_fr_##C##_random(&b[i], rnd_fill, NULL);                                       \
                if (i % 5 == 0) zp_fr_##C##_set_u64(&b[i], i % 3);                               \
                zp_fr_##C##_mul(&c[i], &a[i], &b[i]);                                            \
                if (i == 1) zp_fr_##C##_random(&c[i], rnd_fill, NULL); /* not satisfied */      \
            }                                                                                    \
            memcpy(a2, a, n * sizeof *a);                                                        \
            memcpy(b2, b, n * sizeof *b);                                                        \
            memcpy(c2, c, n * sizeof *c);                                                        \
            /* reference: lib/ntt as snarkjs does it */                                          \
            zp_ntt_##C##_domain_t d;                                                             \
            CHECK(zp_ntt_##C##_domain_init(&d, log_n) == 0);                                     \
            zp_fr_##C##_t *v[3] = {a2, b2, c2};                                                  \
            for (int j = 0; j < 3; j++) {                                                        \
                zp_ntt_##C##_inverse(&d, v[j], NULL);                                            \
                zp_ntt_##C##_coset_shift(v[j], n, zp_fr_##C##_root(log_n + 1), NULL);            \
                zp_ntt_##C##_forward(&d, v[j], NULL);                                            \
            }                                                                                    \
            zp_ntt_##C##_domain_close(&d);                                                       \
            for (size_t i = 0; i < n; i++) {                                                     \
                zp_fr_##C##_mul(&a2[i], &a2[i], &b2[i]);                                         \
                zp_fr_##C##_sub(&a2[i], &a2[i], &c2[i]);                                         \
                zp_fr_##C##_from_mont(&a2[i], &a2[i]);                                           \
            }                                                                                    \
            zp_cu_pow_table_t tw, cs;                                                            \
            void *mem = NULL;                                                                    \
            CHECK(zp_cuda_pow_tables(ZP_CURVE_##FQ_CU, log_n, &tw, &cs, &mem) == 0);             \
            CHECK(zp_cu_host_compute_h(ZP_CURVE_##FQ_CU, log_n, &tw, &cs, a[0].l, b[0].l, c[0].l, h[0].l) == 0); \
            int same = memcmp(h, a2, n * sizeof *h) == 0;                                        \
            if (!same) fprintf(stderr, #C " compute_h 2^%u differs from lib/ntt\n", log_n);      \
            CHECK(same);                                                                         \
            free(mem);                                                                           \
            free(a); free(b); free(c); free(a2); free(b2); free(c2); free(h);                    \
        }                                                                                        \
        zp_cu_pow_table_t tw, cs;                                                                \
        void *mem = NULL;                                                                        \
        CHECK(zp_cuda_pow_tables(ZP_CURVE_##FQ_CU, 40, &tw, &cs, &mem) == ZP_ETOOBIG);           \
        CHECK(mem == NULL);                                                                      \
    }
CURVE_TESTS(bn254, BN254)
CURVE_TESTS(bls12_381, BLS12_381)

int main(void)
{
    test_field_fr_bn254();
    test_field_fq_bn254();
    test_field_fr_bls12_381();
    test_field_fq_bls12_381();
    printf("fields: %s\n", fails ? "FAIL" : "ok");
    test_points_bn254();
    test_points_bls12_381();
    printf("points: %s\n", fails ? "FAIL" : "ok");
    test_h_bn254();
    test_h_bls12_381();
    printf("compute_h: %s\n", fails ? "FAIL" : "ok");
    test_msm_bn254();
    test_msm_bls12_381();
    printf("msm: %s\n", fails ? "FAIL" : "ok");
    if (fails) {
        printf("test_cuda_host: %d failures\n", fails);
        return 1;
    }
    printf("test_cuda_host: ok\n");
    return 0;
}
