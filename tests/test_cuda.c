/* test_cuda.c - the CUDA backend against the CPU backend (suite cuda; exits 77 = skipped when
 * no CUDA device can be opened).
 *   - msm_g1 == zp_backend_cpu.msm_g1 at 2^10, 2^16, 2^20, 2^22 on BN254 and BLS12-381
 *     (scalars: a mix of 0, 1, r-1, small, repeated and random; points: 2^16 distinct random
 *     points with infinity / repeated / negated ones, tiled), plus a binary-witness-like case;
 *   - compute_h == zp_backend_cpu.compute_h at the same sizes;
 *   - prove_g1 (load_key, 4 MSMs, h) == CPU on a synthetic key of 2^16;
 * then prints benchmarks (never asserted): G1 MSM 2^20 and 2^24 per curve, compute_h 2^24
 * (six NTTs), H2D bandwidth from pageable and from registered memory.
 * ZP_CUDA_TEST_MAX_LOG (env) caps the sizes (default 24). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-worker/cuda/backend_cuda.h"

#define TEST_SEED 0x3c6ef372fe94f82bULL
#include "tests/test_common.h"
static int rnd_fill(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) ((uint8_t *)buf)[i] = (uint8_t)rnd64();
    return 0;
}

static unsigned max_log = 24;
static zp_backend_t *cpu, *gpu;

/* mode 0: mixed specials and random; 1: binary witness (0/1, rare random); 2: uniform */
static void scalars_fill(zp_scalar_t *k, size_t n, const uint64_t *r, int mode)
{
    zp_scalar_t rep = {{rnd64(), rnd64(), rnd64(), rnd64() & (r[3] >> 1)}};
    for (size_t i = 0; i < n; i++) {
        memset(&k[i], 0, sizeof k[i]);
        unsigned sel = mode == 2 ? 9 : (unsigned)(rnd64() % 10);
        if (mode == 1) sel = sel < 5 ? 0 : sel < 9 ? 1 : 9;
        switch (sel) {
        case 0: break;
        case 1: k[i].l[0] = 1; break;
        case 2: memcpy(k[i].l, r, 32); k[i].l[0] -= 1; break;
        case 3: k[i].l[0] = rnd64() % 1000; break;
        case 4: k[i] = rep; break;
        default:
            for (int j = 0; j < 4; j++) k[i].l[j] = rnd64();
            k[i].l[3] &= r[3] >> 1;
            break;
        }
    }
}

#define CURVE_TESTS(C, CU)                                                                        \
    static zp_g1a_##C##_t *points_##C(size_t n)                                                   \
    {                                                                                             \
        size_t nd = n < ((size_t)1 << 16) ? n : ((size_t)1 << 16);                                \
        zp_g1a_##C##_t *a = malloc((n ? n : 1) * sizeof *a), g;                                   \
        zp_g1_##C##_t *j = malloc((nd ? nd : 1) * sizeof *j), p, step;                            \
        zp_fq_##C##_t *scr = malloc((nd ? nd : 1) * sizeof *scr);                                 \
        zp_scalar_t k = {{rnd64(), rnd64(), rnd64(), rnd64() >> 8}};                              \
        if (!a || !j || !scr) abort();                                                            \
        zp_g1_##C##_generator(&g);                                                                \
        zp_g1_##C##_from_affine(&p, &g);                                                          \
        zp_g1_##C##_mul(&step, &p, &k);                                                           \
        for (size_t i = 0; i < nd; i++) {                                                         \
            j[i] = p;                                                                             \
            zp_g1_##C##_add(&p, &p, &step);                                                       \
        }                                                                                         \
        zp_g1_##C##_batch_to_affine(a, j, nd, scr);                                               \
        for (size_t i = 0; i < nd; i++) {                                                         \
            unsigned s = (unsigned)(rnd64() % 64);                                                \
            if (s == 0) memset(&a[i], 0, sizeof a[i]);                                            \
            else if (s == 1 && i) a[i] = a[rnd64() % i];                                          \
            else if (s == 2 && i) zp_g1a_##C##_neg(&a[i], &a[rnd64() % i]);                       \
        }                                                                                         \
        for (size_t i = nd; i < n; i++) a[i] = a[i % nd];                                         \
        free(j);                                                                                  \
        free(scr);                                                                                \
        return a;                                                                                 \
    }                                                                                             \
    static void test_msm_##C(unsigned lg, int mode)                                               \
    {                                                                                             \
        size_t n = (size_t)1 << lg;                                                               \
        zp_g1a_##C##_t *p = points_##C(n);                                                        \
        zp_scalar_t *k = malloc(n * sizeof *k);                                                   \
        scalars_fill(k, n, zp_fr_##C##_modulus.l, mode);                                          \
        zp_g1_any_t want, got;                                                                    \
        uint64_t t0 = zp_now_ns();                                                                \
        CHECK(zp_backend_cpu.msm_g1(cpu, ZP_CURVE_##CU, &want, p, k, n) == 0);                    \
        uint64_t t1 = zp_now_ns();                                                                \
        int rc = zp_backend_cuda.msm_g1(gpu, ZP_CURVE_##CU, &got, p, k, n);                       \
        uint64_t t2 = zp_now_ns();                                                                \
        if (rc) fprintf(stderr, "cuda msm: %s: %s\n", zp_strerror(rc), zp_err_msg());             \
        CHECK(rc == 0);                                                                           \
        int ok = rc == 0 && zp_g1_##C##_eq(&want.C, &got.C);                                      \
        CHECK(ok);                                                                                \
        printf("  msm " #C " 2^%u mode %d: %s (cpu %.1f ms, cuda incl. H2D %.1f ms)\n", lg, mode, \
               ok ? "equal" : "DIFFERENT", (t1 - t0) / 1e6, (t2 - t1) / 1e6);                     \
        free(k);                                                                                  \
        free(p);                                                                                  \
    }                                                                                             \
    static void test_h_##C(unsigned lg)                                                           \
    {                                                                                             \
        size_t n = (size_t)1 << lg;                                                               \
        zp_g16_key_t key;                                                                         \
        memset(&key, 0, sizeof key);                                                              \
        key.curve = ZP_CURVE_##CU;                                                                \
        key.n_vars = 1;                                                                           \
        key.domain_size = (uint32_t)n;                                                            \
        key.log_n = lg;                                                                           \
        zp_fr_##C##_t *v = malloc(7 * n * sizeof *v);                                             \
        zp_fr_##C##_t *a = v, *b = v + n, *c = v + 2 * n, *a2 = v + 3 * n, *b2 = v + 4 * n;       \
        zp_fr_##C##_t *h = v + 5 * n, *h2 = v + 6 * n;                                            \
        for (size_t i = 0; i < n; i++) {                                                          \
            zp_fr_##C##_random(&a[i], rnd_fill, NULL);                                            \
            zp_fr_##C##_random(&b[i], rnd_fill, NULL);                                            \
            zp_fr_##C##_mul(&c[i], &a[i], &b[i]);                                                 \
        }                                                                                         \
        memcpy(a2, a, 2 * n * sizeof *a);                                                         \
        zp_g16_times_t t;                                                                         \
        CHECK(zp_backend_cpu.compute_h(cpu, &key, (zp_scalar_t *)a, (zp_scalar_t *)b,             \
                                       (zp_scalar_t *)c, (zp_scalar_t *)h, &t) == 0);             \
        int rc = zp_backend_cuda.compute_h(gpu, &key, (zp_scalar_t *)a2, (zp_scalar_t *)b2,       \
                                           (zp_scalar_t *)c, (zp_scalar_t *)h2, &t);              \
        if (rc) fprintf(stderr, "cuda compute_h: %s: %s\n", zp_strerror(rc), zp_err_msg());      \
        int ok = rc == 0 && memcmp(h, h2, n * sizeof *h) == 0;                                    \
        CHECK(ok);                                                                                \
        printf("  compute_h " #C " 2^%u: %s (h2d %.2f ms, ntt+h %.2f ms, d2h %.2f ms)\n", lg,     \
               ok ? "equal" : "DIFFERENT", t.h2d_ns / 1e6, t.ntt_ns / 1e6, t.d2h_ns / 1e6);       \
        free(v);                                                                                  \
    }                                                                                             \
    static void test_prove_##C(unsigned lg)                                                       \
    {                                                                                             \
        size_t n = (size_t)1 << lg;                                                               \
        zp_g16_key_t key;                                                                         \
        memset(&key, 0, sizeof key);                                                              \
        key.curve = ZP_CURVE_##CU;                                                                \
        key.n_vars = (uint32_t)(n - n / 4);                                                       \
        key.n_public = 3;                                                                         \
        key.domain_size = (uint32_t)n;                                                            \
        key.log_n = lg;                                                                           \
        zp_g1a_##C##_t *pa = points_##C(n), *pb = points_##C(n), *pc = points_##C(n), *ph = points_##C(n); \
        key.a = pa;                                                                               \
        key.b1 = pb;                                                                              \
        key.c = pc;                                                                               \
        key.h = ph;                                                                               \
        zp_scalar_t *w = malloc(n * sizeof *w);                                                   \
        scalars_fill(w, key.n_vars, zp_fr_##C##_modulus.l, 1);                                    \
        zp_fr_##C##_t *v = malloc(7 * n * sizeof *v);                                             \
        zp_fr_##C##_t *a = v, *b = v + n, *c = v + 2 * n, *a2 = v + 3 * n, *b2 = v + 4 * n;       \
        zp_fr_##C##_t *h = v + 5 * n, *h2 = v + 6 * n;                                            \
        for (size_t i = 0; i < n; i++) {                                                          \
            zp_fr_##C##_random(&a[i], rnd_fill, NULL);                                            \
            zp_fr_##C##_random(&b[i], rnd_fill, NULL);                                            \
            zp_fr_##C##_mul(&c[i], &a[i], &b[i]);                                                 \
        }                                                                                         \
        memcpy(a2, a, 2 * n * sizeof *a);                                                         \
        zp_g1_any_t want[ZP_G16_NMSM], got[ZP_G16_NMSM];                                          \
        zp_g16_times_t t;                                                                         \
        CHECK(zp_backend_cpu.load_key(cpu, &key) == 0);                                           \
        CHECK(zp_backend_cpu.prove_g1(cpu, &key, w, (zp_scalar_t *)a, (zp_scalar_t *)b,           \
                                      (zp_scalar_t *)c, (zp_scalar_t *)h, want, &t) == 0);        \
        int rc = zp_backend_cuda.load_key(gpu, &key);                                             \
        if (rc == 0)                                                                              \
            rc = zp_backend_cuda.prove_g1(gpu, &key, w, (zp_scalar_t *)a2, (zp_scalar_t *)b2,     \
                                          (zp_scalar_t *)c, (zp_scalar_t *)h2, got, &t);          \
        if (rc) fprintf(stderr, "cuda prove_g1: %s: %s\n", zp_strerror(rc), zp_err_msg());       \
        CHECK(rc == 0);                                                                           \
        int ok = rc == 0 && memcmp(h, h2, n * sizeof *h) == 0;                                    \
        for (int m = 0; rc == 0 && m < ZP_G16_NMSM; m++) ok &= zp_g1_##C##_eq(&want[m].C, &got[m].C); \
        CHECK(ok);                                                                                \
        printf("  prove_g1 " #C " 2^%u: %s (h2d %.2f, ntt %.2f, msm A %.2f B1 %.2f C %.2f H %.2f, "  \
               "d2h %.2f, total %.2f ms)\n", lg, ok ? "equal" : "DIFFERENT", t.h2d_ns / 1e6,      \
               t.ntt_ns / 1e6, t.msm_ns[0] / 1e6, t.msm_ns[1] / 1e6, t.msm_ns[2] / 1e6,           \
               t.msm_ns[3] / 1e6, t.d2h_ns / 1e6, t.total_ns / 1e6);                              \
        free(v);                                                                                  \
        free(w);                                                                                  \
        free(pa);                                                                                 \
        free(pb);                                                                                 \
        free(pc);                                                                                 \
        free(ph);                                                                                 \
    }                                                                                             \
    static void bench_msm_##C(unsigned lg)                                                        \
    {                                                                                             \
        size_t n = (size_t)1 << lg;                                                               \
        zp_g1a_##C##_t *p = points_##C(n);                                                        \
        zp_scalar_t *k = malloc(n * sizeof *k);                                                   \
        scalars_fill(k, n, zp_fr_##C##_modulus.l, 2);                                             \
        zp_g1_any_t got;                                                                          \
        double best = 1e30;                                                                       \
        for (int rep = 0; rep < 3; rep++) {                                                       \
            uint64_t t0 = zp_now_ns();                                                            \
            if (zp_backend_cuda.msm_g1(gpu, ZP_CURVE_##CU, &got, p, k, n)) break;                 \
            double ms = (zp_now_ns() - t0) / 1e6;                                                 \
            best = ms < best ? ms : best;                                                         \
        }                                                                                         \
        printf("BENCH cuda msm_g1 " #C " 2^%u: %.2f ms (best of 3, incl. H2D of points+scalars)\n", lg, best); \
        free(k);                                                                                  \
        free(p);                                                                                  \
    }
CURVE_TESTS(bn254, BN254)
CURVE_TESTS(bls12_381, BLS12_381)

int main(void)
{
    zp_log_init("test_cuda");
    const char *ml = getenv("ZP_CUDA_TEST_MAX_LOG");
    if (ml) max_log = (unsigned)atoi(ml);
    zp_backend_cfg_t cfg = {.threads = 0, .device = 0};
    int rc = zp_backend_cuda.open(&gpu, &cfg);
    if (rc) {
        printf("test_cuda: skipped: %s: %s\n", zp_strerror(rc), zp_err_msg());
        return rc == ZP_ENODEV ? 77 : 1;
    }
    CHECK(zp_backend_cpu.open(&cpu, &cfg) == 0);
    static const unsigned sizes[] = {10, 16, 20, 22};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_log; i++) {
        test_msm_bn254(sizes[i], 0);
        test_msm_bls12_381(sizes[i], 0);
        test_h_bn254(sizes[i]);
        test_h_bls12_381(sizes[i]);
    }
    if (max_log >= 20) {
        test_msm_bn254(20, 1);
        test_msm_bls12_381(20, 1);
    }
    test_prove_bn254(max_log < 16 ? max_log : 16);
    test_prove_bls12_381(max_log < 16 ? max_log : 16);
    printf("test_cuda: correctness %s\n", fails ? "FAILED" : "ok");

    /* benchmarks: numbers only */
    for (unsigned lg = 20; lg <= 24 && lg <= max_log; lg += 4) {
        bench_msm_bn254(lg);
        bench_msm_bls12_381(lg);
    }
    if (max_log >= 24) {
        zp_g16_times_t t;
        size_t n = (size_t)1 << 24;
        zp_scalar_t *v = calloc(4 * n, sizeof *v);
        zp_g16_key_t key;
        memset(&key, 0, sizeof key);
        key.curve = ZP_CURVE_BN254;
        key.n_vars = 1;
        key.domain_size = (uint32_t)n;
        key.log_n = 24;
        for (int rep = 0; v && rep < 2; rep++)
            if (zp_backend_cuda.compute_h(gpu, &key, v, v + n, v + 2 * n, v + 3 * n, &t) == 0)
                printf("BENCH cuda compute_h bn254 2^24 (6 NTTs + join): %.2f ms kernels, h2d %.2f ms, d2h %.2f ms\n",
                       t.ntt_ns / 1e6, t.h2d_ns / 1e6, t.d2h_ns / 1e6);
        free(v);
    }
    double pg = 0, pn = 0;
    if (zp_cuda_bench_h2d(gpu, (size_t)1 << 30, &pg, &pn) == 0)
        printf("BENCH H2D 1 GiB: pageable %.1f GB/s, registered %.1f GB/s\n", pg, pn);
    zp_backend_cuda.close(&gpu);
    zp_backend_cpu.close(&cpu);
    if (fails) {
        printf("test_cuda: %d failures\n", fails);
        return 1;
    }
    printf("test_cuda: ok\n");
    return 0;
}
