/* msm.c - multi-scalar multiplication for G1/G2 of BN254 and BLS12-381 (msm.h).
 *
 * This file holds what does not depend on the group: the plan (window c, batch size K, point
 * split P, chosen from n and the thread count by a cost model counted in field
 * multiplications), the scratch layout and the Booth digit extraction; msm_impl.h holds the
 * algorithm and is instantiated once per group and curve at the bottom.
 * Scratch (caller-owned, 64-byte aligned): [partial sums: Wmax*P Jacobian points]
 * then per thread [affine buckets | XYZZ buckets | bucket states | K pending points |
 * K bucket indices | K denominators | K prefix products | K/4 deferred points and their
 * bucket indices], each part 64-byte aligned.
 * Tests: tests/test_msm.c. Bench: cli/bench_arith.c */
#include <stdatomic.h>
#include <string.h>

#include "lib/msm/msm.h"
#include "lib/msm/msm_int.h"

enum {
    MSM_ST_AFF = 1,       /* affine bucket holds a point */
    MSM_ST_BUSY = 2,      /* affine bucket has a pending batched addition */
    MSM_ST_XYZZ = 4,      /* XYZZ bucket holds a point */
    MSM_NAIVE_MAX = 8,    /* up to this many points: double-and-add per point */
    MSM_BITS_MAX = 256,   /* scalars are read as 256-bit integers */
    MSM_C_MIN = 2,
    MSM_C_MAX = 16,
    MSM_K_MIN = 16,
    MSM_K_MAX = 1024,
    MSM_P_MAX = 64,
    MSM_Q_DIV = 4,        /* deferred-point queue: K / MSM_Q_DIV entries */
};

typedef struct {
    unsigned c;   /* window bits */
    unsigned nb;  /* buckets per window: 2^(c-1) */
    unsigned W;   /* windows */
    unsigned P;   /* point ranges per window (tasks = W * P) */
    unsigned K;   /* batched additions per inversion */
} msm_plan_t;

typedef struct {
    size_t res_bytes, thread_bytes;
    size_t off_bk, off_xb, off_st, off_bp, off_bb, off_den, off_pre, off_qp, off_qb;
} msm_layout_t;

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* Choose c, K, P minimising the makespan estimate. Costs in field multiplications: a batched
 * affine addition ~6, an XYZZ mixed addition ~10 (for conflicting digits beyond what the
 * deferred queue holds), a full XYZZ addition ~14, an inversion inv_cost. */
static void msm_plan(msm_plan_t *pl, size_t n, unsigned nt, unsigned bits, double inv_cost)
{
    double best = -1;
    memset(pl, 0, sizeof *pl);
    for (unsigned c = MSM_C_MIN; c <= MSM_C_MAX; c++) {
        unsigned nb = 1u << (c - 1), W = bits / c + 1;
        unsigned K = nb / 4;
        if (K < MSM_K_MIN) K = MSM_K_MIN;
        if (K > MSM_K_MAX) K = MSM_K_MAX;
        for (unsigned P = 1; P <= MSM_P_MAX; P *= 2) {
            if (P > 1 && (nt == 1 || n / P < 4096)) break;
            double m = (double)((n + P - 1) / P);
            double f = (double)K / (2.0 * nb) - 1.0 / MSM_Q_DIV; /* queue overflow */
            if (f < 0) f = 0;
            if (f > 0.5) f = 0.5;
            double task = m * (6.0 * (1 - f) + 10.0 * f) + (m / K + 1) * inv_cost +
                          24.0 * nb + 0.5 * m;
            unsigned T = W * P;
            double cost = (double)((T + nt - 1) / nt) * task;
            if (best < 0 || cost < best) {
                best = cost;
                *pl = (msm_plan_t){.c = c, .nb = nb, .W = W, .P = P, .K = K};
            }
        }
    }
}

static void msm_layout(msm_layout_t *l, const msm_plan_t *pl, size_t pa, size_t xyzz, size_t fe,
                       size_t jac)
{
    size_t wmax = MSM_BITS_MAX / pl->c + 1, o = 0;
    l->res_bytes = align64(wmax * pl->P * jac);
    l->off_bk = o;
    o = align64(o + (size_t)pl->nb * pa);
    l->off_xb = o;
    o = align64(o + (size_t)pl->nb * xyzz);
    l->off_st = o;
    o = align64(o + pl->nb);
    l->off_bp = o;
    o = align64(o + (size_t)pl->K * pa);
    l->off_bb = o;
    o = align64(o + (size_t)pl->K * sizeof(uint32_t));
    l->off_den = o;
    o = align64(o + (size_t)pl->K * fe);
    l->off_pre = o;
    o = align64(o + (size_t)pl->K * fe);
    l->off_qp = o;
    o = align64(o + (size_t)(pl->K / MSM_Q_DIV) * pa);
    l->off_qb = o;
    o = align64(o + (size_t)(pl->K / MSM_Q_DIV) * sizeof(uint32_t));
    l->thread_bytes = o;
}

/* bits [off, off + len) of k, len < 32; zero past bit 255 */
static inline uint32_t msm_bits(const zp_scalar_t *k, unsigned off, unsigned len)
{
    if (off >= 256) return 0;
    unsigned li = off / 64, sh = off % 64;
    uint64_t v = k->l[li] >> sh;
    if (sh && li < 3) v |= k->l[li + 1] << (64 - sh);
    return (uint32_t)(v & ((1u << len) - 1));
}

/* Booth digit of window w: raw + bit(cw-1) - 2^c * bit(cw+c-1), in [-2^(c-1), 2^(c-1)].
 * The digits sum (times 2^(cw)) to k as long as the top window's top bit is clear, which
 * W = bits/c + 1 guarantees. */
static inline int32_t msm_digit(const zp_scalar_t *k, unsigned w, unsigned c)
{
    unsigned off = w * c;
    uint32_t raw = msm_bits(k, off, c);
    uint32_t cin = off ? msm_bits(k, off - 1, 1) : 0;
    return (int32_t)(raw + cin) - (int32_t)((raw >> (c - 1)) << c);
}

/* bit length of the largest scalar */
static unsigned msm_max_bits(const zp_scalar_t *s, size_t n)
{
    uint64_t o[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 4; j++) o[j] |= s[i].l[j];
    for (int j = 3; j >= 0; j--)
        if (o[j]) return (unsigned)(64 * j + 64 - __builtin_clzll(o[j]));
    return 0;
}

/* inversion cost in multiplications of the coordinate field (Fermat in Fq; Fq2 inversion is
 * one Fq inversion plus a few Fq products, against 3 Fq products per Fq2 product) */
#define MSM_COST_FQ 300.0
#define MSM_COST_FQ2 110.0

#define MSM_G g1
#define MSM_C bn254
#define MSM_F fq_bn254
#include "lib/msm/msm_impl.h"
#undef MSM_G
#undef MSM_F

#undef MSM_COST_FQ
#define MSM_COST_FQ MSM_COST_FQ2
#define MSM_G g2
#define MSM_F fq2_bn254
#include "lib/msm/msm_impl.h"
#undef MSM_G
#undef MSM_C
#undef MSM_F

#undef MSM_COST_FQ
#define MSM_COST_FQ 300.0
#define MSM_G g1
#define MSM_C bls12_381
#define MSM_F fq_bls12_381
#include "lib/msm/msm_impl.h"
#undef MSM_G
#undef MSM_F

#undef MSM_COST_FQ
#define MSM_COST_FQ MSM_COST_FQ2
#define MSM_G g2
#define MSM_F fq2_bls12_381
#include "lib/msm/msm_impl.h"
