/* ntt_impl.h - TEMPLATE (no include guard): the NTT of ntt.h for one curve's Fr.
 * Included by ntt.c once per curve with NTT_C set to the curve name (bn254, bls12_381).
 *
 * Schedule of a transform of n = 2^L (natural order in and out, Cooley-Tukey DIT):
 *   1. bit-reversal permutation, done on pairs of 16x16 tiles so that both sides of every
 *      swap are cache-line friendly;
 *   2. phase 1: radix-2 stages with half-span 1 .. B/2 inside contiguous blocks of B = 2^blk_log
 *      elements (a block and the compact twiddle table tw[] stay in L2);
 *   3. phase 2: the remaining stages (half-span B .. n/2) in column passes: each task copies a
 *      tile of 2^k rows (stride = first half-span of the pass) x W contiguous elements to the
 *      stack, runs k stages there and copies it back. A copy avoids the cache-set conflicts of
 *      power-of-two strides; each pass is one streaming read and write of the array.
 * Out of place (forward_from / inverse_from): step 1 reads the source and writes the
 * destination (dst[i] = src[rev(i)], the same tiles), the later steps work on the destination:
 * the copy costs nothing beyond the pass that was there anyway, and the source is never written.
 * Threads split bit-reversal tiles, blocks and column tiles; each step is one zp_pool_run, so
 * the pool's join is the barrier. Results do not depend on the thread count (same operations
 * on the same elements in the same order, only distributed differently).
 * Inverse: the same schedule with mirrored twiddles. A table t of h+1 powers of a primitive
 * 2h-th root r (t[k] = r^k, k <= h, t[h] = -1) also gives r^-k = r^(2h-k) = -r^(h-k) = -t[h-k]
 * for every 0 <= k < h, so the inverse butterfly reads t[h-k] and swaps its add and sub
 * (ibfly: a' = a - b t, b' = a + b t); no w^-1 tables exist and the cost is the same.
 * Invariants: elements are Montgomery form and fully reduced (ff_inline.h); roots[k] = w^k
 * (k <= n/2, roots[n/2] = -1), tw[q] = roots[q n/2^blk_log] (q <= 2^(blk_log-1)). */

#define FT NTT_XCAT3(zp_fr_, NTT_C, _t)
#define FN(x) NTT_XCAT3(zp_fr_, NTT_C, _##x)
#define NN(x) NTT_XCAT3(zp_ntt_, NTT_C, _##x)
#define DT NTT_XCAT3(zp_ntt_, NTT_C, _domain_t)
#define SN(x) NTT_XCAT3(ntt_, NTT_C, _##x)

typedef struct {
    const DT *d;
    FT *x;
    const FT *src;    /* out of place: the bit reversal reads here and writes x (NULL: in place) */
    size_t n;
    const FT *roots;  /* n/2 + 1 powers of w */
    const FT *tw;     /* phase-1 twiddles: 2^(tw_log-1) + 1 powers of the block's root */
    bool inv;         /* mirrored twiddles (ibfly), 1/n scaling */
    unsigned blk;     /* effective block log <= tw_log */
    unsigned tw_log;  /* tw[] holds powers of a primitive 2^tw_log-th root */
    unsigned m0_log;  /* phase 2: log2 of the first half-span of this pass */
    unsigned k;       /* phase 2: stages in this pass */
    unsigned w;       /* phase 2: tile columns */
    const FT *g;      /* coset / powers: generator */
} SN(job_t);

static inline void SN(bfly)(FT *a, FT *b, const FT *t)
{
    FT v;
    FN(mul_inl)(&v, b, t);
    FN(sub_inl)(b, a, &v);
    FN(add_inl)(a, a, &v);
}

/* butterfly with the twiddle -t: a' = a - b t, b' = a + b t */
static inline void SN(ibfly)(FT *a, FT *b, const FT *t)
{
    FT v;
    FN(mul_inl)(&v, b, t);
    FN(add_inl)(b, a, &v);
    FN(sub_inl)(a, a, &v);
}

static inline void SN(bfly1)(FT *a, FT *b)
{
    FT v = *b;
    FN(sub_inl)(b, a, &v);
    FN(add_inl)(a, a, &v);
}

/* ---- bit reversal ---- */
/* out of place: x[i] = src[rev(i)] for every i (the same tiles, each read and written once) */
static void SN(bitrev_from_job)(void *arg, unsigned tid, unsigned nt)
{
    const SN(job_t) *j = arg;
    FT *x = j->x;
    const FT *src = j->src;
    unsigned L = j->d->log_n;
    if (L < 2 * NTT_RB + 1) {
        size_t lo, hi;
        zp_split(j->n, tid, nt, &lo, &hi);
        for (size_t i = lo; i < hi; i++) x[i] = src[ntt_rev(i, L)];
        return;
    }
    unsigned M = L - 2 * NTT_RB;
    size_t nbm = (size_t)1 << M, R = (size_t)1 << NTT_RB;
    for (size_t b = tid; b < nbm; b += nt) {
        size_t rb = ntt_rev(b, M);
        for (size_t a = 0; a < R; a++) {
            size_t ra = ntt_rev(a, NTT_RB);
            for (size_t c = 0; c < R; c++) {
                size_t i = (a << (M + NTT_RB)) | (b << NTT_RB) | c;
                x[i] = src[(ntt_rev(c, NTT_RB) << (M + NTT_RB)) | (rb << NTT_RB) | ra];
            }
        }
    }
}

static void SN(bitrev_job)(void *arg, unsigned tid, unsigned nt)
{
    const SN(job_t) *j = arg;
    FT *x = j->x;
    unsigned L = j->d->log_n;
    if (L < 2 * NTT_RB + 1) {
        size_t lo, hi;
        zp_split(j->n, tid, nt, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            size_t r = ntt_rev(i, L);
            if (i < r) { FT t = x[i]; x[i] = x[r]; x[r] = t; }
        }
        return;
    }
    unsigned M = L - 2 * NTT_RB;
    size_t nbm = (size_t)1 << M, R = (size_t)1 << NTT_RB;
    for (size_t b = tid; b < nbm; b += nt) {
        size_t rb = ntt_rev(b, M);
        if (rb < b) continue;
        for (size_t a = 0; a < R; a++) {
            size_t ra = ntt_rev(a, NTT_RB);
            for (size_t c = 0; c < R; c++) {
                size_t i = (a << (M + NTT_RB)) | (b << NTT_RB) | c;
                size_t r = (ntt_rev(c, NTT_RB) << (M + NTT_RB)) | (rb << NTT_RB) | ra;
                if (b < rb || i < r) { FT t = x[i]; x[i] = x[r]; x[r] = t; }
            }
        }
    }
}

/* ---- phase 1: the first blk stages inside contiguous blocks ---- */
/* one radix-2 stage of half-span h over the block y[0..B) (twiddles tw[q * th / h], mirrored
 * for the inverse) */
static inline __attribute__((always_inline)) void SN(block_stage)(FT *y, size_t B, size_t h, const FT *tw,
                                                                  size_t th, bool inv)
{
    size_t step = th / h;
    for (size_t g = 0; g < B; g += 2 * h) {
        FT *a = y + g, *b = y + g + h;
        SN(bfly1)(&a[0], &b[0]);
        if (inv)
            for (size_t q = 1; q < h; q++) SN(ibfly)(&a[q], &b[q], &tw[th - q * step]);
        else
            for (size_t q = 1; q < h; q++) SN(bfly)(&a[q], &b[q], &tw[q * step]);
    }
}

/* inv is a constant at both call sites, so each direction gets its own loop */
static inline __attribute__((always_inline)) void SN(block_run)(const SN(job_t) *j, unsigned tid,
                                                                unsigned nt, bool inv)
{
    size_t B = (size_t)1 << j->blk, nb = j->n >> j->blk, lo, hi;
    size_t th = ((size_t)1 << j->tw_log) / 2; /* tw[th] = -1 */
    const FT *tw = j->tw;
    zp_split(nb, tid, nt, &lo, &hi);
    for (size_t blk = lo; blk < hi; blk++) {
        FT *y = j->x + blk * B;
        if (inv)
            for (size_t i = 0; i < B; i++) FN(mul_inl)(&y[i], &y[i], &j->d->n_inv);
        if (B < 2) continue;
        for (size_t i = 0; i < B; i += 2) SN(bfly1)(&y[i], &y[i + 1]);
        for (size_t h = 2; h < B; h <<= 1) SN(block_stage)(y, B, h, tw, th, inv);
    }
}

static void SN(block_job)(void *arg, unsigned tid, unsigned nt)
{
    const SN(job_t) *j = arg;
    if (j->inv) SN(block_run)(j, tid, nt, true);
    else SN(block_run)(j, tid, nt, false);
}

/* ---- phase 2: k stages (half-spans 2^m0_log .. 2^(m0_log+k-1)) in stack tiles ---- */
/* the pass's k stages on one tile (2^k rows x W columns, columns c0.. of the array) */
typedef void (*SN(tile_fn))(const SN(job_t) *j, FT *tile, size_t c0, bool inv);

static void SN(tile_pass)(const SN(job_t) *j, FT *tile, size_t c0, bool inv)
{
    unsigned L = j->d->log_n, m0l = j->m0_log, K = j->k;
    size_t W = j->w, rows = (size_t)1 << K, half = j->n / 2; /* roots[half] = -1 */
    const FT *roots = j->roots;
    for (unsigned s = 0; s < K; s++) {
        size_t hs = (size_t)1 << s;
        unsigned sl = L - (m0l + s + 1);  /* twiddle index stride n/(2m), m = m0 2^s */
        for (size_t u = 0; u < hs; u++)
            for (size_t cc = 0; cc < W; cc++) {
                size_t e = (c0 + cc + (u << m0l)) << sl;
                if (inv) {
                    const FT *t = &roots[half - e];
                    for (size_t tt = u; tt < rows; tt += 2 * hs) {
                        FT *a = &tile[tt * W + cc];
                        SN(ibfly)(a, a + hs * W, t);
                    }
                } else {
                    const FT *t = &roots[e];
                    for (size_t tt = u; tt < rows; tt += 2 * hs) {
                        FT *a = &tile[tt * W + cc];
                        SN(bfly)(a, a + hs * W, t);
                    }
                }
            }
    }
}

/* the pass's tiles split over the threads: each copied to the stack, pass() run on it, copied
 * back (the scalar and the vector jobs differ only in pass) */
static inline __attribute__((always_inline)) void SN(col_run)(const SN(job_t) *j, unsigned tid, unsigned nt,
                                                              bool inv, SN(tile_fn) pass)
{
    FT tile[(size_t)1 << ZP_NTT_TILE_LOG];
    unsigned m0l = j->m0_log, K = j->k;
    size_t W = j->w, rows = (size_t)1 << K, m0 = (size_t)1 << m0l;
    size_t chunks = m0 / W, nbases = j->n >> (m0l + K), lo, hi;
    zp_split(nbases * chunks, tid, nt, &lo, &hi);
    for (size_t task = lo; task < hi; task++) {
        size_t bi = task / chunks, c0 = (task % chunks) * W;
        FT *src = j->x + (bi << (m0l + K)) + c0;
        for (size_t t = 0; t < rows; t++) memcpy(tile + t * W, src + (t << m0l), W * sizeof(FT));
        pass(j, tile, c0, inv);
        for (size_t t = 0; t < rows; t++) memcpy(src + (t << m0l), tile + t * W, W * sizeof(FT));
    }
}

static void SN(col_job)(void *arg, unsigned tid, unsigned nt)
{
    const SN(job_t) *j = arg;
    SN(col_run)(j, tid, nt, j->inv, SN(tile_pass));
}

#define NTT_VEC_PER_CURVE
#include "lib/ntt/ntt_vec.h"
#undef NTT_VEC_PER_CURVE

/* src NULL or x: in place; else src is read by the bit reversal (its first pass) only */
static void SN(run)(const DT *d, FT *x, const FT *src, zp_pool_t *pool, bool inv)
{
    unsigned L = d->log_n;
    if (src == x) src = NULL;
    if (L == 0) { /* n = 1: identity (and 1/n = 1) */
        if (src) x[0] = src[0];
        return;
    }
    if (L < ZP_NTT_PAR_MIN_LOG) pool = NULL;
    SN(job_t) j = {.d = d, .x = x, .src = src, .n = d->n, .inv = inv};
    j.roots = d->roots;
    j.tw_log = d->tw ? d->blk_log : L;
    j.tw = d->tw ? d->tw : d->roots;
    /* blocks no larger than the table's, and at least one block per thread when n allows */
    j.blk = d->blk_log < L ? d->blk_log : L;
    unsigned nt = zp_pool_size(pool);
    while (j.blk > 1 && (d->n >> j.blk) < nt) j.blk--;
    zp_pool_run(pool, src ? SN(bitrev_from_job) : SN(bitrev_job), &j);
    bool vec = false;
#if NTT_VEC
    vec = ntt_vec_on();
#endif
    void (*block_job)(void *, unsigned, unsigned) = SN(block_job), (*col_job)(void *, unsigned, unsigned) = SN(col_job);
#if NTT_VEC
    if (vec) block_job = SN(block_job_v);
#endif
    zp_pool_run(pool, block_job, &j);
    unsigned left = L - j.blk, cur = j.blk;
    if (!left) return;
    unsigned passes = (left + d->tile_k - 1) / d->tile_k;
    j.w = ZP_NTT_TILE_W;
    if (j.w > ((size_t)1 << j.blk)) j.w = 1u << j.blk;
#if NTT_VEC
    if (vec && j.w % 8 == 0) col_job = SN(col_job_v);
#endif
    for (unsigned p = 0; p < passes; p++) {
        unsigned k = (left + (passes - p) - 1) / (passes - p);
        j.m0_log = cur;
        j.k = k;
        zp_pool_run(pool, col_job, &j);
        cur += k;
        left -= k;
    }
}

void NN(forward)(const DT *d, FT *x, zp_pool_t *pool) { SN(run)(d, x, NULL, pool, false); }

void NN(inverse)(const DT *d, FT *x, zp_pool_t *pool) { SN(run)(d, x, NULL, pool, true); }

void NN(forward_from)(const DT *d, FT *dst, const FT *src, zp_pool_t *pool) { SN(run)(d, dst, src, pool, false); }

void NN(inverse_from)(const DT *d, FT *dst, const FT *src, zp_pool_t *pool) { SN(run)(d, dst, src, pool, true); }

/* x[k] *= g^k (mul = true) or x[k] = g^k (mul = false), split over threads */
typedef struct { FT *x; size_t n; const FT *g; bool mul, vec; } SN(pow_job_t);

static void SN(pow_job)(void *arg, unsigned tid, unsigned nt)
{
    const SN(pow_job_t) *j = arg;
    size_t lo, hi;
    zp_split(j->n, tid, nt, &lo, &hi);
    if (lo >= hi) return;
#if NTT_VEC
    if (j->mul && j->vec) {
        SN(pow_mul_v)(j->x, j->g, lo, hi);
        return;
    }
#endif
    uint64_t e = lo;
    FT cur;
    FN(pow)(&cur, j->g, &e, 1);
    for (size_t k = lo; k < hi; k++) {
        if (j->mul) FN(mul_inl)(&j->x[k], &j->x[k], &cur);
        else j->x[k] = cur;
        if (k + 1 < hi) FN(mul_inl)(&cur, &cur, j->g);
    }
}

void NN(coset_shift)(FT *x, size_t n, const FT *g, zp_pool_t *pool)
{
    SN(pow_job_t) j = {x, n, g, true, false};
#if NTT_VEC
    j.vec = ntt_vec_on();
#endif
    zp_pool_run(n < ((size_t)1 << ZP_NTT_PAR_MIN_LOG) ? NULL : pool, SN(pow_job), &j);
}

void NN(domain_close)(DT *d)
{
    if (!d) return;
    free(d->roots);
    free(d->tw);
    memset(d, 0, sizeof *d);
}

static int SN(domain_init_w)(DT *d, unsigned log_n, zp_pool_t *pool, unsigned blk_log, unsigned tile_k,
                             const FT *w)
{
    memset(d, 0, sizeof *d);
    if (log_n > NTT_TWO_ADICITY)
        return zp_err_set(ZP_ETOOBIG, "ntt: domain 2^%u exceeds the 2-adicity 2^%u of Fr",
                          log_n, (unsigned)NTT_TWO_ADICITY);
    if (blk_log < 1 || tile_k < 1 || ((size_t)ZP_NTT_TILE_W << tile_k) > ((size_t)1 << ZP_NTT_TILE_LOG))
        return zp_err_set(-EINVAL, "ntt: bad schedule blk_log=%u tile_k=%u", blk_log, tile_k);
    d->log_n = log_n;
    d->n = (size_t)1 << log_n;
    d->blk_log = blk_log;
    d->tile_k = tile_k;
    size_t half = d->n / 2;
    if (log_n < ZP_NTT_PAR_MIN_LOG) pool = NULL;
    FN(set_u64)(&d->n_inv, (uint64_t)d->n);
    FN(inv)(&d->n_inv, &d->n_inv);
    if (half == 0) return 0;
    /* n/2 + 1 entries: roots[n/2] = -1 lets the inverse read w^-k = -roots[n/2 - k] */
    d->roots = ntt_alloc((half + 1) * sizeof(FT));
    if (!d->roots) goto out_nomem;
    SN(pow_job_t) pj = {d->roots, half, w ? w : FN(root)(log_n), false, false};
    zp_pool_run(pool, SN(pow_job), &pj);
    FN(neg_inl)(&d->roots[half], &FN(one));
    if (log_n > blk_log) {
        size_t bh = (size_t)1 << (blk_log - 1);
        unsigned sh = log_n - blk_log;
        d->tw = ntt_alloc((bh + 1) * sizeof(FT));
        if (!d->tw) goto out_nomem;
        for (size_t q = 0; q <= bh; q++) d->tw[q] = d->roots[q << sh];
    }
    return 0;
out_nomem:
    NN(domain_close)(d);
    return zp_err_set(-ENOMEM, "ntt: no memory for the root table of a 2^%u domain (%zu bytes)",
                      log_n, (half + 1) * sizeof(FT));
}

int NN(domain_init_tuned)(DT *d, unsigned log_n, zp_pool_t *pool, unsigned blk_log, unsigned tile_k)
{
    return SN(domain_init_w)(d, log_n, pool, blk_log, tile_k, NULL);
}

int NN(domain_init_root)(DT *d, unsigned log_n, zp_pool_t *pool, const FT *w)
{
    return SN(domain_init_w)(d, log_n, pool, ZP_NTT_BLK_LOG, ZP_NTT_TILE_LOG - NTT_LOG2_TILE_W, w);
}

size_t NN(domain_bytes)(const DT *d)
{
    if (!d || !d->roots) return 0;
    size_t b = (d->n / 2 + 1) * sizeof(FT);
    if (d->tw) b += (((size_t)1 << (d->blk_log - 1)) + 1) * sizeof(FT);
    return b;
}

int NN(domain_init_pool)(DT *d, unsigned log_n, zp_pool_t *pool)
{
    return NN(domain_init_tuned)(d, log_n, pool, ZP_NTT_BLK_LOG,
                                 ZP_NTT_TILE_LOG - NTT_LOG2_TILE_W);
}

int NN(domain_init)(DT *d, unsigned log_n) { return NN(domain_init_pool)(d, log_n, NULL); }

#undef FT
#undef FN
#undef NN
#undef DT
#undef SN
