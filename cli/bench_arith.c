/* bench_arith.c - `zkpipe bench arith [--quick] [--threads N]`: timings of the arithmetic
 * the prover is built from, one table: ns per Fr/Fq multiplication, ms per G1 MSM (2^16,
 * 2^18, 2^20; --quick: 2^12, 2^14, 2^16) and G2 MSM (2^16; --quick 2^12) with 1 and N
 * threads (default 2), ms per NTT 2^20 (--quick 2^16) and per pairing, for BN254 and
 * BLS12-381. Inputs are random: points are sums of a few random multiples of the generator
 * (cheap to build), converted with one batch inversion. Each figure is the best of a few
 * runs (one run for the largest MSMs). Speed is printed, never asserted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/msm/msm.h"
#include "lib/ntt/ntt.h"
#include "lib/pairing/pairing.h"
#include "lib/util/util.h"

static uint64_t bench_rng = 0x853c49e6748fea9bULL;
static uint64_t brnd(void)
{
    uint64_t z = (bench_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int brnd_cb(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) ((uint8_t *)buf)[i] = (uint8_t)brnd();
    return 0;
}

static double ms_since(uint64_t t0) { return (double)(zp_now_ns() - t0) / 1e6; }

/* random scalars below r (top limb masked below r's top limb) */
static void rnd_scalars(zp_scalar_t *k, size_t n, const uint64_t *r)
{
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 4; j++) k[i].l[j] = brnd();
        k[i].l[3] %= r[3];
    }
}

/* ns per field multiplication: a dependent chain */
#define BENCH_MUL(F)                                                                           \
    static double bench_mul_##F(size_t iters)                                                  \
    {                                                                                          \
        zp_##F##_t a, b;                                                                       \
        zp_##F##_random(&a, brnd_cb, NULL);                                                    \
        zp_##F##_random(&b, brnd_cb, NULL);                                                    \
        uint64_t t0 = zp_now_ns();                                                             \
        for (size_t i = 0; i < iters; i++) zp_##F##_mul(&a, &a, &b);                           \
        double ns = (double)(zp_now_ns() - t0) / (double)iters;                                \
        volatile uint64_t sink = a.l[0];                                                       \
        (void)sink;                                                                            \
        return ns;                                                                             \
    }
BENCH_MUL(fr_bn254)
BENCH_MUL(fq_bn254)
BENCH_MUL(fr_bls12_381)
BENCH_MUL(fq_bls12_381)

/* n random affine points; ms per MSM for each pool */
#define BENCH_GROUP(G, C, FQ)                                                                  \
    static int points_##G##_##C(zp_##G##a_##C##_t *pa, size_t n)                               \
    {                                                                                          \
        enum { NBASE = 64 };                                                                   \
        zp_##G##_##C##_t *pj = malloc(n * sizeof *pj), base[NBASE], g;                         \
        zp_##FQ##_t *scr = malloc(n * sizeof *scr);                                            \
        if (!pj || !scr) {                                                                     \
            free(pj);                                                                          \
            free(scr);                                                                         \
            return -1;                                                                         \
        }                                                                                      \
        zp_##G##a_##C##_t ga;                                                                  \
        zp_##G##_##C##_generator(&ga);                                                         \
        zp_##G##_##C##_from_affine(&g, &ga);                                                   \
        for (int i = 0; i < NBASE; i++) {                                                      \
            zp_scalar_t k = {{brnd(), brnd(), brnd(), brnd() >> 8}};                           \
            zp_##G##_##C##_mul(&base[i], &g, &k);                                              \
        }                                                                                      \
        for (size_t i = 0; i < n; i++) {                                                       \
            if (i < NBASE)                                                                     \
                pj[i] = base[i];                                                               \
            else                                                                               \
                zp_##G##_##C##_add(&pj[i], &pj[i - 1], &base[brnd() % NBASE]);                 \
        }                                                                                      \
        zp_##G##_##C##_batch_to_affine(pa, pj, n, scr);                                        \
        free(pj);                                                                              \
        free(scr);                                                                             \
        return 0;                                                                              \
    }                                                                                          \
    static double msm_ms_##G##_##C(const zp_##G##a_##C##_t *pa, const zp_scalar_t *k,          \
                                   size_t n, zp_pool_t *pool, int reps)                        \
    {                                                                                          \
        void *scr = NULL;                                                                      \
        size_t sz = zp_msm_##G##_##C##_scratch_size(n, zp_pool_size(pool));                    \
        if (posix_memalign(&scr, 64, sz ? sz : 64)) return -1;                                 \
        double best = -1;                                                                      \
        for (int r = 0; r < reps; r++) {                                                       \
            zp_##G##_##C##_t out;                                                              \
            uint64_t t0 = zp_now_ns();                                                         \
            zp_msm_##G##_##C(&out, pa, k, n, scr, pool);                                       \
            double ms = ms_since(t0);                                                          \
            if (best < 0 || ms < best) best = ms;                                              \
        }                                                                                      \
        free(scr);                                                                             \
        return best;                                                                           \
    }
BENCH_GROUP(g1, bn254, fq_bn254)
BENCH_GROUP(g2, bn254, fq2_bn254)
BENCH_GROUP(g1, bls12_381, fq_bls12_381)
BENCH_GROUP(g2, bls12_381, fq2_bls12_381)

#define BENCH_NTT(C)                                                                           \
    static double ntt_ms_##C(unsigned log_n, zp_pool_t *pool)                                  \
    {                                                                                          \
        zp_ntt_##C##_domain_t d;                                                               \
        if (zp_ntt_##C##_domain_init(&d, log_n) != 0) return -1;                               \
        zp_fr_##C##_t *x = malloc(d.n * sizeof *x);                                            \
        if (!x) {                                                                              \
            zp_ntt_##C##_domain_close(&d);                                                     \
            return -1;                                                                         \
        }                                                                                      \
        for (size_t i = 0; i < d.n; i++) zp_fr_##C##_random(&x[i], brnd_cb, NULL);             \
        double best = -1;                                                                      \
        for (int r = 0; r < 3; r++) {                                                          \
            uint64_t t0 = zp_now_ns();                                                         \
            zp_ntt_##C##_forward(&d, x, pool);                                                 \
            double ms = ms_since(t0);                                                          \
            if (best < 0 || ms < best) best = ms;                                              \
        }                                                                                      \
        free(x);                                                                               \
        zp_ntt_##C##_domain_close(&d);                                                         \
        return best;                                                                           \
    }                                                                                          \
    static double pairing_ms_##C(void)                                                         \
    {                                                                                          \
        zp_g1a_##C##_t p;                                                                      \
        zp_g2a_##C##_t q;                                                                      \
        zp_fq12_##C##_t e;                                                                     \
        zp_g1_##C##_generator(&p);                                                             \
        zp_g2_##C##_generator(&q);                                                             \
        double best = -1;                                                                      \
        for (int r = 0; r < 5; r++) {                                                          \
            uint64_t t0 = zp_now_ns();                                                         \
            zp_pairing_##C(&e, &p, &q);                                                        \
            double ms = ms_since(t0);                                                          \
            if (best < 0 || ms < best) best = ms;                                              \
        }                                                                                      \
        return best;                                                                           \
    }
BENCH_NTT(bn254)
BENCH_NTT(bls12_381)

static void row(const char *what, double bn, double bls, const char *fmt)
{
    char a[32], b[32];
    if (bn < 0) snprintf(a, sizeof a, "-");
    else snprintf(a, sizeof a, fmt, bn);
    if (bls < 0) snprintf(b, sizeof b, "-");
    else snprintf(b, sizeof b, fmt, bls);
    printf("%-28s %12s %12s\n", what, a, b);
    fflush(stdout);
}

int zp_bench_arith(int argc, char **argv)
{
    bool quick = false;
    unsigned nthr = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            nthr = (unsigned)strtoul(argv[++i], NULL, 10);
            if (nthr < 1 || nthr > 1024) {
                fprintf(stderr, "bench arith: --threads wants 1..1024\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: zkpipe bench arith [--quick] [--threads N]\n");
            return 2;
        }
    }
    zp_pool_t *pools[2] = {NULL, nthr > 1 ? zp_pool_new(nthr) : NULL};
    unsigned npools = nthr > 1 ? 2 : 1;
    if (nthr > 1 && !pools[1]) {
        fprintf(stderr, "bench arith: cannot start %u threads\n", nthr);
        return 1;
    }
    const unsigned g1_logs[3] = {quick ? 12u : 16u, quick ? 14u : 18u, quick ? 16u : 20u};
    const unsigned g2_log = quick ? 12 : 16, ntt_log = quick ? 16 : 20;
    size_t nmax = (size_t)1 << g1_logs[2];
    int rc = 1;

    double load = -1;
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf", &load) != 1) load = -1;
        fclose(lf);
    }
    printf("zkpipe bench arith%s: best of runs, threads 1 and %u, load average %.2f at start\n",
           quick ? " --quick" : "", nthr, load);
    printf("%-28s %12s %12s\n", "", "bn254", "bls12_381");
    row("Fr mul (ns)", bench_mul_fr_bn254(2000000), bench_mul_fr_bls12_381(2000000), "%.1f");
    row("Fq mul (ns)", bench_mul_fq_bn254(2000000), bench_mul_fq_bls12_381(2000000), "%.1f");

    zp_scalar_t *k = malloc(nmax * sizeof *k);
    zp_g1a_bn254_t *p1 = malloc(nmax * sizeof *p1);
    zp_g1a_bls12_381_t *p1b = malloc(nmax * sizeof *p1b);
    zp_g2a_bn254_t *p2 = malloc(((size_t)1 << g2_log) * sizeof *p2);
    zp_g2a_bls12_381_t *p2b = malloc(((size_t)1 << g2_log) * sizeof *p2b);
    if (!k || !p1 || !p1b || !p2 || !p2b) {
        fprintf(stderr, "bench arith: out of memory\n");
        goto out;
    }
    uint64_t t0 = zp_now_ns();
    if (points_g1_bn254(p1, nmax) || points_g1_bls12_381(p1b, nmax) ||
        points_g2_bn254(p2, (size_t)1 << g2_log) || points_g2_bls12_381(p2b, (size_t)1 << g2_log)) {
        fprintf(stderr, "bench arith: out of memory\n");
        goto out;
    }
    double setup_ms = ms_since(t0);
    const uint64_t *r_bn = zp_fr_bn254_modulus.l, *r_bls = zp_fr_bls12_381_modulus.l;
    char what[64];
    for (int s = 0; s < 3; s++) {
        size_t n = (size_t)1 << g1_logs[s];
        for (unsigned pi = 0; pi < npools; pi++) {
            int reps = n >= ((size_t)1 << 20) ? 1 : 2;
            snprintf(what, sizeof what, "G1 MSM 2^%u %uT (ms)", g1_logs[s], zp_pool_size(pools[pi]));
            rnd_scalars(k, n, r_bn);
            double a = msm_ms_g1_bn254(p1, k, n, pools[pi], reps);
            rnd_scalars(k, n, r_bls);
            row(what, a, msm_ms_g1_bls12_381(p1b, k, n, pools[pi], reps), "%.1f");
        }
    }
    for (unsigned pi = 0; pi < npools; pi++) {
        size_t n = (size_t)1 << g2_log;
        snprintf(what, sizeof what, "G2 MSM 2^%u %uT (ms)", g2_log, zp_pool_size(pools[pi]));
        rnd_scalars(k, n, r_bn);
        double a = msm_ms_g2_bn254(p2, k, n, pools[pi], 2);
        rnd_scalars(k, n, r_bls);
        row(what, a, msm_ms_g2_bls12_381(p2b, k, n, pools[pi], 2), "%.1f");
    }
    for (unsigned pi = 0; pi < npools; pi++) {
        snprintf(what, sizeof what, "NTT 2^%u %uT (ms)", ntt_log, zp_pool_size(pools[pi]));
        row(what, ntt_ms_bn254(ntt_log, pools[pi]), ntt_ms_bls12_381(ntt_log, pools[pi]), "%.1f");
    }
    row("pairing (ms)", pairing_ms_bn254(), pairing_ms_bls12_381(), "%.2f");
    printf("(setup of random points: %.0f ms)\n", setup_ms);
    rc = 0;
out:
    free(k);
    free(p1);
    free(p1b);
    free(p2);
    free(p2b);
    zp_pool_destroy(&pools[1]);
    return rc;
}
