/* msm_fixed_impl.h - the fixed-base MSM (msm_fixed.h) for one G1 group, written once; included
 * by msm_fixed_g1_<C>.c right after msm_impl.h was included with MSM_IMPL_INTERNAL (its static
 * bucket machinery S(ws_t), S(bucket_add), S(flush), S(weigh_buckets), S(split_worker) and
 * its names P_T, PA_T, FE_T, EC, ECA, S, F stay defined). MSM_FX_GROUP: the header's group id.
 * No include guard on purpose.
 *
 * Algorithm: the pre-pass splits every scalar into GLV halves and signs (msm_impl.h's
 * split_worker, no beta x: phi is applied on read). Round r (0 <= r < R) is one task per point
 * range: for each base i, half h, level d < depth, the Booth digit w = d R + r of half h picks
 * a bucket for level d's point (phi of it for h = 1), sign = digit's xor half's; all into ONE
 * bucket set (msm_impl.h's batched affine additions), reduced once by running sums. The rounds
 * are combined by Horner (c doublings each). R = 1 (depth = W): a single bucket set. */

#define FX(n) MSM_CAT5(zp_msm_fixed_, MSM_G, _, MSM_C, _##n)
#define FX_BITS MSM_CAT3(zp_glv_, MSM_C, _bits)
#define FX_MAIN MSM_CAT5(zp_msm_fixed_, MSM_G, _, MSM_C, )

static unsigned S(fx_windows)(unsigned c) { return FX_BITS / c + 1; }

static bool S(fx_params_ok)(unsigned c, unsigned depth)
{
    return c >= ZP_MSM_FIXED_C_MIN && c <= ZP_MSM_FIXED_C_MAX && depth >= 1 &&
           depth <= S(fx_windows)(c);
}

static unsigned S(fx_rounds)(unsigned c, unsigned depth)
{
    unsigned W = S(fx_windows)(c);
    return (W + depth - 1) / depth;
}

/* point ranges per round: the rounds x ranges tasks a multiple of the threads where it can */
static unsigned S(fx_parts)(size_t n, unsigned rounds, unsigned nthr)
{
    if (nthr <= 1 || n < 2048) return 1;
    unsigned a = rounds, b = nthr;
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    unsigned p = nthr / a;
    return p > MSM_P_MAX ? MSM_P_MAX : p;
}

/* the bucket plan of one round: nb = 2^(c-1) Booth buckets, batches of K */
static void S(fx_plan)(msm_plan_t *pl, unsigned c, unsigned rounds, unsigned parts)
{
    unsigned nb = 1u << (c - 1), K = nb / 4;
    if (K < MSM_K_MIN) K = MSM_K_MIN;
    if (K > MSM_K_MAX) K = MSM_K_MAX;
    *pl = (msm_plan_t){.c = c, .nb = nb, .W = rounds, .P = parts, .K = K, .P1 = 0, .K1 = K};
}

typedef struct {
    size_t half, neg, res, thr, thread_bytes, total;
} S(fx_lay_t);

static void S(fx_layout)(S(fx_lay_t) *l, size_t n, unsigned c, unsigned rounds, unsigned nthr)
{
    msm_plan_t pl;
    msm_layout_t ml;
    const unsigned parts = S(fx_parts)(n, rounds, nthr);
    S(fx_plan)(&pl, c, rounds, parts);
    msm_layout(&ml, &pl, 1, 0, sizeof(PA_T), sizeof(S(xyzz_t)), sizeof(FE_T), sizeof(P_T));
    l->half = 0;
    l->neg = align64(2 * n * sizeof(zp_scalar_t));
    l->res = l->neg + align64(2 * n);
    l->thr = l->res + align64((size_t)rounds * parts * sizeof(P_T));
    l->thread_bytes = ml.thread_bytes;
    l->total = l->thr + (size_t)(nthr ? nthr : 1) * ml.thread_bytes;
}

typedef struct {
    const PA_T *bases;
    const PA_T *const *levels;   /* depth - 1 */
    const FB_T *const *phix;     /* depth: beta x of level d (0: the bases), or NULL */
    const zp_scalar_t *half;     /* 2n: k1 at i, k2 at n + i */
    const uint8_t *neg;          /* 2n */
    size_t n;
    unsigned depth, rounds, windows, parts;
    msm_plan_t pl;
    uint8_t *thr;                /* per-thread working sets */
    size_t thread_bytes;
    P_T *res;                    /* rounds * parts */
    atomic_uint next;
} S(fx_job_t);

static void S(fx_worker)(void *arg, unsigned tid, unsigned nthr)
{
    (void)nthr;
    S(fx_job_t) *job = arg;
    const msm_plan_t *pl = &job->pl;
    msm_layout_t lay;
    msm_layout(&lay, pl, 1, 0, sizeof(PA_T), sizeof(S(xyzz_t)), sizeof(FE_T), sizeof(P_T));
    uint8_t *base = job->thr + (size_t)tid * job->thread_bytes;
    S(ws_t) ws = S(ws_carve)(base, &lay, pl);
    const FB_T *beta = EC(endo_beta)();
    const unsigned c = pl->c, R = job->rounds, ntask = R * job->parts;
    const size_t n = job->n;
    for (;;) {
        unsigned t = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (t >= ntask) break;
        const unsigned r = t / job->parts, part = t % job->parts;
        size_t lo, hi;
        zp_split(n, part, job->parts, &lo, &hi);
        memset(ws.st, 0, pl->nb);
        ws.K = pl->K;
        ws.qmax = pl->K / MSM_Q_DIV;
        ws.cnt = 0;
        ws.qn = 0;
        for (size_t i = lo; i < hi; i++)
            for (unsigned h = 0; h < 2; h++) {
                const zp_scalar_t *k = &job->half[h * n + i];
                if (!(k->l[0] | k->l[1] | k->l[2] | k->l[3])) continue;
                const bool sg = job->neg[h * n + i] != 0;
                for (unsigned d = 0, w = r; d < job->depth && w < job->windows; d++, w += R) {
                    int32_t dg = msm_digit(k, w, c);
                    if (dg == 0) continue;
                    const PA_T *p = d ? &job->levels[d - 1][i] : &job->bases[i];
                    if (ECA(is_inf)(p)) continue;
                    PA_T q;
                    if (h && job->phix)
                        q.x = job->phix[d][i];
                    else if (h)
                        F(mulb)(&q.x, &p->x, beta);
                    else
                        q.x = p->x;
                    if ((dg < 0) != sg)
                        F(neg)(&q.y, &p->y);
                    else
                        q.y = p->y;
                    S(bucket_add)(&ws, (uint32_t)(dg < 0 ? -dg : dg) - 1, &q, true);
                }
            }
        S(flush)(&ws);
        unsigned qn = ws.qn;                     /* deferred points: one more batch */
        ws.qn = 0;
        for (unsigned j = 0; j < qn; j++) S(bucket_add)(&ws, ws.qb[j], &ws.qp[j], false);
        S(flush)(&ws);
        S(xyzz_t) sum;
        S(weigh_buckets)(&sum, &ws, pl->nb);
        S(xz_to_jac)(&job->res[(size_t)r * job->parts + part], &sum);
    }
}

unsigned FX(windows)(unsigned c) { return S(fx_windows)(c); }

size_t FX(scratch_size)(size_t n, unsigned c, unsigned depth, unsigned nthreads)
{
    if (!S(fx_params_ok)(c, depth)) return 0;
    S(fx_lay_t) l;
    S(fx_layout)(&l, n, c, S(fx_rounds)(c, depth), nthreads);
    return l.total;
}

void FX(levels)(P_T *out, const PA_T *bases, const PA_T *const *levels, const FB_T *const *phix,
                unsigned depth, unsigned rounds, unsigned c, const zp_scalar_t *scalars, size_t n,
                void *scratch, zp_pool_t *pool)
{
    EC(set_inf)(out);
    if (n == 0) return;
    const unsigned nthr = zp_pool_size(pool);
    S(fx_lay_t) l;
    S(fx_layout)(&l, n, c, rounds, nthr);
    uint8_t *s = scratch;
    S(split_job_t) sj = {.sc = scalars, .pts = NULL, .m = 0, .dim = 2, .n0 = n,
                         .half = (zp_scalar_t *)(void *)(s + l.half), .neg = s + l.neg};
    if (nthr > 1 && n >= 1024)
        zp_pool_run(pool, S(split_worker), &sj);
    else
        S(split_worker)(&sj, 0, 1);
    S(fx_job_t) job = {.bases = bases, .levels = levels, .phix = phix, .half = sj.half, .neg = sj.neg, .n = n,
                       .depth = depth, .rounds = rounds, .windows = S(fx_windows)(c),
                       .parts = S(fx_parts)(n, rounds, nthr), .thr = s + l.thr,
                       .thread_bytes = l.thread_bytes, .res = (P_T *)(void *)(s + l.res)};
    S(fx_plan)(&job.pl, c, rounds, job.parts);
    atomic_init(&job.next, 0);
    if (nthr > 1 && rounds * job.parts > 1)
        zp_pool_run(pool, S(fx_worker), &job);
    else
        S(fx_worker)(&job, 0, 1);
    P_T acc;
    EC(set_inf)(&acc);
    for (unsigned r = rounds; r-- > 0;) {
        for (unsigned k = 0; k < c; k++) EC(dbl)(&acc, &acc);
        for (unsigned p = 0; p < job.parts; p++) EC(add)(&acc, &acc, &job.res[(size_t)r * job.parts + p]);
    }
    *out = acc;
}

/* ---- the blob ---- */

size_t FX(table_size)(size_t n, unsigned c, unsigned depth)
{
    if (!S(fx_params_ok)(c, depth)) return 0;
    if (n > ((size_t)1 << 40)) return 0;
    return ZP_MSM_FIXED_HDR_BYTES + (size_t)(depth - 1) * n * sizeof(PA_T);
}

static const PA_T *S(fx_level)(const void *table, size_t n, unsigned d)
{
    return (const PA_T *)(const void *)((const uint8_t *)table + ZP_MSM_FIXED_HDR_BYTES) +
           (size_t)(d - 1) * n;
}

static uint64_t S(fx_hdr_sum)(const zp_msm_fixed_hdr_t *h)
{
    zp_msm_fixed_hdr_t t = *h;
    t.hdr_sum = 0;
    return zp_msm_fixed_sum(&t, sizeof t, 0);   /* seed 0: a table of another group reads as that */
}

typedef struct {
    const PA_T *src;             /* level d - 1 (the bases for d = 1) */
    PA_T *dst;                   /* level d */
    size_t n;
    unsigned dbls;               /* c R */
} S(fx_build_t);

static void S(fx_build_worker)(void *arg, unsigned tid, unsigned nthr)
{
    enum { CH = 128 };
    S(fx_build_t) *b = arg;
    P_T jp[CH];
    FE_T scr[CH];
    size_t lo, hi;
    zp_split(b->n, tid, nthr, &lo, &hi);
    for (size_t i0 = lo; i0 < hi; i0 += CH) {
        size_t m = hi - i0 < CH ? hi - i0 : CH;
        for (size_t j = 0; j < m; j++) {         /* the MSM's inline XYZZ doubling */
            S(xyzz_t) x;
            if (ECA(is_inf)(&b->src[i0 + j])) {
                EC(set_inf)(&jp[j]);
                continue;
            }
            S(xz_set_affine)(&x, &b->src[i0 + j]);
            for (unsigned k = 0; k < b->dbls; k++) S(xz_dbl)(&x);
            S(xz_to_jac)(&jp[j], &x);
        }
        EC(batch_to_affine)(&b->dst[i0], jp, m, scr);
    }
}

int FX(table_build)(void *table, size_t bytes, const PA_T *bases, size_t n, unsigned c,
                    unsigned depth, zp_pool_t *pool)
{
    size_t need = FX(table_size)(n, c, depth);
    if (!need || bytes < need || ((uintptr_t)table & 63)) return -1;
    const unsigned R = S(fx_rounds)(c, depth);
    zp_msm_fixed_hdr_t *h = table;
    memset(table, 0, ZP_MSM_FIXED_HDR_BYTES);
    for (unsigned d = 1; d < depth; d++) {
        S(fx_build_t) b = {.src = d == 1 ? bases : S(fx_level)(table, n, d - 1),
                           .dst = (PA_T *)(void *)S(fx_level)(table, n, d), .n = n, .dbls = c * R};
        if (zp_pool_size(pool) > 1 && n >= 1024)
            zp_pool_run(pool, S(fx_build_worker), &b);
        else
            S(fx_build_worker)(&b, 0, 1);
    }
    memcpy(h->magic, ZP_MSM_FIXED_MAGIC, sizeof h->magic);
    h->group = MSM_FX_GROUP;
    h->point_bytes = (uint32_t)sizeof(PA_T);
    h->c = c;
    h->depth = depth;
    h->rounds = R;
    h->windows = S(fx_windows)(c);
    h->n = n;
    h->bytes = need;
    h->bases_id = zp_msm_fixed_sum(bases, n * sizeof(PA_T), MSM_FX_GROUP);
    h->levels_sum = zp_msm_fixed_sum((const uint8_t *)table + ZP_MSM_FIXED_HDR_BYTES,
                                     need - ZP_MSM_FIXED_HDR_BYTES, MSM_FX_GROUP);
    h->hdr_sum = S(fx_hdr_sum)(h);
    return 0;
}

#define FX_ERR(...)                                                                            \
    do {                                                                                       \
        if (err && errlen) snprintf(err, errlen, "fixed-base table: " __VA_ARGS__);            \
        return -1;                                                                             \
    } while (0)

/* the header alone (every MSM call): the blob describes a table for n bases of this group */
static int S(fx_check_hdr)(const void *table, size_t bytes, size_t n, char *err, size_t errlen)
{
    if (!table || bytes < ZP_MSM_FIXED_HDR_BYTES)
        FX_ERR("%zu bytes, shorter than its %d-byte header", table ? bytes : 0, ZP_MSM_FIXED_HDR_BYTES);
    if ((uintptr_t)table & 63) FX_ERR("not 64-byte aligned");
    const zp_msm_fixed_hdr_t *h = table;
    if (memcmp(h->magic, ZP_MSM_FIXED_MAGIC, sizeof h->magic)) FX_ERR("bad magic (not a table)");
    if (h->hdr_sum != S(fx_hdr_sum)(h)) FX_ERR("header checksum mismatch (corrupted header)");
    if (h->group != MSM_FX_GROUP) FX_ERR("group %u, expected %u", h->group, (unsigned)MSM_FX_GROUP);
    if (h->point_bytes != sizeof(PA_T))
        FX_ERR("point size %u, expected %zu", h->point_bytes, sizeof(PA_T));
    if (h->n != n) FX_ERR("built for %llu bases, used with %zu", (unsigned long long)h->n, n);
    if (!S(fx_params_ok)(h->c, h->depth))
        FX_ERR("window %u / depth %u out of range", h->c, h->depth);
    if (h->windows != S(fx_windows)(h->c) || h->rounds != S(fx_rounds)(h->c, h->depth))
        FX_ERR("windows %u / rounds %u inconsistent with window %u depth %u", h->windows, h->rounds,
               h->c, h->depth);
    size_t need = FX(table_size)(n, h->c, h->depth);
    if (h->bytes != need) FX_ERR("header says %llu bytes, its parameters %zu", (unsigned long long)h->bytes, need);
    if (bytes < need) FX_ERR("%zu bytes given, %zu needed (short table)", bytes, need);
    return 0;
}

int FX(check)(const void *table, size_t bytes, const PA_T *bases, size_t n, bool full, char *err,
              size_t errlen)
{
    if (S(fx_check_hdr)(table, bytes, n, err, errlen)) return -1;
    const zp_msm_fixed_hdr_t *h = table;
    if (h->bases_id != zp_msm_fixed_sum(bases, n * sizeof(PA_T), MSM_FX_GROUP))
        FX_ERR("built from other bases (bases identity mismatch)");
    if (full && h->levels_sum != zp_msm_fixed_sum((const uint8_t *)table + ZP_MSM_FIXED_HDR_BYTES,
                                                  h->bytes - ZP_MSM_FIXED_HDR_BYTES, MSM_FX_GROUP))
        FX_ERR("levels checksum mismatch (corrupted table)");
    return 0;
}

int FX_MAIN(P_T *out, const PA_T *bases, const zp_scalar_t *scalars, size_t n, const void *table,
         size_t bytes, void *scratch, zp_pool_t *pool, char *err, size_t errlen)
{
    if (S(fx_check_hdr)(table, bytes, n, err, errlen)) return -1;
    const zp_msm_fixed_hdr_t *h = table;
    const PA_T *lv[ZP_GLV_BITS / ZP_MSM_FIXED_C_MIN + 1];   /* depth <= windows (checked) */
    for (unsigned d = 1; d < h->depth; d++) lv[d - 1] = S(fx_level)(table, n, d);
    FX(levels)(out, bases, lv, NULL, h->depth, h->rounds, h->c, scalars, n, scratch, pool);
    return 0;
}

#undef FX_ERR
#undef FX
#undef FX_BITS
#undef FX_MAIN
