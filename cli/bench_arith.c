/* bench_arith.c - `zkpipe bench arith [--quick] [--threads N] [--msm-only] [--sizes "16 18"]
 * [--groups g1,g2] [--c C] [--scalars uniform|witness|both] [--endo on|off|both] [--dim 2|4]
 * [--vector on|off|both] [--cpu] [--json]`:
 * timings of
 * the arithmetic the prover is built from: ns per Fr/Fq multiplication; ms per G1 and G2 MSM
 * at 2^16, 2^18, 2^20 (--quick: 2^12, 2^14, 2^16; --sizes: any list), for BN254 and
 * BLS12-381, 1 and N threads (default 2), with the endomorphism ("endo": the default split,
 * GLV, on BLS12-381's G2 the 4-dimensional psi split from 2^17 points; --dim 2|4 forces one)
 * and without it
 * ("plain", the 256-bit Pippenger) and their ratio, on uniform random scalars below r and on
 * witness-like scalars (45% 0, 30% 1, 10% below 2^32, 5% r - small (-1, -2, ...), 10%
 * uniform); --vector picks the batched additions' path (AVX-512 IFMA, lib/msm/msm_vec_impl.h,
 * the default where the CPU has it; both: each row on both, alternately, and their ratio); --c forces the window size (tuning; default: the plan's choice); --cpu reports
 * the MSMs' process CPU time instead of wall time (loaded machines). Then ms per NTT
 * 2^20 (--quick 2^16) and per pairing. Inputs are random: points are sums of a few random
 * multiples of the generator (cheap to build), converted with one batch inversion. Each
 * figure is the best of 2 runs (one run from 2^20 up). Speed is printed, never asserted.
 * --json (issue 31): MSMs only, one thread unless --threads is given (then 1 and N), one JSON
 * object per line per MSM and method: {"group","curve","log2n","threads","scalars","method",
 * "ms"} for method "endo" (the split forced), "plain" (forced) and "auto" (what the prover
 * uses: the calibrated choice, zp_msm_auto_method; its line adds "picked"), the three run
 * alternately on the same scalars and checked equal. ZP_MSM_METHOD=endo|plain forces every
 * AUTO MSM (the prover's too). The text table's "endo" column is the split forced. With
 * --json, endo and plain run at their calibrated windows; auto's line adds "picked", its
 * window "c", the calibrated offset "dc", the batch size "k" and point ranges "p" with their
 * calibrated offsets "dk", "dp" (session 20), and "auto_over_best" (auto / the better of endo and
 * plain: the rule is <= 1.05); --model adds "auto_model" (auto's method at the model's
 * window, K and P; "over_auto": its time / auto's) and "auto_plan_kp" (auto's method and
 * window at the plan's K and P: what the table's K / P offsets gain, session 20); --reps N: N alternating rounds, the median from 3
 * (else the best). With --threads, the N-thread figures are wall ms even with --cpu;
 * --thread-cpu (with --json) makes them the busiest pool thread's CPU ms over the MSM (see
 * tcpu_sample: the makespan without the scheduler's waits on a loaded machine); --many-only
 * (with --json and --threads N) skips the one-thread MSMs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/msm/msm.h"
#include "lib/msm/msm_batch.h"
#include "lib/msm/msm_fixed.h"
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

/* --cpu: MSM figures are process CPU time (all threads) instead of wall time: on a loaded
 * machine the fairer number for one thread */
static bool bench_cpu;
static uint64_t msm_clock_cpu(bool cpu)
{
    if (!cpu) return zp_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t msm_clock(void) { return msm_clock_cpu(bench_cpu); }

/* --thread-cpu: an N-thread MSM's figure is the busiest pool thread's CPU time over the MSM
 * (each thread reads its own CLOCK_THREAD_CPUTIME_ID before and after, through the pool; the
 * pool's threads sleep when idle): what the makespan on an idle machine would be, up to the
 * waits at the MSM's barriers, without the time a loaded machine's scheduler keeps a thread
 * off a core (which wall time counts, and which made two-thread wall times on this 2-core
 * machine differ by 30% for the same plan). Process CPU time would count both threads' work
 * and not the imbalance between them. */
static bool bench_tcpu;
enum { TCPU_MAX = 1024 };
typedef struct {
    uint64_t t[TCPU_MAX];
} tcpu_snap_t;
static void tcpu_sample(void *a, unsigned tid, unsigned n)
{
    (void)n;
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    if (tid < TCPU_MAX) ((tcpu_snap_t *)a)->t[tid] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* the busiest thread's CPU ns between snapshots b and e of pool */
static uint64_t tcpu_span(const tcpu_snap_t *b, const tcpu_snap_t *e, const zp_pool_t *pool)
{
    uint64_t mx = 0;
    for (unsigned i = 0; i < zp_pool_size(pool) && i < TCPU_MAX; i++)
        if (e->t[i] - b->t[i] > mx) mx = e->t[i] - b->t[i];
    return mx;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the median of v[0..n) (sorted in place) */
static double median_of(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* random scalars below r (top limb masked below r's top limb) */
static void rnd_scalars(zp_scalar_t *k, size_t n, const uint64_t *r)
{
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 4; j++) k[i].l[j] = brnd();
        k[i].l[3] %= r[3];
    }
}

/* witness-like scalars (see the header) */
static void wit_scalars(zp_scalar_t *k, size_t n, const uint64_t *r)
{
    for (size_t i = 0; i < n; i++) {
        unsigned sel = (unsigned)(brnd() % 20);
        memset(&k[i], 0, sizeof k[i]);
        if (sel < 9) continue;
        if (sel < 15) {
            k[i].l[0] = 1;
        } else if (sel < 17) {
            k[i].l[0] = brnd() >> 32;
        } else if (sel < 18) {
            memcpy(k[i].l, r, sizeof k[i].l);
            k[i].l[0] -= 1 + brnd() % 1000;
        } else {
            for (int j = 0; j < 4; j++) k[i].l[j] = brnd();
            k[i].l[3] %= r[3];
        }
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
                                   size_t n, zp_pool_t *pool, int reps, const zp_msm_opts_t *o) \
    {                                                                                          \
        void *scr = NULL;                                                                      \
        size_t sz = zp_msm_##G##_##C##_ex_scratch_size(n, 1, zp_pool_size(pool), o);           \
        if (posix_memalign(&scr, 64, sz ? sz : 64)) return -1;                                 \
        double best = -1;                                                                      \
        for (int r = 0; r < reps; r++) {                                                       \
            zp_##G##_##C##_t out;                                                              \
            uint64_t t0 = msm_clock();                                                         \
            zp_msm_##G##_##C##_multi_ex(&out, &pa, 1, k, n, scr, pool, o);                     \
            double ms = (double)(msm_clock() - t0) / 1e6;                                      \
            if (best < 0 || ms < best) best = ms;                                              \
        }                                                                                      \
        free(scr);                                                                             \
        return best;                                                                           \
    }                                                                                          \
    /* nm methods o[j] alternately (one run of each per round), best of reps each into ms[j]  \
     * (the median from 3 rounds up) */                                                        \
    static int msm_alt_##G##_##C(double *ms, const zp_##G##a_##C##_t *pa, const zp_scalar_t *k, \
                                 size_t n, zp_pool_t *pool, int reps, const zp_msm_opts_t *o,  \
                                 unsigned nm)                                                  \
    {                                                                                          \
        size_t sz = 64;                                                                        \
        if (nm > 8) return -1;                                                                 \
        for (unsigned j = 0; j < nm; j++) {                                                    \
            size_t x = zp_msm_##G##_##C##_ex_scratch_size(n, 1, zp_pool_size(pool), &o[j]);    \
            if (x > sz) sz = x;                                                                \
            ms[j] = -1;                                                                        \
        }                                                                                      \
        void *scr = NULL;                                                                      \
        if (posix_memalign(&scr, 64, sz)) return -1;                                           \
        zp_##G##_##C##_t out[8];                                                               \
        const bool cpu = bench_cpu && zp_pool_size(pool) <= 1;  /* threads: wall (makespan) */ \
        const bool tcpu = bench_tcpu && zp_pool_size(pool) > 1;  /* or the busiest thread's CPU */ \
        double all[8][16];                                                                     \
        static tcpu_snap_t tb, te;                                                             \
        if (reps > 16) reps = 16;                                                              \
        /* one untimed run first (session 20): the first run faults in the fresh scratch, and \
         * with it in the first round the first candidate's median was over the others' (its  \
         * median of 3 was in effect the worse of 2 normal rounds): calibrate's kp rows came   \
         * out ~2% in favour of every candidate but the plan's K and P, which runs first */    \
        zp_msm_##G##_##C##_multi_ex(&out[0], &pa, 1, k, n, scr, pool, &o[0]);                  \
        for (int r = 0; r < reps; r++)                                                         \
            for (unsigned j = 0; j < nm; j++) {                                                \
                if (tcpu) zp_pool_run(pool, tcpu_sample, &tb);                                 \
                uint64_t t0 = msm_clock_cpu(cpu);                                              \
                zp_msm_##G##_##C##_multi_ex(&out[j], &pa, 1, k, n, scr, pool, &o[j]);          \
                double x = (double)(msm_clock_cpu(cpu) - t0) / 1e6;                            \
                if (tcpu) {                                                                    \
                    zp_pool_run(pool, tcpu_sample, &te);                                       \
                    x = (double)tcpu_span(&tb, &te, pool) / 1e6;                               \
                }                                                                              \
                all[j][r] = x;                                                                 \
                if (ms[j] < 0 || x < ms[j]) ms[j] = x;                                         \
            }                                                                                  \
        if (reps >= 3)                                                                         \
            for (unsigned j = 0; j < nm; j++) ms[j] = median_of(all[j], (unsigned)reps);        \
        free(scr);                                                                             \
        for (unsigned j = 1; j < nm; j++)                                                      \
            if (!zp_##G##_##C##_eq(&out[j], &out[0])) {                                        \
                fprintf(stderr, "bench arith: " #G " " #C " 2^%zu: the methods' results differ\n", n); \
                return -1;                                                                     \
            }                                                                                  \
        return 0;                                                                              \
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

/* one MSM row: BN254 endo, plain, plain/endo, then the same for BLS12-381 ("-": not run) */
static void msm_row(const char *what, const double t[4])
{
    char c[6][16];
    for (int i = 0; i < 2; i++) {
        const double e = t[2 * i], p = t[2 * i + 1];
        if (e < 0) snprintf(c[3 * i], 16, "-"); else snprintf(c[3 * i], 16, "%.1f", e);
        if (p < 0) snprintf(c[3 * i + 1], 16, "-"); else snprintf(c[3 * i + 1], 16, "%.1f", p);
        if (e > 0 && p > 0) snprintf(c[3 * i + 2], 16, "%.2fx", e / p); else snprintf(c[3 * i + 2], 16, "-");
    }
    printf("%-28s %9s %9s %7s %9s %9s %7s\n", what, c[0], c[1], c[2], c[3], c[4], c[5]);
    fflush(stdout);
}

typedef struct {
    bool quick, msm_only;
    unsigned nthr, c, groups, kinds, endo;  /* groups: 1 G1, 2 G2; kinds: 1 uniform, 2 witness;
                                               endo: 1 on, 2 off */
    unsigned dim;                           /* --dim: the split's dimension (0: default) */
    unsigned vec;                           /* --vector: 1 on (the default where the CPU has
                                               AVX-512 IFMA), 2 off, 3 both, alternately */
    unsigned logs[8], nlogs;
    bool json, threads_given;               /* --json: JSON lines, endo / plain / auto */
    unsigned reps;                          /* --reps: alternating rounds (0: 2, 1 from 2^20) */
    bool model;                             /* --model: also auto at the model's window */
    bool many_only;                         /* --many-only (--json): the N-thread MSMs only */
    unsigned kp[8][3], nkp;                 /* --kp "K:P ...": the auto MSM with each forced
                                               K / P (0: the plan's), alternately */
} bench_opts_t;

static int parse_mask(unsigned *m, const char *v, const char *a, const char *b)
{
    if (!strcmp(v, a)) *m = 1;
    else if (!strcmp(v, b)) *m = 2;
    else if (!strcmp(v, "both")) *m = 3;
    else return -1;
    return 0;
}

/* *r = v, an integer in [lo, hi]; else a message naming the option */
static int parse_uint(unsigned *r, const char *v, unsigned lo, unsigned hi, const char *opt)
{
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "bench arith: %s wants %u..%u, not '%s'\n", opt, lo, hi, v);
        return -1;
    }
    *r = (unsigned)x;
    return 0;
}

static int bench_parse(bench_opts_t *o, int argc, char **argv)
{
    *o = (bench_opts_t){.nthr = 2, .groups = 3, .kinds = 3, .endo = 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->quick = true;
        } else if (!strcmp(a, "--msm-only")) {
            o->msm_only = true;
        } else if (!strcmp(a, "--cpu")) {
            bench_cpu = true;
        } else if (!strcmp(a, "--thread-cpu")) {
            bench_tcpu = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--model")) {
            o->model = true;
        } else if (!strcmp(a, "--many-only")) {
            o->many_only = true;
        } else if (!strcmp(a, "--kp") && v) {
            const char *q = v;
            o->nkp = 0;
            while (*q) {
                char *end;
                unsigned long kk = strtoul(q, &end, 10), pp = 0, gg = 0;
                if (end == q || kk > 1024) break;
                if (*end == ':') {
                    q = end + 1;
                    pp = strtoul(q, &end, 10);
                    if (end == q || pp > 64) break;
                    if (*end == ':') {
                        q = end + 1;
                        gg = strtoul(q, &end, 10);
                        if (end == q || gg > 2) break;
                    }
                }
                if (o->nkp == 8) break;
                o->kp[o->nkp][0] = (unsigned)kk;
                o->kp[o->nkp][1] = (unsigned)pp;
                o->kp[o->nkp++][2] = (unsigned)gg;
                q = end;
                while (*q == ' ' || *q == ',') q++;
            }
            if (*q || !o->nkp) {
                fprintf(stderr, "bench arith: --kp wants up to 8 \"K:P[:G]\" (K 0..1024, P 0..64, G windows per task 0..2; 0: the plan's), e.g. \"0:0 512:0 0:2 0:0:1\"\n");
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            if (parse_uint(&o->reps, v, 1, 15, a)) return -1;
            i++;
        } else if (!strcmp(a, "--threads") && v) {
            if (parse_uint(&o->nthr, v, 1, 1024, a)) return -1;
            o->threads_given = true;
            i++;
        } else if (!strcmp(a, "--dim") && v) {
            if (parse_uint(&o->dim, v, 2, 4, a) || o->dim == 3) {
                fprintf(stderr, "bench arith: --dim wants 2 or 4\n");
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--c") && v) {
            if (parse_uint(&o->c, v, 2, 16, a)) return -1;
            i++;
        } else if (!strcmp(a, "--sizes") && v) {
            char *end;
            const char *q = v;
            o->nlogs = 0;
            for (;;) {
                unsigned long l = strtoul(q, &end, 10);
                if (end == q) break;
                if (l < 4 || l > 24 || o->nlogs == 8) {
                    fprintf(stderr, "bench arith: --sizes wants up to 8 powers in 4..24\n");
                    return -1;
                }
                o->logs[o->nlogs++] = (unsigned)l;
                q = end;
            }
            if (!o->nlogs || *q) {
                fprintf(stderr, "bench arith: --sizes: bad list '%s'\n", v);
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--groups") && v) {
            o->groups = (strstr(v, "g1") ? 1u : 0u) | (strstr(v, "g2") ? 2u : 0u);
            if (!o->groups) {
                fprintf(stderr, "bench arith: --groups wants g1, g2 or g1,g2\n");
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--scalars") && v && !parse_mask(&o->kinds, v, "uniform", "witness")) {
            i++;
        } else if (!strcmp(a, "--endo") && v && !parse_mask(&o->endo, v, "on", "off")) {
            i++;
        } else if (!strcmp(a, "--vector") && v && !parse_mask(&o->vec, v, "on", "off")) {
            i++;
        } else {
            fprintf(stderr, "usage: zkpipe bench arith [--quick] [--threads N] [--msm-only] "
                            "[--sizes \"16 18 20\"] [--groups g1,g2] [--c C] "
                            "[--scalars uniform|witness|both] [--endo on|off|both] [--vector on|off|both] [--dim 2|4] [--cpu] "
                            "[--thread-cpu] [--json [--model] [--reps N] [--many-only] [--kp \"K:P ...\"]]\n");
            return -1;
        }
    }
    if ((o->vec & 1) && !zp_msm_set_vector(true)) {
        if (o->vec == 1) {
            fprintf(stderr, "bench arith: --vector on: this CPU has no AVX-512 IFMA\n");
            return -1;
        }
        o->vec = 2;                          /* both: only the scalar path exists here */
    }
    if (!o->vec) o->vec = zp_msm_vector() ? 1 : 2;
    if (!o->nlogs) {
        o->nlogs = 3;
        for (unsigned j = 0; j < 3; j++) o->logs[j] = (o->quick ? 12 : 16) + 2 * j;
    }
    return 0;
}

/* the rows of one group: every size, pool and scalar kind, and vector path (--vector both:
 * the two rows alternate, then their ratio); t[] as msm_row */
#define BENCH_ROWS(G)                                                                          \
    for (unsigned s = 0; s < o.nlogs; s++) {                                                   \
        size_t n = (size_t)1 << o.logs[s];                                                     \
        for (unsigned pi = 0; pi < npools; pi++)                                               \
            for (unsigned kind = 1; kind <= 2; kind++) {                                       \
                if (!(o.kinds & kind)) continue;                                               \
                int reps = n >= ((size_t)1 << 20) ? 1 : 2;                                     \
                double t[2][4] = {{-1, -1, -1, -1}, {-1, -1, -1, -1}};                         \
                zp_msm_opts_t on = {.c = o.c, .dim = o.dim, .method = ZP_MSM_ENDO}, off = {.no_endo = true, .c = o.c}; \
                for (unsigned vm = 1; vm <= 2; vm++) {                                         \
                    if (!(o.vec & vm)) continue;                                               \
                    zp_msm_set_vector(vm == 1);                                                \
                    double *tv = t[vm - 1];                                                    \
                    snprintf(what, sizeof what, "%s MSM 2^%u %uT %s%s",                       \
                             (#G)[1] == '1' ? "G1" : "G2", o.logs[s], zp_pool_size(pools[pi]), \
                             kind == 1 ? "uniform" : "witness", o.vec == 3 ? (vm == 1 ? " vec" : " sc") : ""); \
                    (kind == 1 ? rnd_scalars : wit_scalars)(k, n, r_bn);                       \
                    if (o.endo & 1) tv[0] = msm_ms_##G##_bn254(G##_bn, k, n, pools[pi], reps, &on); \
                    if (o.endo & 2) tv[1] = msm_ms_##G##_bn254(G##_bn, k, n, pools[pi], reps, &off); \
                    (kind == 1 ? rnd_scalars : wit_scalars)(k, n, r_bls);                      \
                    if (o.endo & 1) tv[2] = msm_ms_##G##_bls12_381(G##_bls, k, n, pools[pi], reps, &on); \
                    if (o.endo & 2) tv[3] = msm_ms_##G##_bls12_381(G##_bls, k, n, pools[pi], reps, &off); \
                    msm_row(what, tv);                                                         \
                }                                                                              \
                if (o.vec == 3) vec_ratio_row(t);                                              \
            }                                                                                  \
    }

/* --json: one line per MSM and method (endo, plain, auto: run alternately, same scalars);
 * auto's line also names the method it took ("picked"). With --kp (session 17) the runs are
 * the auto MSM with each forced K / P instead, one line each with the plan's own K and P and
 * the time over the first pair's ("over_first"): what a calibration of K and P would measure */
#define JSON_ROWS(G, GN)                                                                       \
    for (unsigned s = 0; s < o.nlogs; s++) {                                                   \
        size_t n = (size_t)1 << o.logs[s];                                                     \
        int reps = o.reps ? (int)o.reps : n >= ((size_t)1 << 20) ? 1 : 2;                      \
        for (unsigned pi = o.many_only; pi < npools; pi++)                                     \
            for (unsigned kind = 1; kind <= 2; kind++) {                                       \
                if (!(o.kinds & kind)) continue;                                               \
                for (unsigned cv = 0; cv < 2; cv++) {                                          \
                    zp_msm_opts_t mo[8] = {{.c = o.c, .method = ZP_MSM_ENDO},                  \
                                           {.c = o.c, .method = ZP_MSM_PLAIN},                 \
                                           {.c = o.c, .method = ZP_MSM_AUTO},                  \
                                           {.c = o.c, .method = ZP_MSM_AUTO, .model_window = true}}; \
                    const zp_msm_opts_t auto0 = mo[2];                                         \
                    const unsigned nt_ = zp_pool_size(pools[pi]);                              \
                    zp_msm_info_t pi_, got;                                                    \
                    if (cv) zp_msm_##G##_bls12_381_plan_info(&pi_, n, nt_, kind == 2, &auto0); \
                    else zp_msm_##G##_bn254_plan_info(&pi_, n, nt_, kind == 2, &auto0);        \
                    /* --model, session 20: auto's method and window at the plan's K and P */  \
                    mo[4] = (zp_msm_opts_t){.c = o.c, .method = pi_.method, .model_window = true, \
                                            .window_delta = pi_.dc};                           \
                    double ms[8];                                                              \
                    unsigned nmeth = o.model ? 5 : 3;                                          \
                    if (o.nkp) {                                                               \
                        nmeth = o.nkp;                                                         \
                        for (unsigned j = 0; j < o.nkp; j++)                                   \
                            mo[j] = (zp_msm_opts_t){.c = o.c, .method = ZP_MSM_AUTO, .k = o.kp[j][0], .p = o.kp[j][1], .g = o.kp[j][2]}; \
                    }                                                                          \
                    (kind == 1 ? rnd_scalars : wit_scalars)(k, n, cv ? r_bls : r_bn);          \
                    int e = cv ? msm_alt_##G##_bls12_381(ms, G##_bls, k, n, pools[pi], reps, mo, nmeth) \
                               : msm_alt_##G##_bn254(ms, G##_bn, k, n, pools[pi], reps, mo, nmeth); \
                    if (e) goto out;                                                           \
                    double best = ms[0] < ms[1] ? ms[0] : ms[1];                               \
                    for (unsigned j = 0; j < nmeth; j++) {                                     \
                        printf("{\"group\":\"G%u\",\"curve\":\"%s\",\"log2n\":%u,\"threads\":%u,"     \
                               "\"scalars\":\"%s\",\"method\":\"%s\"",                                \
                               GN, cv ? "bls12_381" : "bn254", o.logs[s], nt_, kind == 1 ? "uniform" : "witness", \
                               o.nkp || j == 2 ? "auto" : j == 0 ? "endo" : j == 1 ? "plain"      \
                               : j == 3 ? "auto_model" : "auto_plan_kp");                          \
                        if (o.nkp) {                                                           \
                            if (cv) zp_msm_##G##_bls12_381_plan_info(&got, n, nt_, kind == 2, &mo[j]); \
                            else zp_msm_##G##_bn254_plan_info(&got, n, nt_, kind == 2, &mo[j]); \
                            printf(",\"k\":%u,\"p\":%u,\"g\":%u,\"plan_k\":%u,\"plan_p\":%u,\"plan_g\":%u,\"c\":%u,\"ms\":%.2f,\"over_first\":%.3f}\n", \
                                   got.K, got.P, got.wpt, pi_.K, pi_.P, pi_.wpt, got.c, ms[j], ms[j] / ms[0]);   \
                            continue;                                                          \
                        }                                                                      \
                        printf(",\"ms\":%.2f", ms[j]);                                         \
                        if (j == 2)                                                            \
                            printf(",\"picked\":\"%s\",\"c\":%u,\"dc\":%d,\"k\":%u,\"dk\":%d,\"p\":%u,\"dp\":%d," \
                                   "\"auto_over_best\":%.3f", pi_.method == ZP_MSM_PLAIN ? "plain" : "endo", pi_.c, \
                                   pi_.dc, pi_.K, pi_.dk, pi_.P, pi_.dp, ms[2] / best);                 \
                        if (j >= 3) printf(",\"over_auto\":%.3f", ms[j] / ms[2]);             \
                        printf("}\n");                                                         \
                    }                                                                          \
                    fflush(stdout);                                                            \
                }                                                                              \
            }                                                                                  \
    }

/* --vector both: vector / scalar time per column */
static void vec_ratio_row(double t[2][4])
{
    char c[4][16];
    for (int i = 0; i < 4; i++) {
        if (t[0][i] > 0 && t[1][i] > 0) snprintf(c[i], 16, "%.2fx", t[0][i] / t[1][i]);
        else snprintf(c[i], 16, "-");
    }
    printf("%-28s %9s %9s %7s %9s %9s %7s\n", "  vector / scalar", c[0], c[1], "", c[2], c[3], "");
    fflush(stdout);
}

static int bench_batch(int argc, char **argv);  /* --batch M: at the end of this file */
/* the 1-minute load average (-1: unknown) */
static double fixed_load(void)
{
    double v = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &v) != 1) v = -1;
    if (f) fclose(f);
    return v;
}

static int bench_fixed(int argc, char **argv);  /* --fixed: at the end of this file */
int zp_bench_arith(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--batch")) return bench_batch(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--fixed")) return bench_fixed(argc, argv);
    bench_opts_t o;
    if (bench_parse(&o, argc, argv)) return 2;
    if (zp_msm_calib_init()) {
        fprintf(stderr, "bench arith: %s\n", zp_err_msg());
        return 2;
    }
    if (o.json && !o.threads_given) o.nthr = 1;  /* --json: one thread unless asked */
    const unsigned nthr = o.nthr;
    zp_pool_t *pools[2] = {NULL, nthr > 1 ? zp_pool_new(nthr) : NULL};
    unsigned npools = nthr > 1 ? 2 : 1;
    if (nthr > 1 && !pools[1]) {
        fprintf(stderr, "bench arith: cannot start %u threads\n", nthr);
        return 1;
    }
    const unsigned ntt_log = o.quick ? 16 : 20;
    unsigned lmax = 0;
    for (unsigned s = 0; s < o.nlogs; s++) lmax = o.logs[s] > lmax ? o.logs[s] : lmax;
    size_t nmax = (size_t)1 << lmax, n1 = o.groups & 1 ? nmax : 1, n2 = o.groups & 2 ? nmax : 1;
    int rc = 1;

    double load = -1;
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf", &load) != 1) load = -1;
        fclose(lf);
    }
    if (!o.json)
        printf("zkpipe bench arith%s: best of runs, threads 1 and %u, load average %.2f at start%s%s\n",
               o.quick ? " --quick" : "", nthr, load, o.c ? " (window forced)" : "",
               bench_cpu ? "; MSMs in CPU ms" : "");
    else
        fprintf(stderr, "zkpipe bench arith --json: %s, load average %.2f at start, %s (threads > 1: %s), %s path, table: %s\n",
                o.reps >= 3 ? "median of alternating rounds" : "best of runs", load,
                bench_cpu ? "process CPU ms" : "wall ms", bench_tcpu ? "the busiest thread's CPU ms" : "wall ms",
                zp_msm_vector() ? "vector" : "scalar", zp_msm_calib_source());
    if (!o.msm_only && !o.json) {
        printf("%-28s %12s %12s\n", "", "bn254", "bls12_381");
        row("Fr mul (ns)", bench_mul_fr_bn254(2000000), bench_mul_fr_bls12_381(2000000), "%.1f");
        row("Fq mul (ns)", bench_mul_fq_bn254(2000000), bench_mul_fq_bls12_381(2000000), "%.1f");
    }

    zp_scalar_t *k = malloc(nmax * sizeof *k);
    zp_g1a_bn254_t *g1_bn = malloc(n1 * sizeof *g1_bn);
    zp_g1a_bls12_381_t *g1_bls = malloc(n1 * sizeof *g1_bls);
    zp_g2a_bn254_t *g2_bn = malloc(n2 * sizeof *g2_bn);
    zp_g2a_bls12_381_t *g2_bls = malloc(n2 * sizeof *g2_bls);
    if (!k || !g1_bn || !g1_bls || !g2_bn || !g2_bls) {
        fprintf(stderr, "bench arith: out of memory\n");
        goto out;
    }
    uint64_t t0 = zp_now_ns();
    if (points_g1_bn254(g1_bn, n1) || points_g1_bls12_381(g1_bls, n1) ||
        points_g2_bn254(g2_bn, n2) || points_g2_bls12_381(g2_bls, n2)) {
        fprintf(stderr, "bench arith: out of memory\n");
        goto out;
    }
    double setup_ms = ms_since(t0);
    const uint64_t *r_bn = zp_fr_bn254_modulus.l, *r_bls = zp_fr_bls12_381_modulus.l;
    char what[64];
    if (o.json) {
        if (o.groups & 1) JSON_ROWS(g1, 1)
        if (o.groups & 2) JSON_ROWS(g2, 2)
        fprintf(stderr, "zkpipe bench arith --json: load average %.2f at the end\n", fixed_load());
        rc = 0;
        goto out;
    }
    printf("%-28s %9s %9s %7s %9s %9s %7s\n", "MSM (ms)", "bn endo", "bn plain", "ratio",
           "bls endo", "bls plain", "ratio");
    if (o.groups & 1) BENCH_ROWS(g1)
    if (o.groups & 2) BENCH_ROWS(g2)
    if (!o.msm_only) {
        printf("%-28s %12s %12s\n", "", "bn254", "bls12_381");
        for (unsigned pi = 0; pi < npools; pi++) {
            snprintf(what, sizeof what, "NTT 2^%u %uT (ms)", ntt_log, zp_pool_size(pools[pi]));
            row(what, ntt_ms_bn254(ntt_log, pools[pi]), ntt_ms_bls12_381(ntt_log, pools[pi]), "%.1f");
        }
        row("pairing (ms)", pairing_ms_bn254(), pairing_ms_bls12_381(), "%.2f");
    }
    printf("(setup of random points: %.0f ms)\n", setup_ms);
    rc = 0;
out:
    free(k);
    free(g1_bn);
    free(g1_bls);
    free(g2_bn);
    free(g2_bls);
    zp_pool_destroy(&pools[1]);
    return rc;
}

/* ---- `zkpipe bench arith --batch M` (owner: batch): the same-base batched G1 MSM
 * (lib/msm/msm_batch.h) against M separate MSMs over the same bases, per size, thread
 * count, scalar kind and curve. Scalars: "uniform" (every job's independent, below r) and
 * "witness" (same-circuit-like: the class of index i (0, 1, < 2^32, r - small, uniform, in
 * the proportions of wit_scalars) is shared by the jobs, the values in it are each job's
 * own, as for partitions of one circuit). Options as above: --sizes, --threads, --scalars,
 * --cpu, --c; --curves bn254|bls12_381|both. Each figure: best of 2 (1 from 2^20 up). */
static void wit_batch(zp_scalar_t *const *k, unsigned m, size_t n, const uint64_t *r)
{
    for (size_t i = 0; i < n; i++) {
        unsigned sel = (unsigned)(brnd() % 20);
        for (unsigned j = 0; j < m; j++) {
            zp_scalar_t *x = &k[j][i];
            memset(x, 0, sizeof *x);
            if (sel < 9) continue;
            if (sel < 15) {
                x->l[0] = 1;
            } else if (sel < 17) {
                x->l[0] = brnd() >> 32;
            } else if (sel < 18) {
                memcpy(x->l, r, sizeof x->l);
                x->l[0] -= 1 + brnd() % 1000;
            } else {
                for (int q = 0; q < 4; q++) x->l[q] = brnd();
                x->l[3] %= r[3];
            }
        }
    }
}

#define BENCH_BATCH(C)                                                                         \
    /* t[0]: batched, t[1]: m separate MSMs (ms, best of reps) */                             \
    static int batch_ms_##C(double t[2], const zp_g1a_##C##_t *pa, const zp_scalar_t *const *k, \
                            unsigned m, size_t n, zp_pool_t *pool, int reps, const zp_msm_opts_t *o) \
    {                                                                                          \
        unsigned nt = zp_pool_size(pool);                                                      \
        size_t sz = zp_msm_g1_##C##_batch_scratch_size(n, 1, m, nt, o);                        \
        size_t s1 = zp_msm_g1_##C##_ex_scratch_size(n, 1, nt, o);                              \
        void *scr = NULL;                                                                      \
        if (posix_memalign(&scr, 64, (sz > s1 ? sz : s1) + 64)) return -1;                     \
        zp_g1_##C##_t out[ZP_MSM_BATCH_MAX * 4], one;                                          \
        t[0] = t[1] = -1;                                                                      \
        for (int r = 0; r < reps; r++) {                                                       \
            uint64_t t0 = msm_clock();                                                         \
            zp_msm_g1_##C##_batch(out, &pa, 1, k, m, n, scr, pool, o);                         \
            double b = (double)(msm_clock() - t0) / 1e6;                                       \
            t0 = msm_clock();                                                                  \
            for (unsigned j = 0; j < m; j++) {                                                 \
                zp_msm_g1_##C##_multi_ex(&one, &pa, 1, k[j], n, scr, pool, o);                 \
                if (!zp_g1_##C##_eq(&one, &out[j])) {                                          \
                    fprintf(stderr, "bench arith --batch: job %u differs from its own MSM\n", j); \
                    free(scr);                                                                 \
                    return -1;                                                                 \
                }                                                                              \
            }                                                                                  \
            double s = (double)(msm_clock() - t0) / 1e6;                                       \
            if (t[0] < 0 || b < t[0]) t[0] = b;                                                \
            if (t[1] < 0 || s < t[1]) t[1] = s;                                                \
        }                                                                                      \
        free(scr);                                                                             \
        return 0;                                                                              \
    }
BENCH_BATCH(bn254)
BENCH_BATCH(bls12_381)

static int bench_batch(int argc, char **argv)
{
    unsigned m = 0, curves = 3;
    int ac = 0;
    char **av = calloc((size_t)argc + 1, sizeof *av);
    if (!av) return 1;
    for (int i = 0; i < argc; i++) {            /* strip --batch M and --curves X, parse the rest */
        if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            if (parse_uint(&m, argv[++i], 2, ZP_MSM_BATCH_MAX, "--batch")) goto bad;
        } else if (!strcmp(argv[i], "--curves") && i + 1 < argc) {
            const char *v = argv[++i];
            curves = (strstr(v, "bn254") ? 1u : 0u) | (strstr(v, "bls12_381") ? 2u : 0u);
            if (!strcmp(v, "both")) curves = 3;
            if (!curves) {
                fprintf(stderr, "bench arith: --curves wants bn254, bls12_381 or both\n");
                goto bad;
            }
        } else {
            av[ac++] = argv[i];
        }
    }
    if (!m) {
        fprintf(stderr, "bench arith: --batch wants a job count 2..%d\n", ZP_MSM_BATCH_MAX);
        goto bad;
    }
    bench_opts_t o;
    if (bench_parse(&o, ac, av)) goto bad;
    free(av);
    zp_pool_t *pools[2] = {NULL, o.nthr > 1 ? zp_pool_new(o.nthr) : NULL};
    unsigned npools = o.nthr > 1 ? 2 : 1;
    unsigned lmax = 0;
    for (unsigned s = 0; s < o.nlogs; s++) lmax = o.logs[s] > lmax ? o.logs[s] : lmax;
    size_t nmax = (size_t)1 << lmax;
    zp_scalar_t *k[ZP_MSM_BATCH_MAX] = {0};
    zp_g1a_bn254_t *bn = malloc(nmax * sizeof *bn);
    zp_g1a_bls12_381_t *bls = malloc(nmax * sizeof *bls);
    int rc = 1;
    bool ok = bn && bls && (npools == 1 || pools[1]);
    for (unsigned j = 0; j < m; j++) ok = ok && (k[j] = malloc(nmax * sizeof *k[j])) != NULL;
    if (!ok || points_g1_bn254(bn, nmax) || points_g1_bls12_381(bls, nmax)) {
        fprintf(stderr, "bench arith --batch: out of memory\n");
        goto out;
    }
    double load = -1;
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf", &load) != 1) load = -1;
        fclose(lf);
    }
    printf("zkpipe bench arith --batch %u: G1 MSM, %u jobs over one base array, batched vs %u "
           "separate MSMs; best of runs; load average %.2f at start; %s\n", m, m, m, load,
           bench_cpu ? "process CPU ms" : "wall ms");
    printf("%-34s %10s %10s %7s %10s %10s %7s\n", "", "bn batch", "bn sep", "b/s", "bls batch", "bls sep", "b/s");
    zp_msm_opts_t mo = {.c = o.c};
    for (unsigned s = 0; s < o.nlogs; s++) {
        size_t n = (size_t)1 << o.logs[s];
        int reps = n >= ((size_t)1 << 20) ? 1 : 2;
        for (unsigned pi = 0; pi < npools; pi++)
            for (unsigned kind = 1; kind <= 2; kind++) {
                if (!(o.kinds & kind)) continue;
                double t[4] = {-1, -1, -1, -1};
                for (unsigned cv = 0; cv < 2; cv++) {
                    if (!(curves & (1u << cv))) continue;
                    const uint64_t *r = cv ? zp_fr_bls12_381_modulus.l : zp_fr_bn254_modulus.l;
                    if (kind == 1)
                        for (unsigned j = 0; j < m; j++) rnd_scalars(k[j], n, r);
                    else
                        wit_batch(k, m, n, r);
                    int e = cv ? batch_ms_bls12_381(t + 2, bls, (const zp_scalar_t *const *)k, m, n, pools[pi], reps, &mo)
                               : batch_ms_bn254(t, bn, (const zp_scalar_t *const *)k, m, n, pools[pi], reps, &mo);
                    if (e) goto out;
                }
                char what[64], c[6][16];
                snprintf(what, sizeof what, "G1 2^%u %uT %s x%u", o.logs[s], zp_pool_size(pools[pi]),
                         kind == 1 ? "uniform" : "witness", m);
                for (int i = 0; i < 2; i++) {
                    double b = t[2 * i], p = t[2 * i + 1];
                    if (b < 0) snprintf(c[3 * i], 16, "-"); else snprintf(c[3 * i], 16, "%.1f", b);
                    if (p < 0) snprintf(c[3 * i + 1], 16, "-"); else snprintf(c[3 * i + 1], 16, "%.1f", p);
                    if (b > 0 && p > 0) snprintf(c[3 * i + 2], 16, "%.3f", b / p); else snprintf(c[3 * i + 2], 16, "-");
                }
                printf("%-34s %10s %10s %7s %10s %10s %7s\n", what, c[0], c[1], c[2], c[3], c[4], c[5]);
                fflush(stdout);
            }
    }
    rc = 0;
out:
    for (unsigned j = 0; j < m; j++) free(k[j]);
    free(bn);
    free(bls);
    zp_pool_destroy(&pools[1]);
    return rc;
bad:
    free(av);
    return 2;
}

/* ---- `zkpipe bench arith --fixed` (owner: fixedbase): the fixed-base G1 MSM over a table of
 * precomputed multiples (lib/msm/msm_fixed.h) against the regular MSM (msm.h, its own plan) on
 * the same bases and uniform scalars (the H MSM's case), per curve, size, thread count, window
 * c (--cs "13 16 18") and table depth (--depths "2 4 0", 0 = W: one round); both MSMs run
 * alternately, best of 2 (1 from 2^20 up); the table's extra bytes (depth - 1 copies of the
 * bases) and their ratio to the bases' bytes. One full table (depth W) is built per (curve,
 * size, c); a depth D uses every R-th of its levels (R = ceil(W / D)). "+phi x": the variant
 * that also stores beta x of every level (phi(T) not computed on read): its time, ratio to the
 * regular MSM and memory (depth - 1 + depth / 2 copies of the bases on BN254). Options as
 * above: --sizes, --threads, --cpu; --curves bn254|bls12_381|both. Results are checked equal. */
#define BENCH_FIXED(C)                                                                         \
    static int fixed_rows_##C(const zp_g1a_##C##_t *pa, const zp_scalar_t *k, size_t n,        \
                              unsigned logn, zp_pool_t *const *pools, unsigned npools,         \
                              const unsigned *cs, unsigned ncs, const unsigned *ds, unsigned nds) \
    {                                                                                          \
        const int reps = n >= ((size_t)1 << 20) ? 1 : 2;                                      \
        const double base_mb = (double)n * sizeof *pa / 1048576.0;                             \
        size_t rsz = zp_msm_g1_##C##_scratch_size(n, zp_pool_size(pools[npools - 1]));         \
        void *rs = NULL;                                                                       \
        if (posix_memalign(&rs, 64, rsz)) return -1;                                           \
        for (unsigned ci = 0; ci < ncs; ci++) {                                                \
            const unsigned c = cs[ci], W = zp_msm_fixed_g1_##C##_windows(c);                   \
            /* the full table (depth W, R = 1): level L = 2^(cL) P, L = 1..W-1 */              \
            uint64_t t0 = zp_now_ns();                                                         \
            size_t tb = zp_msm_fixed_g1_##C##_table_size(n, c, W);                             \
            void *tab = NULL;                                                                  \
            if (!tb || posix_memalign(&tab, 64, tb) ||                                         \
                zp_msm_fixed_g1_##C##_table_build(tab, tb, pa, n, c, W, pools[npools - 1])) {  \
                free(tab);                                                                     \
                free(rs);                                                                      \
                return -1;                                                                     \
            }                                                                                  \
            const zp_g1a_##C##_t *full = (const zp_g1a_##C##_t *)(const void *)((const uint8_t *)tab + ZP_MSM_FIXED_HDR_BYTES); \
            printf("  " #C " 2^%u c=%u: full table (%u levels) built in %.0f ms wall, %u threads\n", \
                   logn, c, W - 1, ms_since(t0), zp_pool_size(pools[npools - 1]));             \
            /* the variant storing phi's x: beta x of every level, the bases' too */          \
            zp_fq_##C##_t *pxa = malloc((size_t)W * n * sizeof *pxa);                          \
            if (!pxa) {                                                                        \
                free(tab);                                                                     \
                free(rs);                                                                      \
                return -1;                                                                     \
            }                                                                                  \
            for (unsigned L = 0; L < W; L++) {                                                 \
                const zp_g1a_##C##_t *l = L ? full + (size_t)(L - 1) * n : pa;                 \
                for (size_t i = 0; i < n; i++)                                                 \
                    zp_fq_##C##_mul(&pxa[(size_t)L * n + i], &l[i].x, zp_g1_##C##_endo_beta()); \
            }                                                                                  \
            for (unsigned di = 0; di < nds; di++) {                                            \
                unsigned D = ds[di] == 0 || ds[di] > W ? W : ds[di];                           \
                unsigned R = (W + D - 1) / D;                                                  \
                D = (W + R - 1) / R;                    /* the depth R rounds need */          \
                const zp_g1a_##C##_t *lv[ZP_GLV_BITS / ZP_MSM_FIXED_C_MIN + 1];                \
                const zp_fq_##C##_t *px[ZP_GLV_BITS / ZP_MSM_FIXED_C_MIN + 1];                 \
                for (unsigned d = 1; d < D; d++) lv[d - 1] = full + (size_t)(R * d - 1) * n;   \
                for (unsigned d = 0; d < D; d++) px[d] = pxa + (size_t)R * d * n;              \
                for (unsigned pi = 0; pi < npools; pi++) {                                     \
                    unsigned nt = zp_pool_size(pools[pi]);                                     \
                    size_t fsz = zp_msm_fixed_g1_##C##_scratch_size(n, c, D, nt);              \
                    void *fs = NULL;                                                           \
                    if (posix_memalign(&fs, 64, fsz)) {                                        \
                        free(tab);                                                             \
                        free(rs);                                                              \
                        return -1;                                                             \
                    }                                                                          \
                    double tf = -1, tr = -1, tp = -1;                                          \
                    zp_g1_##C##_t of, orr, op;                                                 \
                    for (int r = 0; r < reps; r++) {                                           \
                        uint64_t a = msm_clock();                                              \
                        zp_msm_g1_##C(&orr, pa, k, n, rs, pools[pi]);                          \
                        double x = (double)(msm_clock() - a) / 1e6;                            \
                        a = msm_clock();                                                       \
                        zp_msm_fixed_g1_##C##_levels(&of, pa, lv, NULL, D, R, c, k, n, fs, pools[pi]); \
                        double y = (double)(msm_clock() - a) / 1e6;                            \
                        a = msm_clock();                                                       \
                        zp_msm_fixed_g1_##C##_levels(&op, pa, lv, px, D, R, c, k, n, fs, pools[pi]); \
                        double z = (double)(msm_clock() - a) / 1e6;                            \
                        if (tr < 0 || x < tr) tr = x;                                          \
                        if (tf < 0 || y < tf) tf = y;                                          \
                        if (tp < 0 || z < tp) tp = z;                                          \
                    }                                                                          \
                    free(fs);                                                                  \
                    if (!zp_g1_##C##_eq(&of, &orr) || !zp_g1_##C##_eq(&op, &orr)) {            \
                        fprintf(stderr, "bench arith --fixed: " #C " c=%u depth %u differs from the regular MSM\n", c, D); \
                        free(pxa);                                                             \
                        free(tab);                                                             \
                        free(rs);                                                              \
                        return -1;                                                             \
                    }                                                                          \
                    const double xb = (double)(D - 1), xp = xb + D * (double)sizeof pxa[0] / sizeof *pa; \
                    printf("%-10s 2^%-2u %uT c=%-2u depth %-2u R=%-2u %10.1f %10.1f %7.3f %9.1f %6.2fx %10.1f %7.3f %6.2fx %8.1f\n", \
                           #C, logn, nt, c, D, R, tf, tr, tf / tr, xb * base_mb, xb, tp, tp / tr, xp,  \
                           (double)fsz / 1048576.0);                                           \
                    fflush(stdout);                                                            \
                }                                                                              \
            }                                                                                  \
            free(pxa);                                                                         \
            free(tab);                                                                         \
        }                                                                                      \
        free(rs);                                                                              \
        return 0;                                                                              \
    }
BENCH_FIXED(bn254)
BENCH_FIXED(bls12_381)

/* a list of up to 8 unsigned in [lo, hi] */
static int parse_list(unsigned *out, unsigned *cnt, const char *v, unsigned lo, unsigned hi, const char *opt)
{
    char *end;
    const char *q = v;
    *cnt = 0;
    for (;;) {
        unsigned long x = strtoul(q, &end, 10);
        if (end == q) break;
        if (x < lo || x > hi || *cnt == 8) {
            fprintf(stderr, "bench arith: %s wants up to 8 values in %u..%u, not '%s'\n", opt, lo, hi, v);
            return -1;
        }
        out[(*cnt)++] = (unsigned)x;
        q = end;
    }
    if (!*cnt || *q) {
        fprintf(stderr, "bench arith: %s: bad list '%s'\n", opt, v);
        return -1;
    }
    return 0;
}

static int bench_fixed(int argc, char **argv)
{
    unsigned curves = 3, cs[8] = {13, 16, 18}, ncs = 3, ds[8] = {2, 4, 0}, nds = 3;
    int ac = 0;
    char **av = calloc((size_t)argc + 1, sizeof *av);
    if (!av) return 1;
    for (int i = 0; i < argc; i++) {            /* strip --fixed, --cs, --depths, --curves */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--fixed")) {
            continue;
        } else if (!strcmp(argv[i], "--cs") && v) {
            if (parse_list(cs, &ncs, argv[++i], ZP_MSM_FIXED_C_MIN, ZP_MSM_FIXED_C_MAX, "--cs")) goto bad;
        } else if (!strcmp(argv[i], "--depths") && v) {
            if (parse_list(ds, &nds, argv[++i], 0, 64, "--depths")) goto bad;
        } else if (!strcmp(argv[i], "--curves") && v) {
            i++;
            curves = !strcmp(v, "both") ? 3u : (strstr(v, "bn254") ? 1u : 0u) | (strstr(v, "bls12_381") ? 2u : 0u);
            if (!curves) goto bad_curves;
        } else {
            av[ac++] = argv[i];
        }
    }
    bench_opts_t o;
    if (bench_parse(&o, ac, av)) goto bad;
    free(av);
    zp_pool_t *pools[2] = {NULL, o.nthr > 1 ? zp_pool_new(o.nthr) : NULL};
    unsigned npools = o.nthr > 1 ? 2 : 1;
    unsigned lmax = 0;
    for (unsigned s = 0; s < o.nlogs; s++) lmax = o.logs[s] > lmax ? o.logs[s] : lmax;
    size_t nmax = (size_t)1 << lmax;
    zp_scalar_t *k = malloc(nmax * sizeof *k);
    zp_g1a_bn254_t *bn = malloc(nmax * sizeof *bn);
    zp_g1a_bls12_381_t *bls = malloc(nmax * sizeof *bls);
    int rc = 1;
    if (!k || !bn || !bls || (npools == 2 && !pools[1]) || points_g1_bn254(bn, nmax) ||
        points_g1_bls12_381(bls, nmax)) {
        fprintf(stderr, "bench arith --fixed: out of memory\n");
        goto out;
    }
    const double load = fixed_load();
    printf("zkpipe bench arith --fixed: G1 MSM over a fixed-base table vs the regular MSM, uniform "
           "scalars, alternate runs, best of runs; load average %.2f at start; %s\n", load,
           bench_cpu ? "process CPU ms" : "wall ms");
    printf("%-10s %-4s %-2s %-4s %-8s %-4s %10s %10s %7s %9s %7s %10s %7s %7s %8s\n", "curve", "n", "T",
           "c", "depth", "R", "fixed", "regular", "f/r", "table MB", "xbases", "+phi x", "fp/r",
           "xbases", "scr MB");
    for (unsigned s = 0; s < o.nlogs; s++) {
        size_t n = (size_t)1 << o.logs[s];
        if ((curves & 1) && ((rnd_scalars(k, n, zp_fr_bn254_modulus.l), 0) ||
                             fixed_rows_bn254(bn, k, n, o.logs[s], pools, npools, cs, ncs, ds, nds)))
            goto out;
        if ((curves & 2) && ((rnd_scalars(k, n, zp_fr_bls12_381_modulus.l), 0) ||
                             fixed_rows_bls12_381(bls, k, n, o.logs[s], pools, npools, cs, ncs, ds, nds)))
            goto out;
    }
    rc = 0;
out:
    if (rc) fprintf(stderr, "bench arith --fixed: failed (out of memory or a wrong result)\n");
    free(k);
    free(bn);
    free(bls);
    zp_pool_destroy(&pools[1]);
    return rc;
bad_curves:
    fprintf(stderr, "bench arith: --curves wants bn254, bls12_381 or both\n");
bad:
    free(av);
    return 2;
}

/* ---- `zkpipe msm calibrate [--out FILE] [--quick] [--sizes "12 16"] [--threads N] [--groups
 * g1,g2] [--reps N] [--c-table]` (issue 31): measures, on this CPU, for G1 and G2 of both
 * curves, uniform and witness-like scalars, at 2^12, 2^14, ..., 2^20 (--sizes: any of 4..24;
 * witness-like up to 2^20; --quick: 2^12, 2^14, 2^16), with one thread (process CPU ms) and
 * with N threads (wall ms; N: --threads, default the CPUs online; 1: one-thread rows only),
 * the endomorphism split and the plain MSM each at the plan's model window and one bit either
 * side (fewer where that is clamped to 2..16), all candidates alternately on the same scalars,
 * best of 2 rounds (1 from 2^18 up; --reps N: N rounds, the median from 3 up; --thread-cpu:
 * the N-thread rows are the busiest thread's CPU ms, tcpu_sample; --many-only: no one-thread
 * rows), then (session 20) for each method at the window the table takes from those rows
 * (zp_msm_calib_offset) the batch size K halved and doubled and, with threads, the point
 * ranges per window P doubled and halved (where P > 1), each against the plan's K and P
 * alternately (median of at least 3 rounds), as format 4 kp rows (ratios; --kp-only: those
 * alone, at the windows of the table in use), and writes every candidate as a row
 * of the table msm_calib.c reads (msm.h: zp_msm_calib_init): to FILE (written to FILE.tmp,
 * checked by loading it, then renamed), or stdout. Install it as
 * $prefix/share/zkpipe/msm-calib.txt or point ZKPIPE_MSM_CALIB at it. The rows are measured on
 * the arithmetic path in use (AVX-512 IFMA where the CPU has it; ZP_MSM_VECTOR=0 for the scalar
 * path) and the file says which (format 3: `path vector|scalar`), so that one file may hold
 * both paths' rows (concatenate two runs' rows under their path lines). --c-table prints the
 * rows as initialisers of msm_calib_default.h (scalar path) or msm_calib_default_vec.h. */
typedef struct {
    const unsigned *logs;
    unsigned nlogs, wmax, reps, nthr;
    bool ctab, many_only;          /* --many-only: the N-thread rows only */
    bool kp_only;                  /* --kp-only: no window rows, kp rows at the table's windows */
    FILE *f;
    zp_pool_t *pool;
} calib_ctx_t;

/* the K / P candidates (session 20): K/2, 2K; with threads 2P, and P/2 where P > 1 */
static const int calib_kp_var[4][2] = {{-1, 0}, {1, 0}, {0, 1}, {0, -1}};

/* Per method, at the window offset wd[method] the table takes, the plan's K and P and the
 * candidates of calib_kp_var that change them, alternately on the same scalars (median of at
 * least 3 rounds: a ratio decides at 2%), written as format 4 kp rows: the time over the
 * plan's K and P */
#define CALIB_KP(G, GN, C, CV)                                                                 \
    static int calib_kp_##G##_##C(const calib_ctx_t *cx, const zp_##G##a_##C##_t *pa,         \
                                  const zp_scalar_t *k, size_t n, zp_pool_t *pool, unsigned kind, \
                                  unsigned lg, const int wd[2])                                \
    {                                                                                          \
        const unsigned nt = zp_pool_size(pool);                                                \
        for (unsigned meth = 0; meth < 2; meth++) {                                            \
            zp_msm_opts_t mo[5];                                                               \
            zp_msm_info_t in[5];                                                               \
            unsigned nc = 1;                                                                   \
            mo[0] = (zp_msm_opts_t){.method = meth ? ZP_MSM_PLAIN : ZP_MSM_ENDO,               \
                                    .model_window = true, .window_delta = wd[meth]};           \
            zp_msm_##G##_##C##_plan_info(&in[0], n, nt, kind, &mo[0]);                         \
            for (unsigned v = 0; v < 4; v++) {                                                 \
                if (calib_kp_var[v][1] && nt == 1) continue;  /* one thread: P is 1 */         \
                mo[nc] = mo[0];                                                                \
                mo[nc].k_delta = calib_kp_var[v][0], mo[nc].p_delta = calib_kp_var[v][1];      \
                zp_msm_##G##_##C##_plan_info(&in[nc], n, nt, kind, &mo[nc]);                   \
                if (in[nc].K != in[0].K || in[nc].P != in[0].P) nc++;  /* not clamped */       \
            }                                                                                  \
            if (nc == 1) continue;                                                             \
            double ms[5];                                                                      \
            int rp = cx->reps > 3 ? (int)cx->reps : 3;                                         \
            if (msm_alt_##G##_##C(ms, pa, k, n, pool, rp, mo, nc)) return -1;                  \
            fprintf(stderr, "  g%u %s %s 2^%u %uT %s c %u: K %u P %u %.1f ms;", GN, #C,        \
                    kind ? "witness" : "uniform", lg, nt, meth ? "plain" : "endo", in[0].c, in[0].K, \
                    in[0].P, ms[0]);                                                           \
            for (unsigned j = 1; j < nc; j++) {                                                \
                const double r = ms[j] / ms[0];                                                \
                if (cx->ctab)                                                                  \
                    fprintf(cx->f, "    {%u, %u, %u, %u, %u, %u, %d, %d, %d, %.3ff}, /* kp: c %u K %u P %u */\n", \
                            GN, CV, kind, lg, nt, meth, wd[meth], mo[j].k_delta, mo[j].p_delta, r, in[j].c, \
                            in[j].K, in[j].P);                                                 \
                else                                                                           \
                    fprintf(cx->f, "kp g%u %s %s %u %u %s %d %d %d %.3f  # c %u K %u P %u\n", GN, #C, \
                            kind ? "witness" : "uniform", lg, nt, meth ? "plain" : "endo", wd[meth], \
                            mo[j].k_delta, mo[j].p_delta, r, in[j].c, in[j].K, in[j].P);       \
                fprintf(stderr, " K %u P %u %.3fx", in[j].K, in[j].P, r);                      \
            }                                                                                  \
            fprintf(stderr, "\n");                                                             \
            fflush(cx->f);                                                                     \
        }                                                                                      \
        return 0;                                                                              \
    }
CALIB_KP(g1, 1, bn254, 0)
CALIB_KP(g1, 1, bls12_381, 1)
CALIB_KP(g2, 2, bn254, 0)
CALIB_KP(g2, 2, bls12_381, 1)

#define CALIB_GROUP(G, GN, C, CV)                                                              \
    static int calib_##G##_##C(const calib_ctx_t *cx)                                          \
    {                                                                                          \
        unsigned lmax = 0;                                                                     \
        for (unsigned s = 0; s < cx->nlogs; s++) lmax = cx->logs[s] > lmax ? cx->logs[s] : lmax; \
        size_t nmax = (size_t)1 << lmax;                                                       \
        zp_##G##a_##C##_t *pa = malloc(nmax * sizeof *pa);                                     \
        zp_scalar_t *k = malloc(nmax * sizeof *k);                                             \
        int rc = -1;                                                                           \
        if (!pa || !k || points_##G##_##C(pa, nmax)) goto out;                                 \
        for (unsigned s = 0; s < cx->nlogs; s++)                                               \
            for (unsigned kind = 0; kind < 2; kind++) {                                        \
                if (kind && cx->logs[s] > cx->wmax) continue;                                  \
                size_t n = (size_t)1 << cx->logs[s];                                           \
                (kind ? wit_scalars : rnd_scalars)(k, n, zp_fr_##C##_modulus.l);               \
                for (unsigned tc = cx->many_only; tc < (cx->pool ? 2u : 1u); tc++) {           \
                    zp_pool_t *pool = tc ? cx->pool : NULL;                                    \
                    const unsigned nt = zp_pool_size(pool);                                    \
                    int wd[2] = {0, 0};  /* the windows the table takes: the K / P rows' */    \
                    if (cx->kp_only) {                                                         \
                        zp_msm_pick_t pk = zp_msm_auto_pick(GN, CV, kind ? 0.15 : 1.0, n, nt); \
                        wd[0] = pk.dc[0], wd[1] = pk.dc[1];                                    \
                        if (calib_kp_##G##_##C(cx, pa, k, n, pool, kind, cx->logs[s], wd)) goto out; \
                        continue;                                                              \
                    }                                                                          \
                    zp_msm_opts_t mo[6];                                                       \
                    unsigned cc[6], nc = 0;                                                    \
                    for (unsigned meth = 0; meth < 2; meth++)                                  \
                        for (int dc = -1; dc <= 1; dc++) {                                     \
                            zp_msm_opts_t o = {.method = meth ? ZP_MSM_PLAIN : ZP_MSM_ENDO,    \
                                               .model_window = true, .window_delta = dc};      \
                            zp_msm_info_t in;                                                  \
                            zp_msm_##G##_##C##_plan_info(&in, n, nt, kind, &o);                \
                            bool dup = false;    /* clamped onto another candidate's window */ \
                            for (unsigned j = 0; j < nc; j++)                                  \
                                dup |= !kind && mo[j].method == o.method && cc[j] == in.c;     \
                            if (dup) continue;                                                 \
                            mo[nc] = o;                                                        \
                            cc[nc++] = in.c;                                                   \
                        }                                                                      \
                    double ms[6];                                                              \
                    int rp = cx->reps ? (int)cx->reps : cx->logs[s] >= 18 ? 1 : 2;             \
                    if (msm_alt_##G##_##C(ms, pa, k, n, pool, rp, mo, nc)) goto out;           \
                    double bm[2] = {-1, -1}, w3[2][3] = {{0}};                                 \
                    int bd[2] = {0, 0};                                                        \
                    unsigned bc[2] = {0, 0};                                                   \
                    for (unsigned j = 0; j < nc; j++) {                                        \
                        unsigned meth = mo[j].method == ZP_MSM_PLAIN;                          \
                        w3[meth][mo[j].window_delta + 1] = ms[j];                              \
                        if (cx->ctab)                                                          \
                            fprintf(cx->f, "    {%u, %u, %u, %u, %u, %u, %d, %.2ff}, /* c %u */\n", GN, CV, kind, \
                                    cx->logs[s], nt, meth, mo[j].window_delta, ms[j], cc[j]);  \
                        else                                                                   \
                            fprintf(cx->f, "g%u %s %s %u %u %s %d %.2f  # c %u\n", GN, #C,     \
                                    kind ? "witness" : "uniform", cx->logs[s], nt, meth ? "plain" : "endo", \
                                    mo[j].window_delta, ms[j], cc[j]);                         \
                        if (bm[meth] < 0 || ms[j] < bm[meth])                                  \
                            bm[meth] = ms[j], bd[meth] = mo[j].window_delta, bc[meth] = cc[j]; \
                    }                                                                          \
                    fflush(cx->f);                                                             \
                    fprintf(stderr, "  g%u %s %s 2^%u %uT: endo %.1f ms (c %u, %+d), plain %.1f ms (c %u, %+d): %.3fx\n", \
                            GN, #C, kind ? "witness" : "uniform", cx->logs[s], nt, bm[0], bc[0], bd[0], \
                            bm[1], bc[1], bd[1], bm[0] / bm[1]);                               \
                    wd[0] = zp_msm_calib_offset(w3[0]), wd[1] = zp_msm_calib_offset(w3[1]);    \
                    if (calib_kp_##G##_##C(cx, pa, k, n, pool, kind, cx->logs[s], wd)) goto out; \
                }                                                                              \
            }                                                                                  \
        rc = 0;                                                                                \
    out:                                                                                       \
        free(pa);                                                                              \
        free(k);                                                                               \
        return rc;                                                                             \
    }
CALIB_GROUP(g1, 1, bn254, 0)
CALIB_GROUP(g1, 1, bls12_381, 1)
CALIB_GROUP(g2, 2, bn254, 0)
CALIB_GROUP(g2, 2, bls12_381, 1)

#define CALIB_USAGE "usage: zkpipe msm calibrate [--out FILE] [--quick] [--sizes \"12 16 20\"] [--threads N] [--groups g1,g2] [--reps N] [--thread-cpu] [--many-only] [--kp-only] [--c-table]\n"
static int msm_calibrate(int argc, char **argv)
{
    const char *out = NULL;
    bool quick = false, ctab = false, many_only = false, kp_only = false;
    unsigned logs[8] = {12, 14, 16, 18, 20}, nlogs = 5, reps = 0, groups = 3;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned nthr = ncpu > 1 && ncpu < 1024 ? (unsigned)ncpu : 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--reps") && v) {
            if (parse_uint(&reps, argv[++i], 1, 20, "--reps")) return 2;
        } else if (!strcmp(argv[i], "--threads") && v) {
            if (parse_uint(&nthr, argv[++i], 1, 1024, "--threads")) return 2;
        } else if (!strcmp(argv[i], "--groups") && v) {
            i++;
            groups = !strcmp(v, "g1") ? 1 : !strcmp(v, "g2") ? 2 : !strcmp(v, "g1,g2") ? 3 : 0;
            if (!groups) {
                fprintf(stderr, "msm calibrate: --groups wants g1, g2 or g1,g2\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--out") && v) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--quick")) {
            quick = true;
            nlogs = 3;
        } else if (!strcmp(argv[i], "--c-table")) {
            ctab = true;
        } else if (!strcmp(argv[i], "--thread-cpu")) {
            bench_tcpu = true;
        } else if (!strcmp(argv[i], "--many-only")) {
            many_only = true;
        } else if (!strcmp(argv[i], "--kp-only")) {
            kp_only = true;
        } else if (!strcmp(argv[i], "--sizes") && v) {
            if (parse_list(logs, &nlogs, argv[++i], 4, 24, "--sizes")) return 2;
        } else {
            fprintf(stderr, CALIB_USAGE);
            return 2;
        }
    }
    if (many_only && nthr < 2) {
        fprintf(stderr, "msm calibrate: --many-only wants --threads N with N > 1 (here %u)\n", nthr);
        return 2;
    }
    char tmp[4096];
    FILE *f = stdout;
    zp_pool_t *pool = nthr > 1 ? zp_pool_new(nthr) : NULL;
    if (nthr > 1 && !pool) {
        fprintf(stderr, "msm calibrate: cannot start %u threads\n", nthr);
        return 1;
    }
    if (out) {
        if (snprintf(tmp, sizeof tmp, "%s.tmp", out) >= (int)sizeof tmp) {
            fprintf(stderr, "msm calibrate: --out path too long\n");
            zp_pool_destroy(&pool);
            return 2;
        }
        f = fopen(tmp, "w");
        if (!f) {
            fprintf(stderr, "msm calibrate: cannot write %s: %s\n", tmp, strerror(errno));
            zp_pool_destroy(&pool);
            return 1;
        }
    }
    char model[160] = "unknown CPU";
    FILE *ci = fopen("/proc/cpuinfo", "r");
    if (ci) {
        char line[512];
        while (fgets(line, sizeof line, ci))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                const char *m = strchr(line, ':') + 1;
                while (*m == ' ') m++;
                snprintf(model, sizeof model, "%.*s", (int)strcspn(m, "\n"), m);
                break;
            }
        fclose(ci);
    }
    time_t now = time(NULL);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const double load0 = fixed_load();
    bench_cpu = true;                           /* one thread: process CPU; threads: wall or --thread-cpu */
    const char *hd = ctab ? "/* " : "";
    if (!ctab) fprintf(f, "zkpipe-msm-calib 4\n");
    fprintf(f, "%smachine %s, %ld cores online, %s path, %s%s\n", ctab ? "/* " : "", model, ncpu,
            zp_msm_vector() ? "AVX-512 IFMA" : "scalar", day, ctab ? " */" : "");
    /* the path every row below was measured on (the table keeps the paths apart) */
    if (ctab)
        fprintf(f, "/* path %s: rows for lib/msm/msm_calib_default%s.h */\n", zp_msm_vector() ? "vector" : "scalar",
                zp_msm_vector() ? "_vec" : "");
    else
        fprintf(f, "path %s\n", zp_msm_vector() ? "vector" : "scalar");
    fprintf(f, "%s# zkpipe msm calibrate%s%s: threads %s%u (%s), %s, load %.2f at start%s\n",
            hd, quick ? " --quick" : "", kp_only ? " --kp-only" : "", many_only ? "" : "1 (process CPU ms) and ", nthr, bench_tcpu ? "the busiest thread's CPU ms" : "wall ms",
            kp_only ? "kp rows: the median of at least 3 rounds"
            : reps >= 3 ? "median of the rounds" : "best of the rounds (kp rows: the median of at least 3)",
            load0, ctab ? " */" : "");
    if (!ctab)
        fprintf(f, "# group curve scalars log2n threads method window_offset ms  # window\n"
                   "# kp group curve scalars log2n threads method window_offset k_offset p_offset ratio  # c K P\n");
    fprintf(stderr, "msm calibrate: %s (%s path), threads 1 and %u, load %.2f\n", model,
            zp_msm_vector() ? "AVX-512 IFMA" : "scalar", nthr, load0);
    const calib_ctx_t cx = {.logs = logs, .nlogs = nlogs, .wmax = 20, .reps = reps, .nthr = nthr,
                            .ctab = ctab, .many_only = many_only, .kp_only = kp_only, .f = f, .pool = pool};
    const uint64_t t0 = zp_now_ns();
    int e = 0;
    if (groups & 1) e = e || calib_g1_bn254(&cx) || calib_g1_bls12_381(&cx);
    if (groups & 2) e = e || calib_g2_bn254(&cx) || calib_g2_bls12_381(&cx);
    zp_pool_destroy(&pool);
    const double secs = (double)(zp_now_ns() - t0) / 1e9;
    if (e) {
        fprintf(stderr, "msm calibrate: out of memory or a wrong result\n");
        if (out) {
            fclose(f);
            unlink(tmp);
        }
        return 1;
    }
    fprintf(f, "%s# took %.0f s, load %.2f at the end%s\n", hd, secs, fixed_load(), ctab ? " */" : "");
    fprintf(stderr, "msm calibrate: took %.0f s\n", secs);
    if (!out) return 0;
    if (fclose(f)) {
        fprintf(stderr, "msm calibrate: cannot write %s: %s\n", tmp, strerror(errno));
        unlink(tmp);
        return 1;
    }
    if (!ctab && zp_msm_calib_load(tmp)) {
        fprintf(stderr, "msm calibrate: the table written does not load: %s\n", zp_err_msg());
        unlink(tmp);
        return 1;
    }
    if (rename(tmp, out)) {
        fprintf(stderr, "msm calibrate: cannot rename %s to %s: %s\n", tmp, out, strerror(errno));
        unlink(tmp);
        return 1;
    }
    fprintf(stderr, "msm calibrate: wrote %s\n", out);
    return 0;
}

/* `zkpipe msm calibrate ...` | `zkpipe msm check FILE` | `zkpipe msm which` */
int zp_cmd_msm(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "calibrate")) return msm_calibrate(argc - 1, argv + 1);
    if (argc == 3 && !strcmp(argv[1], "check")) {
        if (zp_msm_calib_load(argv[2])) {
            fprintf(stderr, "msm check: %s\n", zp_err_msg());
            return 2;
        }
        printf("%s: ok\n", argv[2]);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "which")) {
        if (zp_msm_calib_init()) {
            fprintf(stderr, "msm which: %s\n", zp_err_msg());
            return 2;
        }
        const unsigned nt = zp_msm_calib_threads();
        const bool vec = zp_msm_vector();
        printf("table: %s\narithmetic path in use: %s (the rows of that path are used; [rows: ...] names\n"
               "the rows each line reads)\nper log2 n: method (E: the split, P: plain), window c and its offset from the\n"
               "model (+1/-1; uniform scalars: the c of full-size scalars), then k-/k+ where the table halves /\n"
               "doubles the batch size K and p-/p+ the point ranges per window P, threads 1 and %u:\n",
               zp_msm_calib_source(), vec ? "vector (AVX-512 IFMA)" : "scalar", nt > 1 ? nt : 2);
        for (unsigned g = 1; g <= 2; g++)
            for (unsigned cv = 0; cv < 2; cv++)
                for (unsigned w = 0; w < 2; w++)
                    for (unsigned t = 1; t <= (nt > 1 ? nt : 2); t += (nt > 1 ? nt : 2) - 1) {
                        printf("G%u %-9s %-7s %uT", g, cv ? "bls12_381" : "bn254", w ? "witness" : "uniform", t);
                        for (unsigned l = 12; l <= 22; l++) {
                            zp_msm_info_t in;
                            size_t n = (size_t)1 << l;
                            if (g == 1 && cv == 0) zp_msm_g1_bn254_plan_info(&in, n, t, w, NULL);
                            else if (g == 1) zp_msm_g1_bls12_381_plan_info(&in, n, t, w, NULL);
                            else if (cv == 0) zp_msm_g2_bn254_plan_info(&in, n, t, w, NULL);
                            else zp_msm_g2_bls12_381_plan_info(&in, n, t, w, NULL);
                            char d[4] = "", kp[12] = "";
                            if (in.dc) snprintf(d, sizeof d, "%+d", in.dc);
                            if (in.dk || in.dp)
                                snprintf(kp, sizeof kp, "%s%s%s%s", in.dk ? "k" : "", in.dk > 0 ? "+" : in.dk ? "-" : "",
                                         in.dp ? "p" : "", in.dp > 0 ? "+" : in.dp ? "-" : "");
                            printf(" %u:%s%u%s%s", l, in.method == ZP_MSM_PLAIN ? "P" : "E", in.c, d, kp);
                        }
                        zp_msm_rows_t rw;
                        zp_msm_calib_rows(&rw, g, cv, w, t, vec);
                        if (rw.none) printf("  [rows: none, the split at the model's window]\n");
                        else
                            printf("  [rows: %s path %uT%s]\n", rw.vector ? "vector" : "scalar", rw.threads,
                                   rw.fallback ? ", fallback: none measured on this path" : "");
                    }
        return 0;
    }
    fprintf(stderr, CALIB_USAGE
                    "       zkpipe msm check FILE     parse a calibration file\n"
                    "       zkpipe msm which          the table in use and the method per size\n");
    return 2;
}
