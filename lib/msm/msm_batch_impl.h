/* msm_batch_impl.h - the same-base batched MSM (msm_batch.h) for one group, written once;
 * included by msm_batch_<G>_<C>.c right after msm_impl.h was included with MSM_IMPL_INTERNAL
 * (its static bucket machinery and its names P_T, PA_T, FE_T, EC, ECA, S, F stay defined),
 * as the last thing of that translation unit. No include guard on purpose.
 *
 * Algorithm, per call of up to ZP_MSM_BATCH_MAX jobs (m >= 2):
 *   - pre-pass (pool): with the endomorphism each job's scalar k_j,i is split into halves
 *     (k1 at i, k2 at n0 + i, 16 bytes each) and signs; beta x_b,i is computed once for every
 *     base b where any job's k2 is not 0. Without it the jobs' scalars are read in place.
 *     Both record the largest bit length (sets the window count).
 *   - one plan for all jobs: the single MSM's full-size plan over the same number of scalars
 *     (window c, batch K, point split P), W from the largest bit length.
 *   - tasks (base b, window w, point range) from an atomic counter; a thread owns m working
 *     sets (msm_impl.h's S(ws_t): affine buckets, XYZZ overflow, pending batch, deferred
 *     queue); for each point of its range it tests the m digits and, for each nonzero one,
 *     fetches the point (sign applied: the digit's xor the half's) into that job's buckets
 *     (S(bucket_add): batched affine additions, one inversion per K). The point's bytes are
 *     read from memory once and hit L1 for the other jobs.
 *   - per job: flush, deferred points, running-sum reduction (as S(task)); windows combined
 *     by doubling per (job, base) as S(multi) does.
 * Same arithmetic as m separate MSMs, except the shared beta x and split pass; the memory
 * difference is the m bucket sets per thread (m times the single MSM's working set). */

#define B_ENDO_BITS MSM_CAT3(zp_glv_, MSM_C, _bits)
#define B_SPLIT MSM_CAT3(zp_glv_, MSM_C, _split)
#define B_PUB(n) MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _##n)

/* bits [off, off + len) of a little-endian integer of nl limbs (len < 32), zero past its top */
static inline uint32_t S(bbits)(const uint64_t *k, unsigned nl, unsigned off, unsigned len)
{
    unsigned li = off / 64, sh = off % 64;
    if (li >= nl) return 0;
    uint64_t v = k[li] >> sh;
    if (sh && li + 1 < nl) v |= k[li + 1] << (64 - sh);
    return (uint32_t)(v & ((1u << len) - 1));
}

/* Booth digit of window w (as msm_digit) */
static inline int32_t S(bdigit)(const uint64_t *k, unsigned nl, unsigned w, unsigned c)
{
    unsigned off = w * c;
    uint32_t raw = S(bbits)(k, nl, off, c);
    uint32_t cin = off ? S(bbits)(k, nl, off - 1, 1) : 0;
    return (int32_t)(raw + cin) - (int32_t)((raw >> (c - 1)) << c);
}

static unsigned S(bbitlen)(const uint64_t *k, unsigned nl)
{
    for (unsigned j = nl; j-- > 0;)
        if (k[j]) return 64 * j + 64 - (unsigned)__builtin_clzll(k[j]);
    return 0;
}

/* the plan shared by the jobs: the full-size plan for nsc scalars (the scratch is sized for it) */
static void S(bplan)(msm_plan_t *pl, size_t n0, unsigned nthr, bool endo, unsigned cf)
{
    if (endo)
        msm_plan(pl, 2 * n0, nthr, B_ENDO_BITS, MSM_COST_FQ, cf, false);
    else
        msm_plan(pl, n0, nthr, MSM_BITS_MAX, MSM_COST_FQ, cf, false);
    pl->G = 1;   /* the batch's tasks run one window each (no window pairs: msm_impl.h S(task)) */
}

typedef struct {
    size_t endo_bytes, res_bytes, total;
    size_t off_neg, off_phix;     /* in the endomorphism area */
    msm_layout_t lay;             /* its per-thread part: one working set */
} S(blayout_t);

static void S(blayout)(S(blayout_t) *bl, const msm_plan_t *pl, size_t n0, unsigned nbases, unsigned m,
                       unsigned nthr, bool endo)
{
    const size_t nsc = endo ? 2 * n0 : n0;
    const size_t wmax = (endo ? B_ENDO_BITS : MSM_BITS_MAX) / pl->c + 1;
    msm_plan_t px = *pl;                         /* nb buckets + K accumulators of ones */
    px.nb = pl->nb + pl->K;
    msm_layout(&bl->lay, &px, 1, 0, sizeof(PA_T), sizeof(S(xyzz_t)), sizeof(FE_T), sizeof(P_T));
    bl->off_neg = align64((size_t)m * nsc * 16);
    bl->off_phix = bl->off_neg + (endo ? align64((size_t)m * nsc) : 0);
    bl->endo_bytes = endo ? bl->off_phix + align64((size_t)nbases * n0 * sizeof(FE_T)) : 0;
    bl->res_bytes = align64((size_t)m * nbases * wmax * pl->P * sizeof(P_T));
    bl->total = bl->endo_bytes + bl->res_bytes + (size_t)nthr * m * bl->lay.thread_bytes;
}

typedef struct {
    const msm_plan_t *pl;
    const PA_T *const *pts;        /* nbases arrays of n0 points */
    unsigned nbases, m;
    const uint64_t *kb[ZP_MSM_BATCH_MAX];  /* job j's scalars: nsc values of nl limbs */
    unsigned nl;
    size_t nsc, n0;
    const FE_T *phix;              /* nbases * n0 beta x, or NULL */
    const uint8_t *neg;            /* m * nsc signs, or NULL */
    P_T *res;                      /* (j * nbases + b) * W * P + w * P + part */
    uint8_t *thr;                  /* per-thread areas: m working sets each */
    size_t ws_bytes;
    msm_layout_t lay;
    atomic_uint next;
} S(bjob_t);

/* the pre-pass: halves, signs and beta x (endomorphism), and the largest bit length */
typedef struct {
    const zp_scalar_t *const *sc;
    const PA_T *const *pts;
    unsigned nbases, m;
    size_t n0;
    uint64_t *half;                /* m * 2 n0 halves of 2 limbs, or NULL (no endomorphism) */
    uint8_t *neg;
    FE_T *phix;
    atomic_uint bits;
    atomic_size_t nbig[ZP_MSM_BATCH_MAX];   /* per job: scalars (halves) > 1 */
} S(bsplit_t);

static void S(bsplit_worker)(void *arg, unsigned tid, unsigned nthr)
{
    S(bsplit_t) *sj = arg;
    const MSM_CAT3(zp_fq_, MSM_C, _t) *beta = EC(endo_beta)();
    const size_t n0 = sj->n0;
    size_t lo, hi;
    unsigned bits = 0;
    size_t big[ZP_MSM_BATCH_MAX] = {0};
    zp_split(n0, tid, nthr, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        bool any = false;
        for (unsigned j = 0; j < sj->m; j++) {
            if (!sj->half) {
                unsigned b = S(bbitlen)(sj->sc[j][i].l, 4);
                bits = b > bits ? b : bits;
                big[j] += b > 1;
                continue;
            }
            zp_scalar_t k1, k2;
            unsigned ng;
            B_SPLIT(&k1, &k2, &ng, &sj->sc[j][i]);
            uint64_t *h = sj->half + (size_t)j * 4 * n0;
            h[2 * i] = k1.l[0];
            h[2 * i + 1] = k1.l[1];
            h[2 * (n0 + i)] = k2.l[0];
            h[2 * (n0 + i) + 1] = k2.l[1];
            uint8_t *ngj = sj->neg + (size_t)j * 2 * n0;
            ngj[i] = (uint8_t)(ng & 1);
            ngj[n0 + i] = (uint8_t)(ng >> 1);
            unsigned b1 = S(bbitlen)(k1.l, 2), b2 = S(bbitlen)(k2.l, 2);
            bits = b1 > bits ? b1 : bits;
            bits = b2 > bits ? b2 : bits;
            big[j] += (b1 > 1) + (b2 > 1);
            any |= (k2.l[0] | k2.l[1]) != 0;
        }
        if (any)
            for (unsigned b = 0; b < sj->nbases; b++) {
                PA_T pt;
                S(pt_load)(&pt, sj->pts[b], i);
                F(mulb)(&sj->phix[(size_t)b * n0 + i], &pt.x, beta);
            }
    }
    for (unsigned j = 0; j < sj->m; j++) atomic_fetch_add_explicit(&sj->nbig[j], big[j], memory_order_relaxed);
    unsigned cur = atomic_load_explicit(&sj->bits, memory_order_relaxed);
    while (bits > cur && !atomic_compare_exchange_weak(&sj->bits, &cur, bits)) {}
}

/* the end of one job's window task (as S(task)): pending and deferred points, then
 * sum_j (j+1) B_j by running sums from the highest used bucket */
static void S(bfinish)(S(ws_t) *ws, unsigned nb, unsigned nones, P_T *out)
{
    S(flush)(ws);
    unsigned qn = ws->qn;
    ws->qn = 0;
    for (unsigned j = 0; j < qn; j++) S(bucket_add)(ws, ws->qb[j], &ws->qp[j], false);
    S(flush)(ws);
    S(xyzz_t) sum;
    S(weigh_fold)(&sum, ws, nb);
    S(add_buckets)(&sum, ws, nb, nb + nones);   /* the accumulators of ones: weight 1 */
    S(xz_to_jac)(out, &sum);
}

/* one task: base b, window w, scalars [lo, hi), every job */
static void S(btask)(S(ws_t) *ws, const S(bjob_t) *job, unsigned b, unsigned w, unsigned part, size_t lo,
                     size_t hi)
{
    const msm_plan_t *pl = job->pl;
    const unsigned c = pl->c, nb = pl->nb, m = job->m, nl = job->nl;
    /* window 0: scalars (halves) equal to 1 go round-robin to K accumulators after the
     * buckets (as the single MSM's scalar-1 tasks), not all to bucket 1 where they would
     * collide with each other's pending additions */
    const unsigned nones = w == 0 ? pl->K : 0;
    unsigned rr[ZP_MSM_BATCH_MAX] = {0};
    for (unsigned j = 0; j < m; j++) {
        memset(ws[j].st, 0, nb + nones);
        ws[j].K = pl->K;
        ws[j].qmax = pl->K / MSM_Q_DIV;
        ws[j].cnt = 0;
        ws[j].qn = 0;
    }
    S(src_t) src = {.pts = job->pts[b], .phix = job->phix ? job->phix + (size_t)b * job->n0 : NULL,
                    .n0 = job->n0, .dim = job->phix ? 2u : 1u};   /* G1: GLV (2) or none */
    for (size_t i = lo; i < hi; i++) {
        for (unsigned j = 0; j < m; j++) {
            const uint64_t *kj = job->kb[j] + i * nl;
            int32_t d = S(bdigit)(kj, nl, w, c);
            if (d == 0) continue;
            src.neg = job->neg ? job->neg + (size_t)j * job->nsc : NULL;
            PA_T q;
            if (!S(fetch)(&q, &src, i, d < 0)) break;   /* infinity: for every job */
            uint32_t bi = (uint32_t)(d < 0 ? -d : d) - 1;
            if (nones && kj[0] == 1 && (kj[1] | (nl == 4 ? kj[2] | kj[3] : 0)) == 0) {
                bi = nb + rr[j];
                if (++rr[j] == nones) rr[j] = 0;
            }
            S(bucket_add)(&ws[j], bi, &q, true);
        }
    }
    const size_t T = (size_t)pl->W * pl->P;
    for (unsigned j = 0; j < m; j++)
        S(bfinish)(&ws[j], nb, nones, &job->res[((size_t)j * job->nbases + b) * T + (size_t)w * pl->P + part]);
}

static void S(bworker)(void *arg, unsigned tid, unsigned nthr)
{
    (void)nthr;
    S(bjob_t) *job = arg;
    const msm_plan_t *pl = job->pl;
    const msm_layout_t *lay = &job->lay;
    S(ws_t) ws[ZP_MSM_BATCH_MAX];
    for (unsigned j = 0; j < job->m; j++) {
        uint8_t *base = job->thr + ((size_t)tid * job->m + j) * job->ws_bytes;
        ws[j] = S(ws_carve)(base, lay, pl);
    }
    const unsigned T = pl->W * pl->P, ntask = job->nbases * T;
    for (;;) {
        unsigned t = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (t >= ntask) break;
        unsigned b = t / T, u = t % T, w = u / pl->P, part = u % pl->P;
        size_t lo, hi;
        zp_split(job->nsc, part, pl->P, &lo, &hi);
        S(btask)(ws, job, b, w, part, lo, hi);
    }
}

/* out[j * nbases + b], 2 <= m <= ZP_MSM_BATCH_MAX, MSM_NAIVE_MAX < n0 <= MSM_CHUNK */
static void S(batch)(P_T *out, const PA_T *const *points, unsigned nbases, const zp_scalar_t *const *scalars,
                     unsigned m, size_t n0, void *scratch, zp_pool_t *pool, const zp_msm_opts_t *opts)
{
    const unsigned nthr = zp_pool_size(pool);
    const bool endo = !(opts && opts->no_endo);
    msm_plan_t pl;
    S(bplan)(&pl, n0, nthr, endo, S(force_c)(opts));
    S(blayout_t) bl;
    S(blayout)(&bl, &pl, n0, nbases, m, nthr, endo);
    uint8_t *base = scratch;
    S(bsplit_t) sj = {.sc = scalars, .pts = points, .nbases = nbases, .m = m, .n0 = n0};
    atomic_init(&sj.bits, 0);
    for (unsigned j = 0; j < m; j++) atomic_init(&sj.nbig[j], 0);
    if (endo) {
        sj.half = (uint64_t *)(void *)base;
        sj.neg = base + bl.off_neg;
        sj.phix = (FE_T *)(void *)(base + bl.off_phix);
    }
    if (nthr > 1 && n0 >= 1024)
        zp_pool_run(pool, S(bsplit_worker), &sj);
    else
        S(bsplit_worker)(&sj, 0, 1);
    const unsigned bits = atomic_load(&sj.bits);
    if (bits == 0) return;                       /* every scalar 0 */
    /* the plan for the largest count of scalars > 1 among the jobs (as the single MSM plans
     * for its scalars > 1: sparse witnesses get a smaller window, so a cheaper reduction),
     * unless its layout would not fit the scratch sized for the full plan */
    size_t nbig = 0;
    for (unsigned j = 0; j < m; j++) {
        size_t x = atomic_load(&sj.nbig[j]);
        nbig = x > nbig ? x : nbig;
    }
    msm_plan_t pb;
    msm_plan(&pb, nbig ? nbig : 1, nthr, endo ? B_ENDO_BITS : MSM_BITS_MAX, MSM_COST_FQ, S(force_c)(opts), false);
    S(blayout_t) bb;
    S(blayout)(&bb, &pb, n0, nbases, m, nthr, endo);
    if (bb.total <= bl.total && bb.endo_bytes == bl.endo_bytes) {
        pl = pb;
        bl = bb;
    }
    pl.W = bits / pl.c + 1;
    S(bjob_t) job = {.pl = &pl, .pts = points, .nbases = nbases, .m = m, .nl = endo ? 2 : 4,
                     .nsc = endo ? 2 * n0 : n0, .n0 = n0, .phix = endo ? sj.phix : NULL,
                     .neg = endo ? sj.neg : NULL, .res = (P_T *)(void *)(base + bl.endo_bytes),
                     .thr = base + bl.endo_bytes + bl.res_bytes, .ws_bytes = bl.lay.thread_bytes,
                     .lay = bl.lay};
    for (unsigned j = 0; j < m; j++)
        job.kb[j] = endo ? sj.half + (size_t)j * 4 * n0 : scalars[j]->l;
    atomic_init(&job.next, 0);
    if (nthr > 1 && nbases * pl.W * pl.P > 1)
        zp_pool_run(pool, S(bworker), &job);
    else
        S(bworker)(&job, 0, 1);
    const size_t T = (size_t)pl.W * pl.P;
    for (unsigned j = 0; j < m; j++)
        for (unsigned b = 0; b < nbases; b++) {
            const P_T *res = job.res + ((size_t)j * nbases + b) * T;
            P_T acc;
            EC(set_inf)(&acc);
            for (unsigned w = pl.W; w-- > 0;) {
                for (unsigned k = 0; k < pl.c; k++) EC(dbl)(&acc, &acc);
                for (unsigned part = 0; part < pl.P; part++) EC(add)(&acc, &acc, &res[(size_t)w * pl.P + part]);
            }
            out[(size_t)j * nbases + b] = acc;
        }
}

/* whether a call runs the plain multi-MSM per job instead */
static bool S(bper_job)(size_t n, unsigned m) { return m < 2 || n <= MSM_NAIVE_MAX || n > MSM_CHUNK; }

size_t B_PUB(batch_scratch_size)(size_t n, unsigned nbases, unsigned m, unsigned nthreads,
                                 const zp_msm_opts_t *opts)
{
    if (nthreads == 0) nthreads = 1;
    if (nbases == 0) nbases = 1;
    size_t single = B_PUB(ex_scratch_size)(n, nbases, nthreads, opts);
    if (m > ZP_MSM_BATCH_MAX) m = ZP_MSM_BATCH_MAX;
    if (S(bper_job)(n, m)) return single;
    const bool endo = !(opts && opts->no_endo);
    msm_plan_t pl;
    S(bplan)(&pl, n, nthreads, endo, S(force_c)(opts));
    S(blayout_t) bl;
    S(blayout)(&bl, &pl, n, nbases, m, nthreads, endo);
    return bl.total > single ? bl.total : single;
}

void B_PUB(batch)(P_T *out, const PA_T *const *points, unsigned nbases, const zp_scalar_t *const *scalars,
                  unsigned m, size_t n, void *scratch, zp_pool_t *pool, const zp_msm_opts_t *opts)
{
    for (size_t i = 0; i < (size_t)m * nbases; i++) EC(set_inf)(&out[i]);
    if (nbases == 0) return;
    for (unsigned j0 = 0; j0 < m; j0 += ZP_MSM_BATCH_MAX) {
        unsigned mm = m - j0 < ZP_MSM_BATCH_MAX ? m - j0 : ZP_MSM_BATCH_MAX;
        P_T *o = out + (size_t)j0 * nbases;
        if (S(bper_job)(n, mm))
            for (unsigned j = 0; j < mm; j++)
                B_PUB(multi_ex)(o + (size_t)j * nbases, points, nbases, scalars[j0 + j], n, scratch, pool, opts);
        else
            S(batch)(o, points, nbases, scalars + j0, mm, n, scratch, pool, opts);
    }
}

#undef B_ENDO_BITS
#undef B_SPLIT
#undef B_PUB
/* (msm_impl.h's names stay defined: this is the end of its translation unit) */
