/* msm_impl.h - Pippenger MSM for one group, written once; included by msm.c per group and
 * curve (no include guard on purpose). msm.c defines before including:
 *   MSM_G, MSM_C   group (g1|g2) and curve name parts
 *   MSM_F          coordinate field (fq_bn254, fq2_bls12_381, ...): ops mf_<MSM_F>_<op>
 *
 * Algorithm (see msm_common.h for the plan and the scratch layout):
 *   - the method (S(dim)): the split or plain, forced by opts or chosen per call from the
 *     calibration table (msm_calib.c) by group, curve, scalar shape and size (issue 31).
 *   - with the endomorphism (opts->no_endo or the plain method turn it off): a pre-pass splits every
 *     scalar k_i = k1 + k2 lambda (lib/ec/ec_glv.c) into halves of <= 128 bits with signs, and
 *     computes beta x_i where k2 != 0; the rest runs over the 2n halves, index i < n being
 *     P_i and n + i phi(P_i) = (beta x_i, y_i), a half's sign xor-ed into its digit's sign
 *     (fetch). Everything below applies to the halves unchanged.
 *   - scalars classified first (msm.c: msm_classify / msm_sort), once for all the MSMs of a
 *     multi call: zeros dropped; scalars equal to 1 summed by their own tasks (ones_task:
 *     batched affine additions into K1 accumulators, no windows); the rest indexed by
 *     decreasing bit length, so window w only visits the scalars long enough to reach it
 *     (no index at all for dense full-size scalars).
 *   - Booth-recoded signed digits of c bits, computed on the fly per window (stateless: digit
 *     w needs bits [cw-1, cw+c) of the scalar only), |digit| <= 2^(c-1) = nb buckets.
 *   - bucket accumulation in AFFINE buckets with batched additions: up to K pending
 *     (bucket, point) pairs with distinct buckets share one field inversion (Montgomery's
 *     trick), ~6 multiplications per addition. A point whose bucket is already pending goes
 *     into a second, XYZZ bucket set with a mixed addition instead (never waits, so inputs
 *     with many equal digits stay linear).
 *     The batch's inversion runs in Fq on the denominators' norms (G2: one Fq inversion
 *     and conj(d)/N(d) per addition instead of Fq2 products).
 *   - the top window (fewer bits than c) spreads each digit over bucket copies so that its
 *     additions stay batched (S(task)).
 *   - reduction sum_j (j+1) B_j by halving folds (batched affine) down to MSM_FOLD_MIN
 *     buckets, then running sums in XYZZ (S(weigh_fold)); windows combined by doubling.
 *   - tasks (window, point range) handed out to pool threads by an atomic counter.
 * Infinity points (0,0) and zero digits are skipped; P + P and P + (-P) inside a bucket are
 * handled in both bucket sets. */

#define MSM_CAT5_(a, b, c, d, e) a##b##c##d##e
#define MSM_CAT5(a, b, c, d, e) MSM_CAT5_(a, b, c, d, e)
#define MSM_CAT3_(a, b, c) a##b##c
#define MSM_CAT3(a, b, c) MSM_CAT3_(a, b, c)
#define P_T MSM_CAT5(zp_, MSM_G, _, MSM_C, _t)
#define PA_T MSM_CAT5(zp_, MSM_G, a_, MSM_C, _t)
#define FE_T MSM_CAT3(zp_, MSM_F, _t)
#define EC(n) MSM_CAT5(zp_, MSM_G, _, MSM_C, _##n)
#define ECA(n) MSM_CAT5(zp_, MSM_G, a_, MSM_C, _##n)
#define S(n) MSM_CAT5(msm_, MSM_G, _, MSM_C, _##n)
#define F(op) MSM_CAT3(mf_, MSM_F, _##op)
#define FB_T MSM_CAT3(zp_fq_, MSM_C, _t)   /* the base field Fq */
#define FBF(op) MSM_CAT3(mf_fq_, MSM_C, _##op)
#ifndef MSM_GLS
#define MSM_GLS 0                          /* 1: G2, the 4-dimensional psi split is available */
#endif
#ifndef MSM_GLS_MIN_N                      /* G2: default to the psi split from this many points */
#define MSM_GLS_MIN_N ((size_t)-1)
#endif

/* XYZZ point: x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; ZZ == 0 is infinity */
typedef struct { FE_T x, y, zz, zzz; } S(xyzz_t);

static inline void S(xz_set_affine)(S(xyzz_t) *r, const PA_T *p)
{
    r->x = p->x;
    r->y = p->y;
    F(one)(&r->zz);
    r->zzz = r->zz;
}

/* r = 2 p for affine p (mdbl-2008-s-1) */
static inline void S(xz_dbl_affine)(S(xyzz_t) *r, const PA_T *p)
{
    FE_T u, v, w, s, m, t;
    F(dbl)(&u, &p->y);
    F(sqr)(&v, &u);
    F(mul)(&w, &u, &v);
    F(mul)(&s, &p->x, &v);
    F(sqr)(&m, &p->x);
    F(dbl)(&t, &m);
    F(add)(&m, &m, &t);
    F(sqr)(&r->x, &m);
    F(dbl)(&t, &s);
    F(sub)(&r->x, &r->x, &t);
    F(sub)(&t, &s, &r->x);
    F(mul)(&t, &t, &m);
    F(mul)(&r->y, &w, &p->y);
    F(sub)(&r->y, &t, &r->y);
    r->zz = v;
    r->zzz = w;
}

/* r = 2 r (dbl-2008-s-1) */
static inline void S(xz_dbl)(S(xyzz_t) *r)
{
    if (F(is_zero)(&r->zz)) return;
    if (F(is_zero)(&r->y)) {
        memset(r, 0, sizeof *r);
        return;
    }
    FE_T u, v, w, s, m, t;
    F(dbl)(&u, &r->y);
    F(sqr)(&v, &u);
    F(mul)(&w, &u, &v);
    F(mul)(&s, &r->x, &v);
    F(sqr)(&m, &r->x);
    F(dbl)(&t, &m);
    F(add)(&m, &m, &t);
    F(mul)(&r->zz, &r->zz, &v);
    F(mul)(&r->zzz, &r->zzz, &w);
    F(mul)(&w, &w, &r->y);
    F(sqr)(&r->x, &m);
    F(dbl)(&t, &s);
    F(sub)(&r->x, &r->x, &t);
    F(sub)(&t, &s, &r->x);
    F(mul)(&t, &t, &m);
    F(sub)(&r->y, &t, &w);
}

/* r += p, p affine and not infinity (madd-2008-s) */
static inline void S(xz_madd)(S(xyzz_t) *r, const PA_T *p)
{
    if (F(is_zero)(&r->zz)) {
        S(xz_set_affine)(r, p);
        return;
    }
    FE_T pp, ppp, q, rr, t;
    F(mul)(&pp, &p->x, &r->zz);
    F(sub)(&pp, &pp, &r->x);                    /* P = X2 ZZ1 - X1 */
    F(mul)(&rr, &p->y, &r->zzz);
    F(sub)(&rr, &rr, &r->y);                    /* R = Y2 ZZZ1 - Y1 */
    if (F(is_zero)(&pp)) {
        if (F(is_zero)(&rr))
            S(xz_dbl_affine)(r, p);
        else
            memset(r, 0, sizeof *r);
        return;
    }
    F(sqr)(&t, &pp);                            /* PP */
    F(mul)(&ppp, &pp, &t);                      /* PPP */
    F(mul)(&q, &r->x, &t);                      /* Q = X1 PP */
    F(mul)(&r->zz, &r->zz, &t);
    F(mul)(&r->zzz, &r->zzz, &ppp);
    F(sqr)(&t, &rr);
    F(sub)(&t, &t, &ppp);
    F(sub)(&t, &t, &q);
    F(sub)(&r->x, &t, &q);                      /* X3 = R^2 - PPP - 2Q */
    F(sub)(&q, &q, &r->x);
    F(mul)(&q, &q, &rr);
    F(mul)(&t, &r->y, &ppp);
    F(sub)(&r->y, &q, &t);                      /* Y3 = R (Q - X3) - Y1 PPP */
}

/* r += p (add-2008-s) */
static inline void S(xz_add)(S(xyzz_t) *r, const S(xyzz_t) *p)
{
    if (F(is_zero)(&p->zz)) return;
    if (F(is_zero)(&r->zz)) {
        *r = *p;
        return;
    }
    FE_T u1, s1, pp, rr, t, ppp, q;
    F(mul)(&u1, &r->x, &p->zz);
    F(mul)(&pp, &p->x, &r->zz);
    F(sub)(&pp, &pp, &u1);                      /* P = U2 - U1 */
    F(mul)(&s1, &r->y, &p->zzz);
    F(mul)(&rr, &p->y, &r->zzz);
    F(sub)(&rr, &rr, &s1);                      /* R = S2 - S1 */
    if (F(is_zero)(&pp)) {
        if (F(is_zero)(&rr))
            S(xz_dbl)(r);
        else
            memset(r, 0, sizeof *r);
        return;
    }
    F(sqr)(&t, &pp);
    F(mul)(&ppp, &pp, &t);
    F(mul)(&q, &u1, &t);
    F(mul)(&r->zz, &r->zz, &p->zz);
    F(mul)(&r->zz, &r->zz, &t);
    F(mul)(&r->zzz, &r->zzz, &p->zzz);
    F(mul)(&r->zzz, &r->zzz, &ppp);
    F(sqr)(&t, &rr);
    F(sub)(&t, &t, &ppp);
    F(sub)(&t, &t, &q);
    F(sub)(&r->x, &t, &q);
    F(sub)(&q, &q, &r->x);
    F(mul)(&q, &q, &rr);
    F(mul)(&t, &s1, &ppp);
    F(sub)(&r->y, &q, &t);
}

/* Jacobian (X ZZ^2, Y ZZZ^2, ZZZ) */
static void S(xz_to_jac)(P_T *r, const S(xyzz_t) *p)
{
    if (F(is_zero)(&p->zz)) {
        EC(set_inf)(r);
        return;
    }
    FE_T t;
    F(sqr)(&t, &p->zz);
    F(mul)(&r->x, &p->x, &t);
    F(sqr)(&t, &p->zzz);
    F(mul)(&r->y, &p->y, &t);
    r->z = p->zzz;
}

/* per-thread working set, carved from the scratch (msm.c: msm_layout) */
typedef struct {
    PA_T *bk;            /* nb affine buckets */
    S(xyzz_t) *xb;       /* nb XYZZ overflow buckets */
    uint8_t *st;         /* nb states: MSM_ST_* bits */
    PA_T *bp;            /* K pending points (sign applied) */
    uint32_t *bb;        /* K pending bucket indices */
    FE_T *den;           /* K denominators */
    FE_T *pre;           /* K prefix products */
    PA_T *qp;            /* qmax deferred points (their bucket was pending) */
    uint32_t *qb;        /* qmax deferred bucket indices */
    uint8_t *vec;        /* S(flush_v)'s prefix products (msm_vec_impl.h) */
    unsigned cnt, K;     /* pending count, batch size */
    unsigned qn, qmax;   /* deferred count, capacity */
} S(ws_t);

/* a working set at base, laid out by lay (msm.c msm_layout); K and qmax from the plan */
static inline S(ws_t) S(ws_carve)(uint8_t *base, const msm_layout_t *lay, const msm_plan_t *pl)
{
    return (S(ws_t)){
        .bk = (PA_T *)(void *)(base + lay->off_bk),
        .xb = (S(xyzz_t) *)(void *)(base + lay->off_xb),
        .st = base + lay->off_st,
        .bp = (PA_T *)(void *)(base + lay->off_bp),
        .bb = (uint32_t *)(void *)(base + lay->off_bb),
        .den = (FE_T *)(void *)(base + lay->off_den),
        .pre = (FE_T *)(void *)(base + lay->off_pre),
        .qp = (PA_T *)(void *)(base + lay->off_qp),
        .qb = (uint32_t *)(void *)(base + lay->off_qb),
        .vec = base + lay->off_vec,
        .K = pl->K,
        .qmax = pl->K / MSM_Q_DIV,
    };
}

/* dim 4: what the pre-pass keeps of P for its images psi^i(P) (psi^2(P) = (a x, -y),
 * psi^3(P) = (a psi(P).x, -psi(P).y)): kept, not computed when read, since every window reads
 * them (measured at 2^16: computing a x on each read cost what the shorter parts saved) */
typedef struct {
    PA_T q;              /* psi(P) */
    FE_T ax, aqx;        /* a x, a psi(P).x */
} S(psi_t);

/* The points one MSM reads, dim n0 of them (dim 1: no endomorphism): index ii = cls n0 + i
 * is P_i (cls 0); with the 2-dimensional GLV split phi(P_i) = (beta x_i, y_i) (cls 1, from
 * phix); with the 4-dimensional psi split (G2) psi^cls(P_i), from the pre-pass's psi_t.
 * neg[ii] says the point is negated (the sign of its scalar part). */
typedef struct {
    const PA_T *pts;     /* n0 points (or the first n1 of them, see pts2) */
    const PA_T *pts2;    /* NULL, or points n1..n0-1 (S(sum2): two arrays as one MSM) */
    size_t n1;
    const FE_T *phix;    /* dim 2: beta x_i (only where k2_i != 0) */
    const S(psi_t) *psi; /* dim 4: (only where k1..k3 are not all 0) */
    const uint8_t *neg;  /* dim n0 signs, or NULL */
    size_t n0;
    unsigned dim;
} S(src_t);

/* Input point arrays may sit at any alignment (a zkey's point section used where the file has
 * it, 4 bytes past a multiple of 8 for every other section: session 18), so they are only ever
 * read through these - byte addresses and memcpy, which compiles to plain loads - never as
 * typed lvalues. */
/* the bytes of point i of an input array */
static inline const uint8_t *S(pt_bytes)(const PA_T *arr, size_t i)
{
    return (const uint8_t *)(const void *)arr + i * sizeof(PA_T);
}

/* *q = point i of an input array */
static inline void S(pt_load)(PA_T *q, const PA_T *arr, size_t i)
{
    memcpy(q, S(pt_bytes)(arr, i), sizeof(PA_T));
}

/* (0,0), the affine infinity, at bytes pb of an input array: every word of both coordinates
 * zero (ECA(is_inf) exactly, inline: the out-of-line call per point and window was ~2% of a
 * 2^16 proof) */
static inline bool S(pa_zero)(const uint8_t *pb)
{
    uint64_t o = 0;
    for (size_t i = 0; i < sizeof(PA_T) / 8; i++) {
        uint64_t w;
        memcpy(&w, pb + 8 * i, 8);
        o |= w;
    }
    return o == 0;
}

/* q = point ii, negated if negd (xor its own sign); false for infinity. The point's words go
 * from the input array straight into q (no copy on the stack first: a 64-byte struct copied
 * there word by word and read back whole stalled on store forwarding, +12% window loop) */
static inline bool S(fetch)(PA_T *q, const S(src_t) *src, size_t ii, bool negd)
{
    size_t pi = ii;
    unsigned cls = 0;
    while (pi >= src->n0 && cls + 1 < src->dim) {
        pi -= src->n0;
        cls++;
    }
    const uint8_t *pb = src->pts2 && pi >= src->n1 ? S(pt_bytes)(src->pts2, pi - src->n1) : S(pt_bytes)(src->pts, pi);
    if (S(pa_zero)(pb)) return false;
    if (src->neg && src->neg[ii]) negd = !negd;
    const FE_T *y = NULL;                       /* NULL: the point's own y */
    if (cls == 0) {
        memcpy(&q->x, pb + offsetof(PA_T, x), sizeof q->x);
    } else if (src->dim == 2) {
        q->x = src->phix[pi];
#if MSM_GLS
    } else {
        const S(psi_t) *e = &src->psi[pi];
        if (cls == 1) {
            q->x = e->q.x;
            y = &e->q.y;
        } else {
            q->x = cls == 2 ? e->ax : e->aqx;
            y = cls == 2 ? NULL : &e->q.y;
            negd = !negd;
        }
#endif
    }
    if (!y) {
        memcpy(&q->y, pb + offsetof(PA_T, y), sizeof q->y);
        if (negd) {
            FE_T t = q->y;
            F(neg)(&q->y, &t);
        }
    } else if (negd) {
        F(neg)(&q->y, y);
    } else {
        q->y = *y;
    }
    return true;
}

/* Apply the pending additions bk[bb[j]] += bp[j] with one inversion. Montgomery's trick runs
 * in the base field Fq on the denominators' norms (G2: N(d) = d0^2 + d1^2, d^-1 = conj(d) /
 * N(d)): per addition 1 wide-squares norm + 3 Fq products + 2 for conj(d) N^-1, against 3
 * Fq2 products (~8.4 Fq products); on G1 the norm is d itself. ws->pre holds the prefix
 * products of the norms and, where an element has room for two (Fq2), the norm.
 * (G2's Fq2 products are calls here; __attribute__((flatten)) inlined them for -0.6..-1.6%
 * on G2 2^16, within noise, but left the ASan+UBSan build without registers for the Fq
 * asm: "impossible constraints". Not kept.) */
#ifdef MSM_VEC_NL
#include "lib/msm/msm_vec_impl.h"
#endif
static void S(flush)(S(ws_t) *ws)
{
    unsigned m = ws->cnt;
    if (m == 0) return;
#ifdef MSM_VEC_NL
    if (m >= MSM_VEC_MIN && m <= MSM_K_MAX && msm_vec_on()) {  /* (its scratch: MSM_K_MAX) */
        S(flush_v)(ws);
        return;
    }
#endif
    enum { NS = sizeof(FE_T) / sizeof(FB_T) };  /* base-field slots per ws->pre element */
    FB_T *pb = (FB_T *)(void *)ws->pre, acc;
    pb[0] = MSM_CAT3(zp_fq_, MSM_C, _one);
    /* the norms and the prefix products are written by the field code straight into pb (no
     * stack temporary copied into it: a 32-byte copy of a value just stored limb by limb
     * stalls on the store forwarding, the hottest spot of G2's flush in perf annotate) */
    for (unsigned j = 0; j < m; j++) {
        if (j + MSM_PREFETCH < m) __builtin_prefetch(&ws->bk[ws->bb[j + MSM_PREFETCH]]);
        const PA_T *b = &ws->bk[ws->bb[j]], *p = &ws->bp[j];
        FE_T *d = &ws->den[j];
        F(sub)(d, &p->x, &b->x);
        if (F(is_zero)(d)) {
            if (F(eq)(&p->y, &b->y))
                F(dbl)(d, &b->y);                /* doubling: lambda = 3x^2 / 2y */
            else
                F(one)(d);                       /* P + (-P): bucket empties */
        }
        const FB_T *nr = (const FB_T *)(const void *)d;  /* G1: N(d) = d */
        if (NS > 1) {
            F(norm)(&pb[j * NS + 1], d);
            nr = &pb[j * NS + 1];
        }
        FBF(mul)(j + 1 < m ? &pb[(j + 1) * NS] : &acc, &pb[j * NS], nr);
    }
    FBF(inv)(&acc, &acc);
    for (unsigned j = m; j-- > 0;) {
        if (j >= MSM_PREFETCH) __builtin_prefetch(&ws->bk[ws->bb[j - MSM_PREFETCH]], 1);
        uint32_t bi = ws->bb[j];
        PA_T *b = &ws->bk[bi];
        const PA_T *p = &ws->bp[j];
        FE_T inv, lam, t;
        FB_T ni;
        const FB_T *nr = NS > 1 ? &pb[j * NS + 1] : (const FB_T *)(const void *)&ws->den[j];
        FBF(mul)(&ni, &acc, &pb[j * NS]);
        FBF(mul)(&acc, &acc, nr);
        F(inv_norm)(&inv, &ws->den[j], &ni);
        ws->st[bi] &= (uint8_t)~MSM_ST_BUSY;
        if (F(eq)(&p->x, &b->x)) {
            if (!F(eq)(&p->y, &b->y)) {
                ws->st[bi] &= (uint8_t)~MSM_ST_AFF;
                continue;
            }
            F(sqr)(&t, &b->x);
            F(dbl)(&lam, &t);
            F(add)(&t, &lam, &t);
            F(mul)(&lam, &t, &inv);
        } else {
        F(sub)(&t, &p->y, &b->y);
            F(mul)(&lam, &t, &inv);
        }
        F(sqr)(&t, &lam);
        F(sub)(&t, &t, &b->x);
        F(sub)(&t, &t, &p->x);                   /* x3 = lam^2 - x1 - x2 */
        FE_T dx;
        F(sub)(&dx, &b->x, &t);
        b->x = t;
        F(mul)(&dx, &dx, &lam);
        F(sub)(&b->y, &dx, &b->y);               /* y3 = lam (x1 - x3) - y1 */
    }
    ws->cnt = 0;
}

/* Add q (sign applied) to bucket bi: placed if the bucket is empty, batched if it is idle,
 * otherwise deferred to the next batch (queue) or, with the queue full, added to the XYZZ
 * bucket. Flushes when the batch is full and then re-offers the deferred points. */
static inline void S(xz_bucket_add)(S(ws_t) *ws, uint32_t bi, const PA_T *q)
{
    uint8_t s = ws->st[bi];
    if (s & MSM_ST_XYZZ) {
        S(xz_madd)(&ws->xb[bi], q);
    } else {
        S(xz_set_affine)(&ws->xb[bi], q);
        ws->st[bi] = s | MSM_ST_XYZZ;
    }
}

/* S(bucket_add) for the point already in the next pending slot, ws->bp[ws->cnt] (the window
 * tasks fetch into it: one copy of the point less per addition) */
static inline void S(bucket_put)(S(ws_t) *ws, uint32_t bi, bool requeue)
{
    const PA_T *q = &ws->bp[ws->cnt];
    uint8_t s = ws->st[bi];
    if (!(s & MSM_ST_AFF)) {                     /* empty bucket: just place the point */
        ws->bk[bi] = *q;
        ws->st[bi] = s | MSM_ST_AFF;
        return;
    }
    if (s & MSM_ST_BUSY) {                       /* already pending */
        if (requeue && ws->qn < ws->qmax) {
            ws->qb[ws->qn] = bi;
            ws->qp[ws->qn++] = *q;
        } else {
            S(xz_bucket_add)(ws, bi, q);
        }
        return;
    }
    ws->st[bi] = s | MSM_ST_BUSY;
    ws->bb[ws->cnt] = bi;
    if (++ws->cnt == ws->K) {
        S(flush)(ws);
        unsigned qn = ws->qn;
        ws->qn = 0;
        for (unsigned j = 0; j < qn; j++) {
            ws->bp[ws->cnt] = ws->qp[j];
            S(bucket_put)(ws, ws->qb[j], false);
        }
    }
}

static void S(bucket_add)(S(ws_t) *ws, uint32_t bi, const PA_T *q, bool requeue)
{
    ws->bp[ws->cnt] = *q;
    S(bucket_put)(ws, bi, requeue);
}

/* acc += buckets [j0, j1) with weight 1 (affine and XYZZ halves) */
static void S(add_buckets)(S(xyzz_t) *acc, const S(ws_t) *ws, unsigned j0, unsigned j1)
{
    for (unsigned j = j0; j < j1; j++) {
        uint8_t s = ws->st[j];
        if (s & MSM_ST_AFF) S(xz_madd)(acc, &ws->bk[j]);
        if (s & MSM_ST_XYZZ) S(xz_add)(acc, &ws->xb[j]);
    }
}

/* *sum = sum_j (j+1) B_j over buckets [0, nb) by running sums, top bucket first (empty
 * buckets above the highest used one add nothing): 2 XYZZ additions per bucket (~24
 * multiplications); the window tasks use S(weigh_fold) (~16), this one is the reference */
static inline void S(weigh_buckets)(S(xyzz_t) *sum, const S(ws_t) *ws, unsigned nb)
{
    S(xyzz_t) run;
    memset(&run, 0, sizeof run);
    memset(sum, 0, sizeof *sum);
    unsigned top = nb;
    while (top > 0 && !ws->st[top - 1]) top--;
    for (unsigned j = top; j-- > 0;) {
        S(add_buckets)(&run, ws, j, j + 1);
        S(xz_add)(sum, &run);
    }
}

/* B_j += B_{j+h} for j + h < n (h < n <= 2h), both bucket sets, the affine halves as one
 * batch of distinct buckets (batched affine additions, ~6 multiplications each); *t (if not
 * NULL) += the sum of those B_{j+h} (mixed XYZZ additions). The batch must be empty (after
 * S(flush)); B_{j+h} are emptied. */
static void S(fold_at)(S(ws_t) *ws, unsigned base, unsigned h, unsigned n, S(xyzz_t) *t, bool clear)
{
    for (unsigned j = base; j + h < base + n; j++) {
        uint8_t s = ws->st[j + h];
        if (!s) continue;
        if (s & MSM_ST_XYZZ) {
            if (t) S(xz_add)(t, &ws->xb[j + h]);
            if (ws->st[j] & MSM_ST_XYZZ) {
                S(xz_add)(&ws->xb[j], &ws->xb[j + h]);
            } else {
                ws->xb[j] = ws->xb[j + h];
                ws->st[j] |= MSM_ST_XYZZ;
            }
        }
        if (s & MSM_ST_AFF) {
            if (t) S(xz_madd)(t, &ws->bk[j + h]);
            S(bucket_add)(ws, j, &ws->bk[j + h], false);
        }
        if (clear) ws->st[j + h] = 0;
    }
    S(flush)(ws);
}

/* buckets [h, n) folded onto [0, n - h) and cleared; t (if not NULL) += their sum */
static void S(fold)(S(ws_t) *ws, unsigned h, unsigned n, S(xyzz_t) *t) { S(fold_at)(ws, 0, h, n, t, true); }

/* *sum = sum_d (d+1) sum_k B_{k u + d} over d < u, k < r (r copies of each of u digits,
 * copy-major: S(task)'s top window), by running sums (r = 1: S(weigh_buckets)) */
static void S(weigh_copies)(S(xyzz_t) *sum, const S(ws_t) *ws, unsigned u, unsigned r)
{
    S(xyzz_t) run;
    memset(&run, 0, sizeof run);
    memset(sum, 0, sizeof *sum);
    for (unsigned d = u; d-- > 0;) {
        for (unsigned k = 0; k < r; k++) S(add_buckets)(&run, ws, k * u + d, k * u + d + 1);
        S(xz_add)(sum, &run);
    }
}

/* *sum = sum_j (j+1) B_j over buckets [0, nb) by halving: with m = n/2 (n the power of two
 * above the highest used bucket), sum_{j<n} (j+1) B_j = sum_{j<m} (j+1) (B_j + B_{j+m}) +
 * m T, T = sum_{j<m} B_{j+m}; the folded sums B_j + B_{j+m} are batched affine additions
 * (S(fold)), T a mixed one per bucket, and the m T terms combine by Horner (doublings):
 * ~16 multiplications per bucket against the running sums' ~24. Folding stops at
 * MSM_FOLD_MIN buckets (a fold's inversion then costs more than it saves); the rest by
 * running sums. Modifies the buckets. Same point as S(weigh_buckets). */
static void S(weigh_fold)(S(xyzz_t) *sum, S(ws_t) *ws, unsigned nb)
{
    memset(sum, 0, sizeof *sum);
    unsigned top = nb, m = 1;
    while (top > 0 && !ws->st[top - 1]) top--;
    while (m < top) m *= 2;
    while (m >= 2 * MSM_FOLD_MIN) {
        m /= 2;
        S(xyzz_t) t;
        memset(&t, 0, sizeof t);
        /* B_j += B_{j+m} with the upper half kept; its sum T by halving it onto itself
         * (batched affine additions, ~6 multiplications, on the vector path where a half
         * fills a batch) down to MSM_TREE_MIN buckets, those mixed into T in XYZZ (~10
         * each; session 17: before, every upper bucket was, ~10% of a 2^16 proof's CPU) */
        S(fold_at)(ws, 0, m, 2 * m, NULL, false);
        unsigned sz = m;
        for (; sz / 2 >= MSM_TREE_MIN; sz /= 2) S(fold_at)(ws, m, sz / 2, sz, NULL, true);
        S(add_buckets)(&t, ws, m, m + sz);
        memset(&ws->st[m], 0, sz);
        S(xz_dbl)(sum);
        S(xz_add)(sum, &t);
    }
    /* now sum = sum_l (m_l / m) T_l (0 if nothing was folded): times m, plus the weighted
     * sum of the m buckets left */
    for (unsigned k = m; k > 1; k /= 2) S(xz_dbl)(sum);
    S(xyzz_t) w;
    S(weigh_copies)(&w, ws, m < top ? m : top, 1);
    S(xz_add)(sum, &w);
}

static void S(sum_buckets)(const S(ws_t) *ws, unsigned nbk, P_T *out)
{
    S(xyzz_t) acc;
    memset(&acc, 0, sizeof acc);
    S(add_buckets)(&acc, ws, 0, nbk);
    S(xz_to_jac)(out, &acc);
}

/* One window task: window w over the scalars idx[lo, hi); result in *out. topu: 0 for a
 * window whose digits use all nb buckets; for the top window, the number u of digit values
 * it can hold (2^tb for tb = bits - (W-1) c < c - 1 bits plus the carry: digits 1..u).
 * Such a window (a tenth of all additions with 126-bit halves at c = 13, where u = 512)
 * would pile its points into u buckets: with K = nb/4 >= u pending additions per batch most
 * of them conflict and go to the XYZZ set at ~10 multiplications instead of ~6 (measured:
 * xz_madd 11% of a G1 MSM). So each digit gets r = nb/u bucket copies, the points dealt
 * round-robin over the copies (bucket k u + d - 1, copy k), the copies folded onto the first
 * u buckets (S(fold)) before the reduction. u = 1 (only the carry: the bit length a multiple
 * of c): r = K copies, distinct in every batch (no conflicts). topu = 1 is the former "flat"
 * flag (true). */
static void S(task)(S(ws_t) *ws, const msm_plan_t *pl, unsigned w, const S(src_t) *src,
                    const zp_scalar_t *sc, const uint32_t *idx, size_t lo, size_t hi, P_T *out,
                    unsigned topu, P_T *out2)
{
    const unsigned c = pl->c, u = topu && topu < pl->nb ? topu : 0;
    const unsigned r = !u ? 1 : u == 1 ? (pl->K < pl->nb ? pl->K : pl->nb) : pl->nb / u;
    const unsigned nb = u ? u * r : pl->nb;
    /* out2 (msm_plan_t.G = 2, full windows only): window w + 1 too, its buckets at [nb, 2 nb),
     * its result in *out2; the batch is 2K over both, so each batch's buckets are as likely
     * to be busy as with K over one window, for half the inversions */
    const bool two = out2 != NULL;
    memset(ws->st, 0, two ? 2 * nb : nb);
    ws->K = two ? 2 * pl->K : pl->K;
    ws->qmax = ws->K / MSM_Q_DIV;
    ws->cnt = 0;
    ws->qn = 0;
    uint32_t rr = 0;
    for (size_t i = lo; i < hi; i++) {
        size_t ii = idx ? idx[i] : i;
        int32_t d = msm_digit(&sc[ii], w, c);
        if (two) {
            int32_t d2 = msm_digit(&sc[ii], w + 1, c);
            if (d2 != 0) {
                if (!S(fetch)(&ws->bp[ws->cnt], src, ii, d2 < 0)) continue;
                S(bucket_put)(ws, nb + (uint32_t)(d2 < 0 ? -d2 : d2) - 1, true);
            }
        }
        if (d == 0) continue;
        if (!S(fetch)(&ws->bp[ws->cnt], src, ii, d < 0)) continue;
        uint32_t bi = (uint32_t)(d < 0 ? -d : d) - 1;
        if (r > 1) {                             /* copy rr of digit bi */
            bi += rr * u;
            rr = rr + 1 == r ? 0 : rr + 1;
        }
        S(bucket_put)(ws, bi, true);
    }
    S(flush)(ws);
    unsigned qn = ws->qn;                        /* deferred points: one more batch */
    ws->qn = 0;
    for (unsigned j = 0; j < qn; j++) S(bucket_add)(ws, ws->qb[j], &ws->qp[j], false);
    S(flush)(ws);
    S(xyzz_t) sum;
    if (two) {                                   /* window w + 1: the upper buckets as a set */
        S(ws_t) hi2 = *ws;
        hi2.bk += nb;
        hi2.xb += nb;
        hi2.st += nb;
        S(weigh_fold)(&sum, &hi2, nb);
        S(xz_to_jac)(out2, &sum);
    }
    if (!u) {
        S(weigh_fold)(&sum, ws, nb);
    } else {                                     /* fold the copies, then weigh the digits */
        unsigned k = r;
        for (; k > 1 && u * k >= 2 * MSM_FOLD_MIN; k /= 2) S(fold)(ws, u * k / 2, u * k, NULL);
        if (k == 1)
            S(weigh_fold)(&sum, ws, u);
        else
            S(weigh_copies)(&sum, ws, u, k);
    }
    S(xz_to_jac)(out, &sum);
}

/* One scalar-1 task: the plain sum of the points idx[lo, hi). The points are dealt round-robin
 * to nbk = K1 affine accumulators, so every batch of K pending additions has distinct
 * accumulators and shares one inversion (~6 multiplications per addition, no windows); the
 * accumulators are then folded onto the first (S(fold): batched affine additions too). */
static void S(ones_task)(S(ws_t) *ws, const msm_plan_t *pl, const S(src_t) *src,
                         const uint32_t *idx, size_t lo, size_t hi, P_T *out)
{
    const unsigned nbk = pl->K1;
    memset(ws->st, 0, nbk);
    ws->K = pl->K1;
    ws->qmax = pl->K1 / MSM_Q_DIV;
    ws->cnt = 0;
    ws->qn = 0;
    unsigned b = 0;
    for (size_t i = lo; i < hi; i++) {
        if (!S(fetch)(&ws->bp[ws->cnt], src, idx[i], false)) continue;
        S(bucket_put)(ws, b, true);
        if (++b == nbk) b = 0;
    }
    S(flush)(ws);
    unsigned qn = ws->qn;
    ws->qn = 0;
    for (unsigned j = 0; j < qn; j++) S(bucket_add)(ws, ws->qb[j], &ws->qp[j], false);
    S(flush)(ws);
    unsigned k = nbk;
    for (; k >= 2 * MSM_FOLD_MIN; k = (k + 1) / 2) S(fold)(ws, (k + 1) / 2, k, NULL);
    S(sum_buckets)(ws, k, out);
}

/* m MSMs over the same classified scalars. Tasks, per MSM (T = P1 + W*P of them): P1
 * scalar-1 tasks, then W*P window tasks (window w over idx[0, cnt[w]) split in P parts);
 * result slot of task t of MSM j: res[j * T + t]. With the endomorphism the "scalars" are
 * the 2 n0 halves and MSM j reads its points through src (phix + j n0). */
typedef struct {
    const msm_plan_t *pl;
    const PA_T *const *pts;  /* m point arrays */
    const PA_T *pts2;        /* m = 1 only: NULL, or points n1.. of the one MSM (S(sum2)) */
    size_t n1;
    unsigned m;
    const zp_scalar_t *sc;
    const uint32_t *idx;
    const uint32_t *cnt;     /* W */
    size_t nbig, none;
    unsigned P1;             /* scalar-1 tasks in use (<= pl->P1) */
    unsigned top_u;          /* digit values of the top window (S(task)'s topu), 0: all */
    size_t n;                /* scalars (dim n0: parts with the endomorphism) */
    size_t n0;               /* points per MSM */
    unsigned dim;            /* 1 (no endomorphism), 2 (GLV), 4 (psi, G2) */
    const FE_T *phix;        /* dim 2: m * n0 */
    const S(psi_t) *psi;     /* dim 4: m * n0 */
    const uint8_t *neg;      /* n, or NULL */
    uint8_t *scratch;        /* past the endomorphism area */
    P_T *res;
    atomic_uint next;
} S(job_t);

static void S(worker)(void *arg, unsigned tid, unsigned nthr)
{
    (void)nthr;
    S(job_t) *job = arg;
    const msm_plan_t *pl = job->pl;
    msm_layout_t lay;
    msm_layout(&lay, pl, job->m, job->n, sizeof(PA_T), sizeof(S(xyzz_t)), sizeof(FE_T), sizeof(P_T));
    uint8_t *base = job->scratch + lay.res_bytes + lay.idx_bytes + (size_t)tid * lay.thread_bytes;
    S(ws_t) ws = S(ws_carve)(base, &lay, pl);
    /* per MSM: T result slots (P1, then window w part p at P1 + w P + p) and TT tasks (with
     * G = 2 the full windows in pairs (0, 1), (2, 3), ..., then the top window) */
    const unsigned T = job->P1 + pl->W * pl->P, G = msm_g(pl), nwt = G == 2 && pl->W ? pl->W / 2 + 1 : pl->W;
    const unsigned TT = job->P1 + nwt * pl->P, ntask = job->m * TT;
    for (;;) {
        unsigned t = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (t >= ntask) break;
        unsigned j = t / TT, u = t % TT;
        S(src_t) src = {.pts = job->pts[j], .pts2 = job->pts2, .n1 = job->n1,
                        .phix = job->phix ? job->phix + (size_t)j * job->n0 : NULL,
                        .psi = job->psi ? job->psi + (size_t)j * job->n0 : NULL,
                        .neg = job->neg, .n0 = job->n0, .dim = job->dim};
        P_T *res = &job->res[(size_t)j * T];     /* this MSM's slots */
        size_t lo, hi;
        if (u < job->P1) {
            zp_split(job->none, u, job->P1, &lo, &hi);
            S(ones_task)(&ws, pl, &src, job->idx + job->nbig, lo, hi, &res[u]);
        } else {
            u -= job->P1;
            unsigned q = u / pl->P, part = u % pl->P, w = G == 2 ? (q + 1 == nwt ? pl->W - 1 : 2 * q) : q;
            const bool two = G == 2 && w + 2 < pl->W;       /* w + 1 a full window too */
            P_T *out = &res[job->P1 + w * pl->P + part];
            zp_split(job->cnt[w], part, pl->P, &lo, &hi);
            S(task)(&ws, pl, w, &src, job->sc, job->idx, lo, hi, out,    /* idx NULL: identity */
                    w == pl->W - 1 ? job->top_u : 0, two ? out + pl->P : NULL);
        }
    }
}

/* bytes after the endomorphism area for plan pl over nsc scalars */
static size_t S(bytes)(const msm_plan_t *pl, unsigned m, size_t nsc, unsigned nthreads)
{
    msm_layout_t lay;
    msm_layout(&lay, pl, m, nsc, sizeof(PA_T), sizeof(S(xyzz_t)), sizeof(FE_T), sizeof(P_T));
    return lay.res_bytes + lay.idx_bytes + (size_t)nthreads * lay.thread_bytes;
}

/* the endomorphism area for dim d: d n0 scalar parts, d n0 signs, and m n0 beta x (d = 2)
 * or m n0 psi_t (d = 4) */
static size_t S(endo_bytes)(size_t n0, unsigned m, unsigned d)
{
    if (d < 2) return 0;
    size_t aux = d == 4 ? sizeof(S(psi_t)) : sizeof(FE_T);
    return align64(d * n0 * sizeof(zp_scalar_t)) + align64(d * n0) + align64((size_t)m * n0 * aux);
}

/* the largest split this group has: 4 (psi on G2) or 2 (GLV) */
#define MSM_DIM_MAX (MSM_GLS ? 4u : 2u)

/* bits of the parts for dim d (below the split's proven bound, lib/ec/gen_glv.py) */
static unsigned S(dim_bits)(unsigned d)
{
#if MSM_GLS
    if (d == 4) return MSM_CAT3(zp_gls_, MSM_C, _bits);
#endif
    return d == 2 ? MSM_CAT3(zp_glv_, MSM_C, _bits) : MSM_BITS_MAX;
}

#ifdef MSM_VEC_NL
#define MSM_VEC_MODES 2          /* plans for the scalar and the vector path */
#else
#define MSM_VEC_MODES 1
#endif
/* the plan for the path in use now (msm_vec_on()) */
static bool S(vec)(void)
{
#ifdef MSM_VEC_NL
    return msm_vec_on();
#else
    return false;
#endif
}

/* the plan the scratch is sized for (n0 points, full-size scalars), per dim and path */
static void S(full_plan)(msm_plan_t *pl, size_t n0, unsigned nthreads, unsigned d, unsigned cf, bool vec)
{
    msm_plan(pl, d * n0, nthreads, S(dim_bits)(d), MSM_COST_FQ, cf, vec);
}

/* the window c shifted by the offset dc (-1..1), within MSM_C_MIN..MSM_C_MAX */
static unsigned S(shift_c)(unsigned c, int dc)
{
    int x = (int)c + (dc < -1 ? -1 : dc > 1 ? 1 : dc);
    return x < MSM_C_MIN ? MSM_C_MIN : x > MSM_C_MAX ? MSM_C_MAX : (unsigned)x;
}

/* K and P times 2^dk and 2^dp (-1..1: the calibrated offsets, or opts' with model_window),
 * clamped to MSM_K_MIN..MSM_K_MAX and 1..MSM_P_MAX; a K too large for window pairs drops them */
static void S(shift_kp)(msm_plan_t *pl, int dk, int dp)
{
    if (dk > 0 && pl->K < MSM_K_MAX) pl->K *= 2;
    if (dk < 0 && pl->K / 2 >= MSM_K_MIN) pl->K /= 2;
    if (dp > 0 && pl->P < MSM_P_MAX) pl->P *= 2;
    if (dp < 0 && pl->P > 1) pl->P /= 2;
    if (2 * pl->K > MSM_K_MAX) pl->G = 1;
}

/* opts' forced K and P (tuning) on a plan */
static void S(force_kp)(msm_plan_t *pl, const zp_msm_opts_t *o)
{
    if (!o) return;
    if (o->k) pl->K = o->k < MSM_K_MIN ? MSM_K_MIN : o->k > MSM_K_MAX ? MSM_K_MAX : o->k;
    if (o->p) {
        unsigned p = 1;
        while (p * 2 <= o->p && p * 2 <= MSM_P_MAX) p *= 2;
        pl->P = p;
    }
    if (o->g) pl->G = o->g >= 2 && 2 * pl->K <= MSM_K_MAX ? 2 : 1;
    else if (2 * pl->K > MSM_K_MAX) pl->G = 1;   /* a forced K too large for pairs */
}

/* the part past the endomorphism area: room for every dim's full plan on either path (so
 * that a scratch sized before zp_msm_set_vector still fits), and with cf = 0 for the model's
 * window and one bit either side (the calibrated offsets, issue 31: whatever table is in use
 * when the MSM runs) */
static size_t S(budget)(size_t n, unsigned m, unsigned nthreads, unsigned cf, const zp_msm_opts_t *o)
{
    size_t best = 0;
    for (unsigned d = 1; d <= MSM_DIM_MAX; d *= 2)
        for (unsigned v = 0; v < MSM_VEC_MODES; v++) {
            msm_plan_t a0, a;
            S(full_plan)(&a0, n, nthreads, d, cf, v);
            for (int dc = -1; dc <= 1; dc++) {
                if (dc && cf) continue;
                /* each offset's own plan (before session 19 the offset 0 was measured on the
                 * -1 plan left in a: harmless while bytes grew with c, not once a smaller c
                 * may take window pairs and a larger one not); at each window every K and P
                 * offset (the table's kp rows) */
                a = a0;
                if (dc) S(full_plan)(&a, n, nthreads, d, S(shift_c)(a0.c, dc), v);
                for (int j = 0; j < 9; j++) {
                    msm_plan_t b = a;
                    S(shift_kp)(&b, j / 3 - 1, j % 3 - 1);
                    S(force_kp)(&b, o);
                    size_t x = S(bytes)(&b, m, d * n, nthreads);
                    if (x > best) best = x;
                }
            }
        }
    return best;
}

static unsigned S(force_c)(const zp_msm_opts_t *o)
{
    if (!o || !o->c) return 0;
    return o->c < MSM_C_MIN ? MSM_C_MIN : o->c > MSM_C_MAX ? MSM_C_MAX : o->c;
}

/* the split the ENDO method takes for n0 points: 4 (psi, G2) from MSM_GLS_MIN_N points up (set
 * per instantiation), else 2 (the GLS split saves bucket reductions, which only matter once
 * the windows are 16 bits wide; measured in doc/msm.md) */
static unsigned S(endo_dim)(size_t n0)
{
    return n0 >= MSM_GLS_MIN_N ? MSM_DIM_MAX : 2;
}

/* the scalar shape the method choice looks up (msm_calib.c): the share of scalars longer than
 * 128 bits among up to 4096 evenly spaced ones (uniform scalars below r: 1, but for 1 in
 * 2^125; witness vectors are mostly 0, 1 and short values) */
static double S(long_frac)(const zp_scalar_t *sc, const zp_scalar_t *sc2, size_t n1, size_t n)
{
    size_t step = n > 4096 ? n / 4096 : 1, cnt = 0, lng = 0;
    for (size_t i = 0; i < n; i += step, cnt++) {
        const zp_scalar_t *k = sc2 && i >= n1 ? &sc2[i - n1] : &sc[i];
        lng += (k->l[2] | k->l[3]) != 0;
    }
    return cnt ? (double)lng / (double)cnt : 0;
}

/* the table's pick for this group and curve, from the rows of the path this MSM runs on
 * (msm.h: zp_msm_auto_pick_path) */
static zp_msm_pick_t S(pick)(double long_frac, size_t n0, unsigned nthr)
{
    return zp_msm_auto_pick_path(sizeof(FE_T) > sizeof(FB_T) ? 2 : 1, sizeof(FB_T) > 32 ? 1 : 0, long_frac, n0,
                                 nthr, S(vec)());
}

/* the split's dimension for opts and the n0 scalars sc (from n1 on sc2, S(sum2)): no_endo 1;
 * dim 2 or 4 when asked (4 only where the group has it); method ENDO: S(endo_dim), PLAIN: 1;
 * AUTO (and NULL opts): the calibrated choice for this group, curve, shape, size and thread
 * class (msm.h: zp_msm_auto_pick, issue 31). *off (may be NULL): the window, K and P offsets
 * for that dim's method (opts' window_delta, k_delta, p_delta with model_window; 0 with a
 * forced c) */
typedef struct { int dc, dk, dp; } S(off_t);
static unsigned S(dim_lf)(const zp_msm_opts_t *o, size_t n0, double long_frac, unsigned nthr, S(off_t) *off)
{
    unsigned d;
    zp_msm_method_t m = o ? o->method : ZP_MSM_AUTO;
    const bool need_pick = m == ZP_MSM_AUTO || (off && !(o && (o->c || o->model_window)));
    zp_msm_pick_t pk = {.method = ZP_MSM_ENDO};
    if (need_pick) pk = S(pick)(long_frac, n0, nthr);
    if (o && o->no_endo) d = 1;
    else if (o && o->dim == 2) d = 2;
    else if (o && o->dim == 4) d = MSM_DIM_MAX;
    else d = (m == ZP_MSM_AUTO ? pk.method : m) == ZP_MSM_PLAIN ? 1 : S(endo_dim)(n0);
    if (off)
        *off = o && o->c ? (S(off_t)){0, 0, 0}
             : o && o->model_window ? (S(off_t)){o->window_delta, o->k_delta, o->p_delta}
                                    : (S(off_t)){pk.dc[d == 1], pk.dk[d == 1], pk.dp[d == 1]};
    return d;
}

static unsigned S(dim)(const zp_msm_opts_t *o, size_t n0, const zp_scalar_t *sc,
                       const zp_scalar_t *sc2, size_t n1, unsigned nthr, S(off_t) *off)
{
    return S(dim_lf)(o, n0, S(long_frac)(sc, sc2, n1, n0), nthr, off);
}

/* the largest dimension a call with opts may take for n0 points (its scratch) */
static unsigned S(dim_room)(const zp_msm_opts_t *o, size_t n0)
{
    if (o && o->no_endo) return 1;
    if (o && o->dim == 2) return 2;
    if (o && o->dim == 4) return MSM_DIM_MAX;
    return o && o->method == ZP_MSM_PLAIN ? 1 : S(endo_dim)(n0);
}

/* the endomorphism area for opts: the dim's own, and never less than the ENDO method's (so
 * the default scratch covers every opts with c = 0 and no explicit dim = 4, and the AUTO
 * choice is free to take either method) */
static size_t S(area)(size_t n0, unsigned m, const zp_msm_opts_t *o)
{
    size_t a = S(endo_bytes)(n0, m, S(dim_room)(o, n0)), d = S(endo_bytes)(n0, m, S(endo_dim)(n0));
    return a > d ? a : d;
}

static size_t S(scratch_size)(size_t n, unsigned m, unsigned nthreads, const zp_msm_opts_t *o)
{
    if (nthreads == 0) nthreads = 1;
    if (m == 0) m = 1;
    if (n > MSM_CHUNK) n = MSM_CHUNK;
    return S(area)(n, m, o) + S(budget)(n, m, nthreads, S(force_c)(o), o);
}

/* the endomorphism pre-pass: split scalars [lo, hi) into dim parts (part j of scalar i at
 * j n0 + i) and signs, and beta x (dim 2) or psi (dim 4) of the points whose parts past the
 * first are not all 0 */
typedef struct {
    const zp_scalar_t *sc;
    const PA_T *const *pts;
    const zp_scalar_t *sc2;  /* NULL, or scalars n1..n0-1 (m = 1: with their points pts2) */
    const PA_T *pts2;
    size_t n1;
    unsigned m, dim;
    size_t n0;
    zp_scalar_t *half;
    uint8_t *neg;
    FE_T *phix;
    S(psi_t) *psi;
} S(split_job_t);

/* scalar i and point i of MSM j of the pre-pass (the second array from n1 on) */
static inline const zp_scalar_t *S(split_sc)(const S(split_job_t) *sj, size_t i)
{
    return sj->sc2 && i >= sj->n1 ? &sj->sc2[i - sj->n1] : &sj->sc[i];
}

static inline void S(split_pt)(PA_T *q, const S(split_job_t) *sj, unsigned j, size_t i)
{
    if (sj->pts2 && i >= sj->n1)
        S(pt_load)(q, sj->pts2, i - sj->n1);
    else
        S(pt_load)(q, sj->pts[j], i);
}

static void S(split_worker)(void *arg, unsigned tid, unsigned nthr)
{
    S(split_job_t) *sj = arg;
    const MSM_CAT3(zp_fq_, MSM_C, _t) *beta = EC(endo_beta)();
    size_t lo, hi, n0 = sj->n0;
    zp_split(n0, tid, nthr, &lo, &hi);
#if MSM_GLS
    if (sj->dim == 4) {
        for (size_t i = lo; i < hi; i++) {
            zp_scalar_t kp[4];
            unsigned ng;
            MSM_CAT3(zp_gls_, MSM_C, _split)(kp, &ng, S(split_sc)(sj, i));
            uint64_t rest = 0;
            for (unsigned d = 0; d < 4; d++) {
                sj->half[d * n0 + i] = kp[d];
                sj->neg[d * n0 + i] = (uint8_t)(ng >> d & 1);
                if (d) rest |= kp[d].l[0] | kp[d].l[1];
            }
            if (rest) {
                const FB_T *a = MSM_CAT3(zp_g2_, MSM_C, _psi2_a)();
                for (unsigned j = 0; j < sj->m; j++) {
                    S(psi_t) *e = &sj->psi[(size_t)j * n0 + i];
                    PA_T p;
                    S(split_pt)(&p, sj, j, i);
                    MSM_CAT3(zp_g2a_, MSM_C, _psi)(&e->q, &p);
                    F(mulb)(&e->ax, &p.x, a);
                    F(mulb)(&e->aqx, &e->q.x, a);
                }
            }
        }
        return;
    }
#endif
    for (size_t i = lo; i < hi; i++) {
        unsigned ng;
        MSM_CAT3(zp_glv_, MSM_C, _split)(&sj->half[i], &sj->half[n0 + i], &ng, S(split_sc)(sj, i));
        sj->neg[i] = (uint8_t)(ng & 1);
        sj->neg[n0 + i] = (uint8_t)(ng >> 1);
        if (sj->half[n0 + i].l[0] | sj->half[n0 + i].l[1])
            for (unsigned j = 0; j < sj->m; j++) {
                PA_T p;
                S(split_pt)(&p, sj, j, i);
                F(mulb)(&sj->phix[(size_t)j * n0 + i], &p.x, beta);
            }
    }
}

/* out[j] = sum_i scalars[i] points[j][i] for j < m, n <= MSM_CHUNK. With sc2 != NULL (m = 1,
 * and the split on: S(sum2)), scalars and points from index n1 on are sc2[i - n1] and
 * pts2[i - n1]: two arrays run as one MSM (the pre-pass writes the parts contiguously, so
 * only the pre-pass and the point fetch see the two arrays). */
static void S(multi2)(P_T *out, const PA_T *const *points, unsigned m, const zp_scalar_t *scalars,
                      size_t n, void *scratch, zp_pool_t *pool, const zp_msm_opts_t *opts,
                      const PA_T *pts2, const zp_scalar_t *sc2, size_t n1)
{
    unsigned nthr = zp_pool_size(pool);
    for (unsigned j = 0; j < m; j++) EC(set_inf)(&out[j]);
    if (n == 0 || m == 0) return;
    if (n <= MSM_NAIVE_MAX) {                    /* tiny: plain double-and-add per point */
        for (unsigned j = 0; j < m; j++)
            for (size_t i = 0; i < n; i++) {
                P_T p, t;
                PA_T a;
                S(pt_load)(&a, points[j], i);
                EC(from_affine)(&p, &a);
                EC(mul)(&t, &p, &scalars[i]);
                EC(add)(&out[j], &out[j], &t);
            }
        return;
    }
    S(off_t) off;
    const unsigned dim = S(dim)(opts, n, scalars, sc2, n1, nthr, &off), cf = S(force_c)(opts);
    const int dc = off.dc;
    const size_t n0 = n, budget = S(budget)(n0, m, nthr, cf, opts);
    uint8_t *base = (uint8_t *)scratch + S(area)(n0, m, opts);
    const FE_T *phix = NULL;
    const S(psi_t) *psi = NULL;
    const uint8_t *neg = NULL;
    if (dim > 1) {                               /* the MSM over the dim n0 parts from here */
        S(split_job_t) sj = {.sc = scalars, .pts = points, .sc2 = sc2, .pts2 = sc2 ? pts2 : NULL,
                             .n1 = n1, .m = m, .dim = dim, .n0 = n0, .half = (zp_scalar_t *)scratch};
        sj.neg = (uint8_t *)scratch + align64(dim * n0 * sizeof(zp_scalar_t));
        sj.phix = (FE_T *)(void *)(sj.neg + align64(dim * n0));
        sj.psi = (S(psi_t) *)(void *)sj.phix;
        if (nthr > 1 && n0 >= 1024)
            zp_pool_run(pool, S(split_worker), &sj);
        else
            S(split_worker)(&sj, 0, 1);
        scalars = sj.half;
        n = dim * n0;
        if (dim == 2) phix = sj.phix;
        else psi = sj.psi;
        neg = sj.neg;
    }
    msm_class_t cl;
    msm_classify(&cl, scalars, n);
    if (cl.nbig == 0 && cl.none == 0) return;
    /* plan for the scalars > 1 actually present; fall back to the plan the scratch was sized
     * for if that one would need more room */
    msm_plan_t pl, full;
    const bool vec = S(vec)();
    S(full_plan)(&full, n0, nthr, dim, cf, vec);
    if (!cf && dc) S(full_plan)(&full, n0, nthr, dim, S(shift_c)(full.c, dc), vec);
    S(shift_kp)(&full, off.dk, off.dp);
    S(force_kp)(&full, opts);
    /* (the plan's model is tuned for full-size scalars: the bit lengths are used only when
     * every scalar is clearly short; measured: no gain, some loss, with a few full ones; the
     * largest bit length sets the window count: 127-bit halves fill 8 windows of 16) */
    const unsigned fbits = S(dim_bits)(dim);
    if (cl.bits > fbits * 3 / 4) {
        msm_plan(&pl, cl.nbig, nthr, cl.bits, MSM_COST_FQ, cf, vec);
        if (!cf && dc) msm_plan(&pl, cl.nbig, nthr, cl.bits, MSM_COST_FQ, S(shift_c)(pl.c, dc), vec);
    } else {
        msm_plan_h(&pl, cl.nbig, nthr, cl.bits + 1, MSM_COST_FQ, cl.hist, cf, vec);
        if (!cf && dc) msm_plan_h(&pl, cl.nbig, nthr, cl.bits + 1, MSM_COST_FQ, cl.hist, S(shift_c)(pl.c, dc), vec);
    }
    S(shift_kp)(&pl, off.dk, off.dp);
    S(force_kp)(&pl, opts);
    if (S(bytes)(&pl, m, n, nthr) > budget) pl = full;
    unsigned P1 = 0;
    if (cl.none) {
        size_t p1 = cl.none / MSM_ONE_MIN;
        P1 = p1 < 1 ? 1 : p1 > pl.P1 ? pl.P1 : (unsigned)p1;
        /* accumulators per scalar-1 task: the inversion (~inv mults, shared by K1 additions)
         * against the final sum of the accumulators (~10 mults each): K1 ~ sqrt(inv m / 10) */
        double m1 = (double)cl.none / P1, k1 = 16;
        while (k1 < MSM_K_MAX && k1 * k1 * 10.0 < MSM_COST_FQ * m1) k1 *= 2;
        pl.K1 = (unsigned)k1;
        while (pl.K1 > MSM_K_MIN && S(bytes)(&pl, m, n, nthr) > budget) pl.K1 /= 2;
        if (S(bytes)(&pl, m, n, nthr) > budget) {
            pl = full;
            P1 = P1 > pl.P1 ? pl.P1 : P1;
        }
    }
    pl.W = cl.nbig ? cl.bits / pl.c + 1 : 0;     /* top window < c bits: no final carry */
    msm_layout_t lay;
    msm_layout(&lay, &pl, m, n, sizeof(PA_T), sizeof(S(xyzz_t)), sizeof(FE_T), sizeof(P_T));
    uint32_t *idx = (uint32_t *)(void *)(base + lay.res_bytes);
    uint32_t cnt[MSM_BITS_MAX / MSM_C_MIN + 2];
    size_t top = 0;                              /* scalars > 1 using every window */
    if (pl.W)
        for (unsigned bl = (pl.W - 1) * pl.c < 2 ? 2 : (pl.W - 1) * pl.c; bl <= MSM_BITS_MAX; bl++)
            top += cl.hist[bl];
    if (top >= n - n / 32) {                     /* dense, (nearly) all full-size: no index, */
        for (unsigned w = 0; w < pl.W; w++) cnt[w] = (uint32_t)n;  /* every window visits */
        idx = NULL;                              /* all (zero digits skipped, 1 = digit 1) */
        P1 = 0;
    } else {
        msm_sort(idx, cnt, &cl, scalars, n, pl.c, pl.W);
    }
    S(job_t) job = {.pl = &pl, .pts = points, .pts2 = sc2 ? pts2 : NULL, .n1 = n1, .m = m, .sc = scalars, .idx = idx, .cnt = cnt,
                    .nbig = cl.nbig, .none = cl.none, .P1 = P1, .n = n, .n0 = n0, .dim = dim,
                    .top_u = cl.bits % pl.c + 1 < pl.c ? 1u << (cl.bits % pl.c) : 0,
                    .phix = phix, .psi = psi, .neg = neg, .scratch = base, .res = (P_T *)(void *)base};

    atomic_init(&job.next, 0);
    const unsigned T = P1 + pl.W * pl.P;
    if (nthr > 1 && m * T > 1)
        zp_pool_run(pool, S(worker), &job);
    else
        S(worker)(&job, 0, 1);
    for (unsigned j = 0; j < m; j++) {
        const P_T *res = job.res + (size_t)j * T;
        /* sum_w 2^(cw) S_w, Horner from the top window, then the scalar-1 sums */
        P_T acc;
        EC(set_inf)(&acc);
        for (unsigned w = pl.W; w-- > 0;) {
            for (unsigned k = 0; k < pl.c; k++) EC(dbl)(&acc, &acc);
            for (unsigned part = 0; part < pl.P; part++) EC(add)(&acc, &acc, &res[P1 + w * pl.P + part]);
        }
        for (unsigned u = 0; u < P1; u++) EC(add)(&acc, &acc, &res[u]);
        out[j] = acc;
    }
}

static void S(multi)(P_T *out, const PA_T *const *points, unsigned m, const zp_scalar_t *scalars,
                     size_t n, void *scratch, zp_pool_t *pool, const zp_msm_opts_t *opts)
{
    S(multi2)(out, points, m, scalars, n, scratch, pool, opts, NULL, NULL, n);
}

/* MSM_IMPL_INTERNAL (msm_batch_*.c): only the static internals above, and the names below
 * kept defined for the includer (which #undefs them) (added by the batch module) */
#ifndef MSM_IMPL_INTERNAL
size_t MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _scratch_size)(size_t n, unsigned nthreads)
{
    return S(scratch_size)(n, 1, nthreads, NULL);
}

size_t MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi_scratch_size)(size_t n, unsigned m, unsigned nthreads)
{
    return S(scratch_size)(n, m, nthreads, NULL);
}

size_t MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _ex_scratch_size)(size_t n, unsigned m, unsigned nthreads,
                                                             const zp_msm_opts_t *opts)
{
    return S(scratch_size)(n, m, nthreads, opts);
}

void MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi_ex)(P_T *out, const PA_T *const *points, unsigned m,
                                                    const zp_scalar_t *scalars, size_t n, void *scratch,
                                                    zp_pool_t *pool, const zp_msm_opts_t *opts)
{
    if (n <= MSM_CHUNK) {
        S(multi)(out, points, m, scalars, n, scratch, pool, opts);
        return;
    }
    /* beyond MSM_CHUNK scalars (the index array is 32-bit and holds 2 per scalar with the
     * endomorphism): chunks, added up */
    for (unsigned j = 0; j < m; j++) EC(set_inf)(&out[j]);
    for (size_t lo = 0; lo < n; lo += MSM_CHUNK) {
        size_t len = n - lo < MSM_CHUNK ? n - lo : MSM_CHUNK;
        for (unsigned j = 0; j < m; j++) {
            const PA_T *pj = (const PA_T *)(const void *)S(pt_bytes)(points[j], lo);
            P_T t;
            S(multi)(&t, &pj, 1, scalars + lo, len, scratch, pool, opts);
            EC(add)(&out[j], &out[j], &t);
        }
    }
}

void MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _plan_info)(zp_msm_info_t *info, size_t n, unsigned nthreads,
                                                     bool witness, const zp_msm_opts_t *opts)
{
    if (nthreads == 0) nthreads = 1;
    if (n > MSM_CHUNK) n = MSM_CHUNK;
    /* the shape's share of long scalars: uniform all, witness-like the calibration's mix */
    S(off_t) off;
    const unsigned dim = S(dim_lf)(opts, n, witness ? 0.15 : 1.0, nthreads, &off), cf = S(force_c)(opts);
    msm_plan_t pl;
    S(full_plan)(&pl, n, nthreads, dim, cf, S(vec)());
    const unsigned c0 = pl.c;
    if (!cf && off.dc) S(full_plan)(&pl, n, nthreads, dim, S(shift_c)(pl.c, off.dc), S(vec)());
    const msm_plan_t p0 = pl;
    S(shift_kp)(&pl, off.dk, off.dp);
    S(force_kp)(&pl, opts);
    /* dc, dk, dp: the offsets in effect (0 where the shift was clamped) */
    *info = (zp_msm_info_t){.method = dim == 1 ? ZP_MSM_PLAIN : ZP_MSM_ENDO, .dim = dim, .c = pl.c,
                            .W = S(dim_bits)(dim) / pl.c + 1, .P = pl.P, .K = pl.K, .wpt = msm_g(&pl),
                            .dc = (int)pl.c - (int)c0, .dk = (pl.K > p0.K) - (pl.K < p0.K),
                            .dp = (pl.P > p0.P) - (pl.P < p0.P)};
}

void MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi)(P_T *out, const PA_T *const *points, unsigned m,
                                                 const zp_scalar_t *scalars, size_t n, void *scratch,
                                                 zp_pool_t *pool)
{
    MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi_ex)(out, points, m, scalars, n, scratch, pool, NULL);
}

size_t MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _sum2_scratch_size)(size_t n1, size_t n2, unsigned nthreads,
                                                               const zp_msm_opts_t *opts)
{
    return S(scratch_size)(n1 + n2, 1, nthreads, opts);
}

void MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _sum2_ex)(P_T *out, const PA_T *p1, const zp_scalar_t *s1, size_t n1,
                                                   const PA_T *p2, const zp_scalar_t *s2, size_t n2,
                                                   void *scratch, zp_pool_t *pool, const zp_msm_opts_t *opts)
{
    const size_t n = n1 + n2;
    if (n1 && n2 && n > MSM_NAIVE_MAX && n <= MSM_CHUNK && S(dim)(opts, n, s1, s2, n1, zp_pool_size(pool), NULL) > 1) {
        S(multi2)(out, &p1, 1, s1, n, scratch, pool, opts, p2, s2, n1);
        return;
    }
    /* one array empty, tiny or beyond a chunk, or no split (the plain MSM reads the scalars
     * in place, so they would have to be contiguous): the two MSMs, added */
    P_T t;
    MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi_ex)(out, &p1, 1, s1, n1, scratch, pool, opts);
    MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi_ex)(&t, &p2, 1, s2, n2, scratch, pool, opts);
    EC(add)(out, out, &t);
}

void MSM_CAT3(zp_msm_, MSM_G, MSM_CAT3(_, MSM_C, ))(P_T *out, const PA_T *points,
                                                      const zp_scalar_t *scalars, size_t n,
                                                      void *scratch, zp_pool_t *pool)
{
    MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _multi_ex)(out, &points, 1, scalars, n, scratch, pool, NULL);
}

#endif /* MSM_IMPL_INTERNAL: public entry points */

#ifndef MSM_IMPL_INTERNAL
#undef P_T
#undef PA_T
#undef FE_T
#undef EC
#undef ECA
#undef S
#undef F
#undef FB_T
#undef FBF
#undef MSM_GLS
#undef MSM_DIM_MAX
#undef MSM_GLS_MIN_N
#endif
