/* ntt_vec.h - the NTT's butterflies on AVX-512 IFMA: eight butterflies per instruction, in
 * 52-bit limbs. Curve-independent helpers (this part, once) and, included again by
 * ntt_impl.h per curve with NTT_VEC_PER_CURVE, the vector jobs. x86-64 with GCC or clang only
 * (NTT_VEC 1); elsewhere NTT_VEC is 0 and the scalar jobs run.
 *
 * Why (session 17, issue 31): the six transforms of a proof were ~10% of its time at 2^16 and
 * 2^18 on two cores, every butterfly one scalar Montgomery product (~20 ns with its loads).
 *
 * Representation (as lib/msm/msm_vec_impl.h): an element's four 64-bit words (Montgomery, R =
 * 2^256) are held as five 52-bit limbs in eight lanes; a product computes a b' / 2^260 with
 * b' = 2^4 b, i.e. the library's a b / R, so only the twiddle (the second factor) is read
 * "shifted" - a change of radix, no conversion of the domain. Both curves' Fr are four words
 * (r < 2^255). Bounds: inputs are fully reduced (< r, the NTT's invariant), a product of two
 * such values is < r^2 / R + r < 2r, one conditional subtraction brings it below r; the sum
 * and the difference (+ r) are < 2r, likewise. So every output is fully reduced and equal,
 * word for word, to the scalar path's (tests/test_ntt.c compares them).
 * Lanes: eight elements are read as four 512-bit rows (elements 2i, 2i + 1 in row i) and
 * transposed to four word vectors; the lane order this gives is the same for data and
 * twiddles, and the store inverts it. */
#ifndef NTT_VEC_PER_CURVE
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NTT_VEC 1
#include <immintrin.h>

#include "lib/util/avx512_tr.h"
#define NV_T __attribute__((target("avx512f,avx512ifma,avx512vl,avx512dq,avx512bw")))
#define NV_I NV_T __attribute__((always_inline)) static inline
#define NV_M52 0xfffffffffffffULL

typedef struct { __m512i l[5]; } nv_e;
typedef struct { uint64_t p[5], pinv; } nv_k;   /* r in limbs, -r^-1 mod 2^52 */

static void nv_k_init(nv_k *k, const uint64_t *p)
{
    for (int i = 0; i < 5; i++) {
        int lo = 52 * i;
        unsigned __int128 t = p[lo / 64] >> (lo % 64);
        if (lo % 64 > 12 && lo / 64 + 1 < 4) t |= (unsigned __int128)p[lo / 64 + 1] << (64 - lo % 64);
        k->p[i] = (uint64_t)t & NV_M52;
    }
    uint64_t inv = 1;
    for (int i = 0; i < 6; i++) inv *= 2 - p[0] * inv;
    k->pinv = (0 - inv) & NV_M52;
}

/* limbs of 2^s v (s = 0 or 4), v the lanes' words */
NV_I void nv_from_words(nv_e *r, const __m512i *w, unsigned s)
{
    const __m512i m52 = _mm512_set1_epi64((long long)NV_M52);
#pragma GCC unroll 8
    for (int i = 0; i < 5; i++) {
        int lo = 52 * i - (int)s;
        __m512i t;
        if (lo < 0) {
            t = _mm512_slli_epi64(w[0], (unsigned)-lo);
        } else {
            t = _mm512_srli_epi64(w[lo / 64], (unsigned)(lo % 64));
            if (lo % 64 > 12 && lo / 64 + 1 < 4)
                t = _mm512_or_si512(t, _mm512_slli_epi64(w[lo / 64 + 1], (unsigned)(64 - lo % 64)));
        }
        r->l[i] = _mm512_and_si512(t, m52);
    }
}

NV_I void nv_to_words(__m512i *w, const nv_e *a)
{
#pragma GCC unroll 8
    for (int k = 0; k < 4; k++) {
        __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int i = 0; i < 5; i++) {
            int lo = 52 * i - 64 * k;
            if (lo <= -52 || lo >= 64) continue;
            t = _mm512_or_si512(t, lo < 0 ? _mm512_srli_epi64(a->l[i], (unsigned)-lo) : _mm512_slli_epi64(a->l[i], (unsigned)lo));
        }
        w[k] = t;
    }
}

/* eight elements: at x[0..8) (contiguous), or at t, t + st, ..., t + 7 st (element strides,
 * possibly negative) */
NV_I void nv_load(nv_e *r, const void *x, unsigned s)
{
    __m512i z[4], w[4];
    for (int i = 0; i < 4; i++) z[i] = _mm512_loadu_si512((const uint8_t *)x + 64 * i);
    zp_tr48_in(w, z);   /* rows z[i] = elements 2i, 2i+1 (lib/util/avx512_tr.h) */
    nv_from_words(r, w, s);
}

NV_I void nv_load_strided(nv_e *r, const void *t, ptrdiff_t st, unsigned s)
{
    __m512i z[4], w[4];
    const uint8_t *b = t;
    for (int i = 0; i < 4; i++)
        z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(b + 2 * i * 32 * st))),
                                  _mm256_loadu_si256((const __m256i *)(const void *)(b + (2 * i + 1) * 32 * st)), 1);
    zp_tr48_in(w, z);   /* rows z[i] = elements 2i, 2i+1 (lib/util/avx512_tr.h) */
    nv_from_words(r, w, s);
}

NV_I void nv_store(void *x, const nv_e *a)
{
    __m512i z[4], w[4];
    nv_to_words(w, a);
    zp_tr48_out(z, w);
    for (int i = 0; i < 4; i++) _mm512_storeu_si512((uint8_t *)x + 64 * i, z[i]);
}

/* r = a - p where a >= p, else a (a normalised, < 2p) */
NV_I void nv_csub(nv_e *r, const nv_e *a, const nv_k *k)
{
    const __m512i m52 = _mm512_set1_epi64((long long)NV_M52);
    __m512i t[5], br = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < 5; i++) {
        __m512i d = _mm512_add_epi64(_mm512_sub_epi64(a->l[i], _mm512_set1_epi64((long long)k->p[i])), br);
        br = _mm512_srai_epi64(d, 52);
        t[i] = _mm512_and_si512(d, m52);
    }
    __mmask8 ge = _mm512_cmpeq_epi64_mask(br, _mm512_setzero_si512());
#pragma GCC unroll 8
    for (int i = 0; i < 5; i++) r->l[i] = _mm512_mask_blend_epi64(ge, a->l[i], t[i]);
}

/* s = a + b mod p, d = a - b mod p (a, b < p) */
NV_I void nv_addsub(nv_e *s, nv_e *d, const nv_e *a, const nv_e *b, const nv_k *k)
{
    const __m512i m52 = _mm512_set1_epi64((long long)NV_M52);
    __m512i cs = _mm512_setzero_si512(), cd = _mm512_setzero_si512();
    nv_e ts, td;
#pragma GCC unroll 8
    for (int i = 0; i < 5; i++) {
        __m512i u = _mm512_add_epi64(_mm512_add_epi64(a->l[i], b->l[i]), cs);
        cs = _mm512_srli_epi64(u, 52);
        ts.l[i] = _mm512_and_si512(u, m52);
        __m512i v = _mm512_add_epi64(_mm512_sub_epi64(_mm512_add_epi64(a->l[i], _mm512_set1_epi64((long long)k->p[i])), b->l[i]), cd);
        cd = _mm512_srai_epi64(v, 52);
        td.l[i] = _mm512_and_si512(v, m52);
    }
    nv_csub(s, &ts, k);
    nv_csub(d, &td, k);
}

/* r = a bs / 2^260 = a b / R for bs = 2^4 b (Montgomery, operand scanning), then below p */
NV_I void nv_mul(nv_e *r, const nv_e *a, const nv_e *bs, const nv_k *k)
{
    const __m512i m52 = _mm512_set1_epi64((long long)NV_M52), z = _mm512_setzero_si512(),
                  pinv = _mm512_set1_epi64((long long)k->pinv);
    __m512i t[6];
#pragma GCC unroll 8
    for (int j = 0; j <= 5; j++) t[j] = z;
#pragma GCC unroll 8
    for (int i = 0; i < 5; i++) {
        __m512i bi = bs->l[i];
#pragma GCC unroll 8
        for (int j = 0; j < 5; j++) t[j] = _mm512_madd52lo_epu64(t[j], a->l[j], bi);
#pragma GCC unroll 8
        for (int j = 0; j < 5; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->l[j], bi);
        __m512i q = _mm512_madd52lo_epu64(z, t[0], pinv);   /* < 2^52 already (0 + the low half) */
#pragma GCC unroll 8
        for (int j = 0; j < 5; j++) t[j] = _mm512_madd52lo_epu64(t[j], q, _mm512_set1_epi64((long long)k->p[j]));
#pragma GCC unroll 8
        for (int j = 0; j < 5; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], q, _mm512_set1_epi64((long long)k->p[j]));
        t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
#pragma GCC unroll 8
        for (int j = 0; j < 5; j++) t[j] = t[j + 1];
        t[5] = z;
    }
    nv_e u;
#pragma GCC unroll 8
    for (int j = 0; j + 1 < 5; j++) {
        t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64(t[j], 52));
        t[j] = _mm512_and_si512(t[j], m52);
    }
#pragma GCC unroll 8
    for (int j = 0; j < 5; j++) u.l[j] = t[j];
    nv_csub(r, &u, k);
}

/* eight butterflies at a[0..8), b[0..8) with the twiddles ts (shifted): a' = a + b t,
 * b' = a - b t; inv: swapped (the mirrored-twiddle butterfly of ntt_impl.h) */
NV_I void nv_bfly(void *a, void *b, const nv_e *ts, bool inv, const nv_k *k)
{
    nv_e x, y, v, s, d;
    nv_load(&x, a, 0);
    nv_load(&y, b, 0);
    nv_mul(&v, &y, ts, k);
    nv_addsub(&s, &d, &x, &v, k);
    nv_store(a, inv ? &d : &s);
    nv_store(b, inv ? &s : &d);
}

/* x[0..8) *= c (cs: c shifted) */
NV_I void nv_scale(void *x, const nv_e *cs, const nv_k *k)
{
    nv_e a;
    nv_load(&a, x, 0);
    nv_mul(&a, &a, cs, k);
    nv_store(x, &a);
}

NV_I void nv_bcast_shifted(nv_e *r, const void *c)
{
    __m512i w[4];
    const uint64_t *cw = c;
    for (int i = 0; i < 4; i++) w[i] = _mm512_set1_epi64((long long)cw[i]);
    nv_from_words(r, w, 4);
}

/* r = 2^4 a (a < 2^256): the form a product's second factor takes */
NV_I void nv_shift(nv_e *r, const nv_e *a)
{
    const __m512i m52 = _mm512_set1_epi64((long long)NV_M52);
    __m512i prev = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < 5; i++) {
        __m512i cur = a->l[i];
        r->l[i] = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi64(cur, 4), m52), _mm512_srli_epi64(prev, 48));
        prev = cur;
    }
}

static bool nv_cpu(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw");
}
#else
#define NTT_VEC 0
#endif

#else /* ---- NTT_VEC_PER_CURVE: the vector jobs of one curve (inside ntt_impl.h) ---- */
#if NTT_VEC
static nv_k SN(vk);

__attribute__((constructor)) static void SN(vk_init)(void) { nv_k_init(&SN(vk), FN(modulus).l); }

/* phase 1 as SN(block_run): stages with half-span >= 8 eight butterflies at a time (q outer,
 * so that a twiddle vector serves every group of the block) */
NV_T static void SN(block_run_v)(const SN(job_t) *j, unsigned tid, unsigned nt, bool inv)
{
    const nv_k *k = &SN(vk);
    size_t B = (size_t)1 << j->blk, nb = j->n >> j->blk, lo, hi;
    size_t th = ((size_t)1 << j->tw_log) / 2;
    const FT *tw = j->tw;
    nv_e ninv;
    nv_bcast_shifted(&ninv, &j->d->n_inv);
    zp_split(nb, tid, nt, &lo, &hi);
    for (size_t blk = lo; blk < hi; blk++) {
        FT *y = j->x + blk * B;
        if (inv) {
            size_t i = 0;
            for (; i + 8 <= B; i += 8) nv_scale(&y[i], &ninv, k);
            for (; i < B; i++) FN(mul_inl)(&y[i], &y[i], &j->d->n_inv);
        }
        if (B < 2) continue;
        for (size_t i = 0; i < B; i += 2) SN(bfly1)(&y[i], &y[i + 1]);
        for (size_t h = 2; h < B; h <<= 1) {
            size_t step = th / h;
            if (h >= 8) {
                for (size_t q = 0; q < h; q += 8) {
                    nv_e t;
                    if (inv) nv_load_strided(&t, &tw[th - q * step], -(ptrdiff_t)step, 4);
                    else nv_load_strided(&t, &tw[q * step], (ptrdiff_t)step, 4);
                    for (size_t g = 0; g < B; g += 2 * h) nv_bfly(y + g + q, y + g + h + q, &t, inv, k);
                }
                continue;
            }
            SN(block_stage)(y, B, h, tw, th, inv);
        }
    }
}

NV_T static void SN(block_job_v)(void *arg, unsigned tid, unsigned nt)
{
    const SN(job_t) *j = arg;
    if (j->inv) SN(block_run_v)(j, tid, nt, true);
    else SN(block_run_v)(j, tid, nt, false);
}

/* phase 2's tile pass as SN(tile_pass), eight columns at a time (W a multiple of 8: SN(run)
 * checks) */
NV_T static void SN(tile_pass_v)(const SN(job_t) *j, FT *tile, size_t c0, bool inv)
{
    const nv_k *k = &SN(vk);
    unsigned L = j->d->log_n, m0l = j->m0_log, K = j->k;
    size_t W = j->w, rows = (size_t)1 << K, half = j->n / 2;
    const FT *roots = j->roots;
    for (unsigned s = 0; s < K; s++) {
        size_t hs = (size_t)1 << s;
        unsigned sl = L - (m0l + s + 1);
        ptrdiff_t st = (ptrdiff_t)1 << sl;
        for (size_t u = 0; u < hs; u++)
            for (size_t cc = 0; cc < W; cc += 8) {
                size_t e = (c0 + cc + (u << m0l)) << sl;
                nv_e t;
                if (inv) nv_load_strided(&t, &roots[half - e], -st, 4);
                else nv_load_strided(&t, &roots[e], st, 4);
                for (size_t tt = u; tt < rows; tt += 2 * hs) {
                    FT *a = &tile[tt * W + cc];
                    nv_bfly(a, a + hs * W, &t, inv, k);
                }
            }
    }
}

/* x[k] *= g^k for k in [lo, hi) (SN(pow_job) with mul, eight at a time): the lanes hold
 * g^k..g^(k+7), multiplied by g^8 per block; the tail by the scalar loop */
NV_T static void SN(pow_mul_v)(FT *x, const FT *g, size_t lo, size_t hi)
{
    const nv_k *k = &SN(vk);
    uint64_t e = lo;
    FT pw[8], g8;
    FN(pow)(&pw[0], g, &e, 1);
    for (int i = 1; i < 8; i++) FN(mul_inl)(&pw[i], &pw[i - 1], g);
    uint64_t e8 = 8;
    FN(pow)(&g8, g, &e8, 1);
    nv_e p, ps, g8s;
    nv_load(&p, pw, 0);
    nv_bcast_shifted(&g8s, &g8);
    size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        nv_shift(&ps, &p);
        nv_scale(&x[i], &ps, k);
        nv_mul(&p, &p, &g8s, k);
    }
    if (i < hi) {                                /* p holds g^i..g^(i+7) */
        FT rest[8];
        nv_store(rest, &p);
        for (size_t j = 0; i + j < hi; j++) FN(mul_inl)(&x[i + j], &x[i + j], &rest[j]);
    }
}

NV_T static void SN(col_job_v)(void *arg, unsigned tid, unsigned nt)
{
    const SN(job_t) *j = arg;
    SN(col_run)(j, tid, nt, j->inv, SN(tile_pass_v));
}
#endif
#endif
