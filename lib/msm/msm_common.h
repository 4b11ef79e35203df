/* msm_common.h - private to lib/msm: the group-independent half of the MSM (msm.h).
 *
 * This header holds what does not depend on the group: the plan (window c, batch size K, point
 * split P, chosen from the count of scalars > 1, their bit lengths and the thread count by a
 * cost model counted in field multiplications), the scalar classification, the scratch
 * layout and the Booth digit extraction; msm_impl.h holds the algorithm and is instantiated
 * once per group and curve at the bottom.
 * Scratch (caller-owned, 64-byte aligned): [endomorphism area: d n scalar parts | d n signs |
 * m*n beta x (d = 2) or m*n psi(P) (d = 4, G2) (msm_impl.h: endo_bytes), the larger, reserved
 * in every mode] [partial sums: m * (Wmax*P + P1) Jacobian points]
 * [scalar index: n uint32 (msm_sort)] then per thread [nba = max(nb, K1) affine buckets |
 * nba XYZZ buckets | nba bucket states | kmax = max(K, K1) pending points | kmax bucket
 * indices | kmax denominators | kmax prefix products | kmax/4 deferred points and their
 * bucket indices], each part 64-byte aligned. scratch_size sizes it for n full-size scalars
 * in either mode (n 256-bit scalars, or 2n halves with the endomorphism: the larger of the
 * two); a call whose own plan would need more falls back to its mode's full plan.
 * Included (static functions) by the four instantiation units msm.c (G1 BN254),
 * msm_g2_bn254.c, msm_g1_bls12_381.c, msm_g2_bls12_381.c, one group each, so that the
 * compiler's inlining budget (per translation unit) is not shared between the groups
 * (measured: 3% on a G1 MSM when all four shared one unit).
 * Tests: tests/test_msm.c. Bench: cli/bench_arith.c */
#ifndef ZP_MSM_COMMON_H
#define ZP_MSM_COMMON_H
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
    MSM_K_MAX = 1024,     /* pending additions in one batch (a window pair's 2K included) */
    MSM_P_MAX = 64,
    MSM_Q_DIV = 4,        /* deferred-point queue: K / MSM_Q_DIV entries */
    MSM_ONE_MIN = 2048,   /* scalar-1 points per scalar-1 task, at least */
    MSM_PREFETCH = 8,     /* batched additions: bucket prefetch distance */
    MSM_FOLD_MIN = 32,    /* bucket reduction: halving folds down to this many buckets */
    MSM_TREE_MIN = 64,    /* a fold's upper-half sum: halving while a half has this many */
    MSM_VEC_MIN = 64,     /* msm_vec_impl.h: batches from this size (its 32 lanes' own inversion) */
    MSM_VEC_PAD = 32,     /* msm_vec_impl.h: padding lanes, at most */
};
/* the plan's model of the vector path (msm_vec_impl.h), in the scalar path's units: a batched
 * addition (scalar: 6 products) and the factor on a batch's inversion (its 32 lanes' own
 * batched inversion in Fq) */
#define MSM_VEC_ADD 2.0
#define MSM_VEC_INV 2.5
#define MSM_CHUNK ((size_t)1 << 29)  /* larger inputs run in chunks (32-bit index of 4n parts) */

typedef struct {
    unsigned c;   /* window bits */
    unsigned nb;  /* buckets per window: 2^(c-1) */
    unsigned W;   /* windows */
    unsigned P;   /* point ranges per window (tasks = W * P) */
    unsigned K;   /* batched additions per inversion */
    unsigned P1;  /* tasks summing the scalar-1 points (result slots reserved per MSM) */
    unsigned K1;  /* scalar-1 tasks: accumulators = batched additions per inversion */
    unsigned G;   /* full windows per task: 1, or 2 (two windows' buckets side by side, one
                   * pending batch of 2K over both: half the inversions per addition at the
                   * conflict rate of K; every point read once for both digits); 0 means 1 */
} msm_plan_t;

/* windows per task of plan pl (its G; 0: 1) */
static inline unsigned msm_g(const msm_plan_t *pl) { return pl->G > 1 ? pl->G : 1; }

typedef struct {
    size_t res_bytes, thread_bytes, idx_bytes;  /* idx: one uint32 per input scalar */
    size_t off_bk, off_xb, off_st, off_bp, off_bb, off_den, off_pre, off_qp, off_qb, off_vec;
} msm_layout_t;

/* the batched additions on AVX-512 IFMA (msm_vec_impl.h; G1 and G2) in use: the CPU has it and
 * zp_msm_set_vector / ZP_MSM_VECTOR did not turn it off (msm.c) */
extern atomic_int msm_vec_state;
static inline bool msm_vec_on(void) { return atomic_load_explicit(&msm_vec_state, memory_order_relaxed) > 0; }

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* Makespan of nfull tasks of cost task, then nmid of cost mid, then ntop of cost top, handed
 * out in that order to nt threads, each taking the next task when free (the pool's atomic
 * counter; the top window's tasks come last; mid: a lone full window after the window pairs,
 * msm_plan_t.G). (Before: ceil(nfull / nt) task + ceil(ntop / nt) top, which charged 2
 * threads 5 rounds for 7 + 1 tasks where they take 4, and so kept 2 threads off c = 16.) */
static double msm_makespan(unsigned nfull, double task, unsigned nmid, double mid, unsigned ntop, double top,
                           unsigned nt)
{
    if (nt <= 1) return nfull * task + nmid * mid + ntop * top;
    double fin[MSM_P_MAX], m = 0;
    unsigned k = nt < MSM_P_MAX ? nt : MSM_P_MAX;
    /* the equal full tasks go round-robin (the least-loaded thread, lowest index on ties): the
     * first nfull % k threads get one more; summed one by one as the greedy loop did (same
     * doubles), then only the others are dealt greedily (session 17: the plan evaluates this
     * ~1,000 times per MSM; dealing every task was ~0.7% of a 2^16 proof) */
    unsigned q = nfull / k, r = nfull % k;
    double base = 0;
    for (unsigned t = 0; t < q; t++) base += task;
    for (unsigned i = 0; i < k; i++) fin[i] = i < r ? base + task : base;
    for (unsigned t = 0; t < nmid + ntop; t++) {
        unsigned b = 0;
        for (unsigned i = 1; i < k; i++)
            if (fin[i] < fin[b]) b = i;
        fin[b] += t < nmid ? mid : top;
    }
    for (unsigned i = 0; i < k; i++)
        if (fin[i] > m) m = fin[i];
    return m;
}

/* the bucket reduction of nb buckets (msm_impl.h S(weigh_fold)): halving folds down to
 * MSM_FOLD_MIN buckets at ~16 multiplications per bucket plus an inversion per fold, the
 * rest by running sums at ~24 */
static double msm_red_cost(unsigned nb, double inv_cost, bool vec)
{
    double cost = 0;
    while (nb >= 2 * MSM_FOLD_MIN) {
        bool v = vec && nb / 2 >= MSM_VEC_MIN;   /* the fold's batch on the vector path */
        cost += (v ? 10.0 + MSM_VEC_ADD : 16.0) * (nb / 2) + inv_cost * (v ? MSM_VEC_INV : 1.0);
        nb /= 2;
    }
    return cost + 24.0 * nb;
}

/* Choose c, K, P minimising the makespan estimate. Costs in field multiplications: a batched
 * affine addition ~6, an XYZZ mixed addition ~10 (for conflicting digits beyond what the
 * deferred queue holds), a full XYZZ addition ~14, an inversion inv_cost. */
static void msm_plan_h(msm_plan_t *pl, size_t n, unsigned nt, unsigned bits, double inv_cost,
                       const size_t *hist, unsigned cf, bool vec)
{
    double best = -1;
    memset(pl, 0, sizeof *pl);
    for (unsigned c = cf ? cf : MSM_C_MIN; c <= (cf ? cf : MSM_C_MAX); c++) {
        unsigned nb = 1u << (c - 1), W = bits / c + 1;
        /* K = nb/16 (was nb/4 while an inversion cost ~300 products): at c = 13 the pending
         * set of 256 instead of 1024 additions measured -5% on G2, -0..-3% on G1 (fewer
         * digits find their bucket busy, a smaller pending set next to the buckets in
         * cache); at c = 16 it stays 1024 (256 was slower there) */
        unsigned K = nb / 16;
        if (K < MSM_K_MIN) K = MSM_K_MIN;
        if (K > MSM_K_MAX) K = MSM_K_MAX;
        /* the vector path (msm_vec_impl.h) takes batches from MSM_VEC_MIN: give it those where
         * the buckets are not too few for them (measured at 2^12: c = 11, 12 with K = 64 beat
         * the scalar plan's c = 9, 10 by a third on G2) */
        if (vec && K < MSM_VEC_MIN && nb >= 4 * MSM_VEC_MIN) K = MSM_VEC_MIN;
        const bool kv = vec && K >= MSM_VEC_MIN;
        const double addc = kv ? MSM_VEC_ADD : 6.0, invc = inv_cost * (kv ? MSM_VEC_INV : 1.0);
        /* points per window: n, or on average over the windows when short scalars skip
         * the top windows (hist[b]: scalars of bit length b, see msm_sort) */
        double nw = (double)n;
        if (hist) {
            double visits = 0;
            for (unsigned b = 2; b <= MSM_BITS_MAX; b++) visits += (double)hist[b] * (b / c + 1);
            nw = visits / W;
        }
        for (unsigned P = 1; P <= MSM_P_MAX; P *= 2) {
            if (P > 1 && (nt == 1 || nw / P < 4096)) break;
            double m = nw / P;
            double f = (double)K / (2.0 * nb) - 1.0 / MSM_Q_DIV; /* queue overflow */
            if (f < 0) f = 0;
            if (f > 0.5) f = 0.5;
            double add = addc * (1 - f) + 10.0 * f;
            double task = m * add + (m / K + 1) * invc + msm_red_cost(nb, inv_cost, vec) + 0.5 * m;
            /* the top window holds tb = bits - (W-1)c bits and the carry: buckets above 2^tb
             * stay empty (the reduction starts at the highest used one); with tb = 0 only
             * the carry, about half the scalars, reaches it (measured: 127-bit halves with
             * c = 16 fill 8 windows and beat c = 15 at 2^18 and 2^20; 128-bit ones get a
             * ninth, nearly free window; the split bounds are now 126/127 bits (GLV) and
             * 64/63 (GLS), so c = 16 fills 8 windows on both curves and 4 on BLS12-381's G2) */
            unsigned tb = bits - (W - 1) * c;
            double topb = tb + 1 < c ? (double)(1u << tb) + 1 : nb, topf = tb ? 1.0 : 0.5;
            double top = m * topf * add + (m * topf / K + 1) * invc + msm_red_cost((unsigned)topb, inv_cost, vec) + 0.5 * m;
            unsigned T = (W - 1) * P;
            double cost = msm_makespan(T, task, 0, 0, P, top, nt);
            /* G = 2 (session 19): the full windows in pairs, a batch of 2K over both windows'
             * buckets (the conflict rate of K, half the inversions; the per-point work of two
             * tasks). Measured, pairs over single windows at the same c, one thread,
             * 2^12..2^17, both groups and curves, uniform and witness-like: 0.84..1.02
             * (median ~0.93; G1 gains most, its additions are cheapest next to the inversion);
             * with K = 1024 (a batch of 2048, c >= 15) 0.98..1.02 at 2^18, so pairs stop at
             * 2K = MSM_K_MAX. Taken where the makespan is no worse (few windows over many
             * threads: pairs halve the tasks), but c, K and P are chosen on single windows: a
             * first version let the pairs' saving move c down (2^18: c = 14 with pairs for
             * 16 without), +13% on the prover's G1 MSMs, and the calibrated window offsets
             * (msm_calib.c) are offsets from the single-window choice */
            unsigned G = 1;
            if (W >= 3 && 2 * K <= MSM_K_MAX) {
                double pair = 2 * (m * add + msm_red_cost(nb, inv_cost, vec)) + (m / K + 1) * invc + 1.0 * m;
                if (msm_makespan((W - 1) / 2 * P, pair, (W - 1) % 2 * P, task, P, top, nt) <= cost) G = 2;
            }
            if (best < 0 || cost < best) {
                best = cost;
                *pl = (msm_plan_t){.c = c, .nb = nb, .W = W, .P = P, .K = K,
                                   .P1 = nt < MSM_P_MAX ? nt : MSM_P_MAX, .K1 = K, .G = G};
            }
        }
    }
}

/* cf: forced window size (0: choose) */
static void msm_plan(msm_plan_t *pl, size_t n, unsigned nt, unsigned bits, double inv_cost,
                     unsigned cf, bool vec)
{
    msm_plan_h(pl, n, nt, bits, inv_cost, NULL, cf, vec);
}

/* m: MSMs sharing the scalars (result slots per MSM: Wmax * P windows + P1 scalar-1 sums);
 * n: scalars (the index array) */

static void msm_layout(msm_layout_t *l, const msm_plan_t *pl, unsigned m, size_t n, size_t pa,
                       size_t xyzz, size_t fe, size_t jac)
{
    size_t wmax = MSM_BITS_MAX / pl->c + 1, o = 0;
    size_t nbw = (size_t)pl->nb * msm_g(pl), kw = (size_t)pl->K * msm_g(pl);
    size_t nba = nbw > pl->K1 ? nbw : pl->K1;         /* affine buckets / accumulators */
    size_t kmax = kw > pl->K1 ? kw : pl->K1;          /* pending additions */
    l->res_bytes = align64((size_t)m * (wmax * pl->P + pl->P1) * jac);
    l->idx_bytes = align64(n * sizeof(uint32_t));
    l->off_bk = o;
    o = align64(o + nba * pa);
    l->off_xb = o;
    o = align64(o + nba * xyzz);
    l->off_st = o;
    o = align64(o + nba);
    l->off_bp = o;
    o = align64(o + kmax * pa);
    l->off_bb = o;
    o = align64(o + kmax * sizeof(uint32_t));
    l->off_den = o;
    o = align64(o + kmax * fe);
    l->off_pre = o;
    o = align64(o + kmax * fe);
    l->off_qp = o;
    o = align64(o + (kmax / MSM_Q_DIV) * pa);
    l->off_qb = o;
    o = align64(o + (kmax / MSM_Q_DIV) * sizeof(uint32_t));
    l->off_vec = o;   /* msm_vec_impl.h: <= 64 bytes a lane (G1), 128 for G2 (the norms too) */
    o = align64(o + (kmax + MSM_VEC_PAD) * (fe >= 64 ? 128 : 64));
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

/* bit length of k (0 for 0) */
static inline unsigned msm_bitlen(const zp_scalar_t *k)
{
    for (int j = 3; j >= 0; j--)
        if (k->l[j]) return (unsigned)(64 * j + 64 - __builtin_clzll(k->l[j]));
    return 0;
}

/* Scalar classification, shared by every MSM over the same scalars:
 *   zeros are dropped; scalars equal to 1 go to idx[nbig, nbig + none) (summed without
 *   buckets or windows); the others go to idx[0, nbig) ordered by decreasing number of
 *   windows (bit length / c), so that window w only visits the prefix idx[0, cnt[w]) of the
 *   scalars that can have a nonzero digit there (small scalars get fewer windows).
 * hist[b]: scalars of bit length b (pass 1, before c is known). */
typedef struct {
    size_t nbig, none;
    unsigned bits;                 /* bit length of the largest scalar > 1 */
    size_t hist[MSM_BITS_MAX + 1];
} msm_class_t;

static void msm_classify(msm_class_t *cl, const zp_scalar_t *s, size_t n)
{
    memset(cl, 0, sizeof *cl);
    for (size_t i = 0; i < n; i++) cl->hist[msm_bitlen(&s[i])]++;
    cl->none = cl->hist[1];
    cl->nbig = n - cl->hist[0] - cl->hist[1];
    for (unsigned b = MSM_BITS_MAX; b >= 2; b--)
        if (cl->hist[b]) {
            cl->bits = b;
            break;
        }
}

/* Fill idx (see msm_class_t) for window size c and W windows; cnt[w] for w < W. */
static void msm_sort(uint32_t *idx, uint32_t *cnt, const msm_class_t *cl, const zp_scalar_t *s,
                     size_t n, unsigned c, unsigned W)
{
    size_t start[MSM_BITS_MAX / MSM_C_MIN + 2];  /* by window count nw = b/c + 1, descending */
    size_t per[MSM_BITS_MAX / MSM_C_MIN + 2];
    memset(per, 0, sizeof per);
    for (unsigned b = 2; b <= MSM_BITS_MAX; b++) per[b / c + 1] += cl->hist[b];
    size_t o = 0;
    for (unsigned nw = W; nw >= 1; nw--) {
        start[nw] = o;
        o += per[nw];
    }
    for (unsigned w = 0; w < W; w++) {           /* scalars with nw > w */
        size_t t = 0;
        for (unsigned nw = w + 1; nw <= W; nw++) t += per[nw];
        cnt[w] = (uint32_t)t;
    }
    size_t one = cl->nbig;
    for (size_t i = 0; i < n; i++) {
        unsigned b = msm_bitlen(&s[i]);
        if (b == 0) continue;
        if (b == 1) idx[one++] = (uint32_t)i;
        else idx[start[b / c + 1]++] = (uint32_t)i;
    }
}

/* inversion cost in multiplications of the coordinate field: the batch's one Fq inversion
 * (variable-time safegcd, zp_fq_<C>_inv_vartime: measured 34 Fq products on BN254, 30 on
 * BLS12-381; Fermat was 353 / 630); G2 inverts the norms in Fq, ~1/3 of that in Fq2 products */
#define MSM_COST_FQ1 40.0
#define MSM_COST_FQ2 14.0
#endif
