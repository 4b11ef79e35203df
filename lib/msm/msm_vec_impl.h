/* msm_vec_impl.h - the batch of affine bucket additions (S(flush)) of G1 and G2 on AVX-512
 * IFMA: eight additions per instruction, in 52-bit limbs. Included by msm_impl.h for an
 * instantiation whose translation unit defines MSM_VEC_NL (limbs of 52 bits: 5 for BN254, 8
 * for BLS12-381; G2's units also MSM_VEC_NC2); no include guard on purpose. Used for batches of
 * MSM_VEC_MIN..MSM_K_MAX additions where the CPU has AVX512F + AVX512IFMA and msm_vec_on() says
 * so (zp_msm_set_vector, ZP_MSM_VECTOR=0); otherwise S(flush) runs. Results are identical.
 *
 * Why: S(flush)'s work is ~6.7 Fq products per addition (doc/msm.md, fifth session); one scalar
 * BN254 product costs ~12 ns on an Intel Xeon of 2026, eight in one vector product ~11 ns with
 * four independent chains in flight (~37 ns latency).
 *
 * Representation. A value v (Montgomery form, R = 2^(64 W), as the library keeps it) is held
 * as NL limbs of 52 bits in eight lanes, not reduced: a vector product computes
 * a b' / 2^(52 NL) where b' = 2^SH b (SH = 52 NL - 64 W: 4 on BN254, 32 on BLS12-381), i.e.
 * exactly the library's a b / R. So one operand of every product is "shifted" (V(shift), or
 * converted from the 64-bit words at offset SH, which is free), and the results are in the
 * library's own Montgomery domain: a point's words convert in and out by a change of radix only.
 * Bounds (in units of p; a product's result is < a b / R + p): coordinates read are < p;
 * a - b + p < 2p; products of two values < 2p stay < 2p (BN254: p / R ~ 0.19, so the bound
 * holds for a b <= 5 p^2; BLS12-381: 0.10); Fq2 products are schoolbook, 2p off each component
 * where it reached it; x3 and y3 are brought below p before they are stored (the buckets are
 * compared word by word).
 *
 * The batch: lane l of chain c, block k is addition j = (c Q + k) 8 + l (j >= m: a padding
 * lane with denominator 1, never written). Each of the CH chains runs Montgomery's trick on the
 * denominators' norms (G1: d; G2: d0^2 + d1^2, with 1/d = conj(d) / N(d)) down its blocks; the
 * CH * 8 chain products are inverted together in Fq (one inversion). Doubling (x1 == x2,
 * y1 == y2: lambda = 3 x^2 / 2 y) and P + (-P) (the bucket empties) are lanes with their own
 * denominator (2 y, 1) as in S(flush). Bucket indices within a batch are distinct, so the
 * scatters never collide. Tests: tests/test_msm.c (every test on both paths, test_vec_*). */

#include <immintrin.h>

#include "lib/util/avx512_tr.h"

#define MV_T __attribute__((target("avx512f,avx512ifma,avx512vl,avx512dq,avx512bw")))
#define MV_I MV_T __attribute__((always_inline)) static inline
#define MV(n) MSM_CAT5(msmv_, MSM_G, _, MSM_C, _##n)

enum { MV_NL = MSM_VEC_NL, MV_W = sizeof(FB_T) / 8, MV_SH = 52 * MSM_VEC_NL - 64 * (int)(sizeof(FB_T) / 8),
       MV_NC = sizeof(FE_T) / sizeof(FB_T), /* coordinate components: 1 (G1, Fq), 2 (G2, Fq2) */
       MV_CH = 4 };
#define MV_M52 0xfffffffffffffULL

typedef struct { __m512i l[MV_NL]; } MV(e);

/* constants in 52-bit limbs, from the field's own (constructor below) */
static struct {
    uint64_t p[MV_NL], p2[MV_NL], ps[MV_NL], one[MV_NL], ones[MV_NL]; /* p, 2p, 2^SH p, R mod p, 2^SH R mod p */
    uint64_t p4[MV_NL], ps2[MV_NL];                                   /* 4p, 2^SH 2p (session 18) */
    uint64_t pinv;                                                    /* -p^-1 mod 2^52 */
} MV(k);

/* limbs of 2^s w for the words w[0..MV_W) (scalar; constants) */
static void MV(limbs_u64)(uint64_t *r, const uint64_t *w, unsigned s)
{
    for (int i = 0; i < MV_NL; i++) {
        int lo = 52 * i - (int)s;
        unsigned __int128 t = 0;
        if (lo < 0) {
            t = (unsigned __int128)w[0] << -lo;
        } else if (lo / 64 < MV_W) {
            t = w[lo / 64] >> (lo % 64);
            if (lo % 64 > 12 && lo / 64 + 1 < MV_W) t |= (unsigned __int128)w[lo / 64 + 1] << (64 - lo % 64);
        }
        r[i] = (uint64_t)t & MV_M52;
    }
}

__attribute__((constructor)) static void MV(init)(void)
{
    const uint64_t *p = MSM_CAT3(zp_fq_, MSM_C, _modulus).l, *one = MSM_CAT3(zp_fq_, MSM_C, _one).l;
    uint64_t p2[MV_W], c = 0;
    for (int i = 0; i < MV_W; i++) {     /* 2p: fits the words (p < 2^(64 W - 1) on both curves) */
        p2[i] = (p[i] << 1) | c;
        c = p[i] >> 63;
    }
    MV(limbs_u64)(MV(k).p, p, 0);
    MV(limbs_u64)(MV(k).p2, p2, 0);
    MV(limbs_u64)(MV(k).ps, p, MV_SH);
    MV(limbs_u64)(MV(k).p4, p2, 1);          /* 4p < 2^(52 NL) on both curves */
    MV(limbs_u64)(MV(k).ps2, p2, MV_SH);     /* 2^SH 2p < 2^(52 NL): 0.76 (BN254), 0.2 (BLS12-381) of it */
    MV(limbs_u64)(MV(k).one, one, 0);
    MV(limbs_u64)(MV(k).ones, one, MV_SH);
    uint64_t inv = 1;                    /* p^-1 mod 2^64 by Newton's iteration */
    for (int i = 0; i < 6; i++) inv *= 2 - p[0] * inv;
    MV(k).pinv = (0 - inv) & MV_M52;
}

MV_I void MV(bcast)(MV(e) *r, const uint64_t *c)
{
    for (int i = 0; i < MV_NL; i++) r->l[i] = _mm512_set1_epi64((long long)c[i]);
}

/* r = 2^s v, v the eight lanes' words w[0..MV_W) (s = 0 or MV_SH) */
MV_I void MV(from_words)(MV(e) *r, const __m512i *w, unsigned s)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52);
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        int lo = 52 * i - (int)s;
        __m512i t = _mm512_setzero_si512();
        if (lo < 0) {
            t = _mm512_slli_epi64(w[0], (unsigned)-lo);
        } else if (lo / 64 < MV_W) {
            t = _mm512_srli_epi64(w[lo / 64], (unsigned)(lo % 64));
            if (lo % 64 > 12 && lo / 64 + 1 < MV_W)
                t = _mm512_or_si512(t, _mm512_slli_epi64(w[lo / 64 + 1], (unsigned)(64 - lo % 64)));
        }
        r->l[i] = _mm512_and_si512(t, m52);
    }
}

/* the words of a (normalised limbs, a < 2^(64 W)) */
MV_I void MV(to_words)(__m512i *w, const MV(e) *a)
{
#pragma GCC unroll 16
    for (int k = 0; k < MV_W; k++) {
        __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int i = 0; i < MV_NL; i++) {
            int lo = 52 * i - 64 * k;
            if (lo <= -52 || lo >= 64) continue;
            t = _mm512_or_si512(t, lo < 0 ? _mm512_srli_epi64(a->l[i], (unsigned)-lo)
                                          : _mm512_slli_epi64(a->l[i], (unsigned)lo));
        }
        w[k] = t;
    }
}

/* r = a - b + c (c a multiple of p, a - b + c >= 0), normalised; a NULL: 0 - b + c */
MV_I void MV(sub)(MV(e) *r, const MV(e) *a, const MV(e) *b, const uint64_t *c)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52);
    __m512i cy = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i t = _mm512_add_epi64(_mm512_set1_epi64((long long)c[i]), cy);
        if (a) t = _mm512_add_epi64(t, a->l[i]);
        t = _mm512_sub_epi64(t, b->l[i]);
        cy = _mm512_srai_epi64(t, 52);
        r->l[i] = _mm512_and_si512(t, m52);
    }
}

/* r = a + b, normalised */
MV_I void MV(add)(MV(e) *r, const MV(e) *a, const MV(e) *b)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52);
    __m512i cy = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i t = _mm512_add_epi64(_mm512_add_epi64(a->l[i], b->l[i]), cy);
        cy = _mm512_srli_epi64(t, 52);
        r->l[i] = _mm512_and_si512(t, m52);
    }
}

/* r = a - c where a >= c, else a (c: p or 2p) */
MV_I void MV(csub)(MV(e) *r, const MV(e) *a, const uint64_t *c)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52);
    __m512i t[MV_NL], br = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i d = _mm512_add_epi64(_mm512_sub_epi64(a->l[i], _mm512_set1_epi64((long long)c[i])), br);
        br = _mm512_srai_epi64(d, 52);
        t[i] = _mm512_and_si512(d, m52);
    }
    __mmask8 ge = _mm512_cmpeq_epi64_mask(br, _mm512_setzero_si512());
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) r->l[i] = _mm512_mask_blend_epi64(ge, a->l[i], t[i]);
}

/* r = 2^sh a (sh < 52, 2^sh a < 2^(52 NL)) */
MV_I void MV(shl)(MV(e) *r, const MV(e) *a, unsigned sh)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52);
    __m512i prev = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i cur = a->l[i];
        r->l[i] = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi64(cur, sh), m52),
                                  _mm512_srli_epi64(prev, 52 - sh));
        prev = cur;
    }
}

/* r = 2^SH a (a < 2^(64 W)): the operand form a product wants for its second factor */
MV_I void MV(shift)(MV(e) *r, const MV(e) *a)
{
    MV(shl)(r, a, MV_SH);
}

/* r = a bs / 2^(52 NL) = a b / R for bs = 2^SH b (Montgomery, operand scanning) */
MV_I void MV(mul)(MV(e) *r, const MV(e) *a, const MV(e) *bs)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52), z = _mm512_setzero_si512(),
                  pinv = _mm512_set1_epi64((long long)MV(k).pinv);
    __m512i t[MV_NL + 1];
#pragma GCC unroll 16
    for (int j = 0; j <= MV_NL; j++) t[j] = z;
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i bi = bs->l[i];
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++) t[j] = _mm512_madd52lo_epu64(t[j], a->l[j], bi);
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->l[j], bi);
        __m512i q = _mm512_madd52lo_epu64(z, t[0], pinv);   /* < 2^52 already (0 + the low half) */
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++)
            t[j] = _mm512_madd52lo_epu64(t[j], q, _mm512_set1_epi64((long long)MV(k).p[j]));
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++)
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], q, _mm512_set1_epi64((long long)MV(k).p[j]));
        t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++) t[j] = t[j + 1];
        t[MV_NL] = z;
    }
#pragma GCC unroll 16
    for (int j = 0; j + 1 < MV_NL; j++) {
        t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64(t[j], 52));
        t[j] = _mm512_and_si512(t[j], m52);
    }
#pragma GCC unroll 16
    for (int j = 0; j < MV_NL; j++) r->l[j] = t[j];
}

/* Double-width products for the sums of products (session 18): t[0..2 NL) are columns of
 * 52-bit weight, each a sum of 52-bit halves (not carried); S(redc) reduces once. A column
 * gets at most 2 NL halves from a product and 2 NL from the reduction, so the sum of two
 * products and its reduction stay below 50 * 2^52 < 2^58 in every column. */
/* t += a bs */
MV_I void MV(mulw)(__m512i *t, const MV(e) *a, const MV(e) *bs)
{
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i bi = bs->l[i];
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++) t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[j], bi);
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++) t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[j], bi);
    }
}

/* t = a^2 (t zero on entry): the cross products once, doubled, then the squares - NL (NL + 1)
 * multiply-adds instead of 2 NL^2 */
MV_I void MV(sqrw)(__m512i *t, const MV(e) *a)
{
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++)
#pragma GCC unroll 16
        for (int j = i + 1; j < MV_NL; j++) {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[i], a->l[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[i], a->l[j]);
        }
#pragma GCC unroll 16
    for (int k = 0; k < 2 * MV_NL; k++) t[k] = _mm512_add_epi64(t[k], t[k]);
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        t[2 * i] = _mm512_madd52lo_epu64(t[2 * i], a->l[i], a->l[i]);
        t[2 * i + 1] = _mm512_madd52hi_epu64(t[2 * i + 1], a->l[i], a->l[i]);
    }
}

/* r = t / 2^(52 NL) mod p (Montgomery reduction of the columns), r < t / 2^(52 NL) + p,
 * normalised; t is used up */
MV_I void MV(redc)(MV(e) *r, __m512i *t)
{
    const __m512i m52 = _mm512_set1_epi64((long long)MV_M52), z = _mm512_setzero_si512(),
                  pinv = _mm512_set1_epi64((long long)MV(k).pinv);
#pragma GCC unroll 16
    for (int i = 0; i < MV_NL; i++) {
        __m512i q = _mm512_madd52lo_epu64(z, t[i], pinv);   /* < 2^52 already (0 + the low half) */
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++)
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], q, _mm512_set1_epi64((long long)MV(k).p[j]));
#pragma GCC unroll 16
        for (int j = 0; j < MV_NL; j++)
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], q, _mm512_set1_epi64((long long)MV(k).p[j]));
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srli_epi64(t[i], 52));
    }
#pragma GCC unroll 16
    for (int j = MV_NL; j + 1 < 2 * MV_NL; j++) {
        t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64(t[j], 52));
        t[j] = _mm512_and_si512(t[j], m52);
    }
#pragma GCC unroll 16
    for (int j = 0; j < MV_NL; j++) r->l[j] = t[MV_NL + j];
}

/* A coordinate (Fq or Fq2 = Fq[u]/(u^2 + 1)) in eight lanes; its words as read */
typedef struct { MV(e) c[MV_NC]; } MV(c);
typedef struct { __m512i c[MV_NC][MV_W]; } MV(cw);

MV_I void MV(cfrom)(MV(c) *r, const MV(cw) *w, unsigned s)
{
    for (int i = 0; i < MV_NC; i++) MV(from_words)(&r->c[i], w->c[i], s);
}

MV_I void MV(csubc)(MV(c) *r, const MV(c) *a, const MV(c) *b, const uint64_t *k)
{
    for (int i = 0; i < MV_NC; i++) MV(sub)(&r->c[i], &a->c[i], &b->c[i], k);
}

MV_I void MV(caddc)(MV(c) *r, const MV(c) *a, const MV(c) *b)
{
    for (int i = 0; i < MV_NC; i++) MV(add)(&r->c[i], &a->c[i], &b->c[i]);
}

/* each component below p (from below 4p: 2p then p off where it fits) */
MV_I void MV(creduce)(MV(c) *r, const MV(c) *a)
{
    for (int i = 0; i < MV_NC; i++) {
        MV(csub)(&r->c[i], &a->c[i], MV(k).p2);
        MV(csub)(&r->c[i], &r->c[i], MV(k).p);
    }
}

MV_I void MV(cshift)(MV(c) *r, const MV(c) *a)
{
    for (int i = 0; i < MV_NC; i++) MV(shift)(&r->c[i], &a->c[i]);
}

/* r = a b for bs = 2^SH b, each component < 2p where a b's components are (< 2p)(< 2p) or
 * (< 3p)(< p). Fq2: the four products summed in double width and reduced once a component
 * (session 18: 2 reductions instead of 4, -26% multiply-adds), a0 b0 - a1 b1 as
 * a0 b0 + (4p - a1) b1. Bounds: BN254 (< 2p)(< 2p): 2^4 (4 + 8) p^2 / 2^260 + p < 3.3p,
 * (< 3p)(< p): < 2.4p; BLS12-381 < 2.2p; then 2p off where it fits. (Karatsuba's sums would
 * need a subtraction of double-width columns.) */
MV_I void MV(cmul)(MV(c) *r, const MV(c) *a, const MV(c) *bs)
{
#if MSM_VEC_NC2
    __m512i t0[2 * MV_NL], t1[2 * MV_NL];
    for (int k = 0; k < 2 * MV_NL; k++) t0[k] = t1[k] = _mm512_setzero_si512();
    MV(e) na1;
    MV(sub)(&na1, NULL, &a->c[1], MV(k).p4);
    MV(mulw)(t0, &a->c[0], &bs->c[0]);
    MV(mulw)(t0, &na1, &bs->c[1]);
    MV(mulw)(t1, &a->c[0], &bs->c[1]);
    MV(mulw)(t1, &a->c[1], &bs->c[0]);
    MV(redc)(&r->c[0], t0);
    MV(redc)(&r->c[1], t1);
    MV(csub)(&r->c[0], &r->c[0], MV(k).p2);
    MV(csub)(&r->c[1], &r->c[1], MV(k).p2);
#else
    MV(mul)(&r->c[0], &a->c[0], &bs->c[0]);
#endif
}

/* r = a^2 for a < 2p (as = 2^SH a), below 2p. Fq2: (a0 + a1)(a0 - a1) + 2 a0 a1 u, two products
 * (the sum and the difference brought below 2p first); Fq: (2^(SH/2) a)^2 / 2^(52 NL) = a^2 / R
 * by the squaring's NL (NL + 1) multiply-adds (2^(SH/2) 2p < 2^(52 NL); < 1.8p) */
MV_I void MV(csqr)(MV(c) *r, const MV(c) *a, const MV(c) *as)
{
#if MSM_VEC_NC2
    MV(e) u, vs, p01;
    MV(add)(&u, &a->c[0], &a->c[1]);
    MV(csub)(&u, &u, MV(k).p2);
    MV(sub)(&vs, &as->c[0], &as->c[1], MV(k).ps2);
    MV(csub)(&vs, &vs, MV(k).ps2);
    MV(mul)(&p01, &a->c[0], &as->c[1]);
    MV(mul)(&r->c[0], &u, &vs);
    MV(add)(&r->c[1], &p01, &p01);
    MV(csub)(&r->c[1], &r->c[1], MV(k).p2);
#else
    (void)as;
    __m512i t[2 * MV_NL];
    for (int k = 0; k < 2 * MV_NL; k++) t[k] = _mm512_setzero_si512();
    MV(e) ah;
    MV(shl)(&ah, &a->c[0], MV_SH / 2);
    MV(sqrw)(t, &ah);
    MV(redc)(&r->c[0], t);
#endif
}

/* Four-word coordinates (BN254) move between the eight lanes' points and the word vectors by
 * eight 32-byte loads / stores and a 4 x 8 transpose (4 unpacks, 4 two-source permutes) instead
 * of four gathers / scatters: on AMD Zen 4 a 512-bit scatter costs ~11 cycles and a gather ~5
 * (microcoded), the transpose ~1 a shuffle (session 16, issue 31). */
#define MV_TR4 (MV_W == 4)

/* 8 x 8 transpose of 64-bit words (rows <-> columns; its own inverse): BLS12-381's six-word
 * coordinates, rows padded to eight words */
#define MV_TR8 (MV_W > 4 && MV_W <= 8)
MV_I void MV(tr8)(__m512i *o, const __m512i *in)
{
    const __m512i ia = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), ib = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    __m512i t[8], u[8];
    for (int r = 0; r < 8; r += 2) {
        t[r] = _mm512_unpacklo_epi64(in[r], in[r + 1]);
        t[r + 1] = _mm512_unpackhi_epi64(in[r], in[r + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h] = _mm512_permutex2var_epi64(t[h], ia, t[h + 2]);       /* words 0, 4 of rows h..h+3 */
        u[h + 1] = _mm512_permutex2var_epi64(t[h], ib, t[h + 2]);   /* 2, 6 */
        u[h + 2] = _mm512_permutex2var_epi64(t[h + 1], ia, t[h + 3]); /* 1, 5 */
        u[h + 3] = _mm512_permutex2var_epi64(t[h + 1], ib, t[h + 3]); /* 3, 7 */
    }
    o[0] = _mm512_shuffle_i64x2(u[0], u[4], 0x44);
    o[4] = _mm512_shuffle_i64x2(u[0], u[4], 0xee);
    o[2] = _mm512_shuffle_i64x2(u[1], u[5], 0x44);
    o[6] = _mm512_shuffle_i64x2(u[1], u[5], 0xee);
    o[1] = _mm512_shuffle_i64x2(u[2], u[6], 0x44);
    o[5] = _mm512_shuffle_i64x2(u[2], u[6], 0xee);
    o[3] = _mm512_shuffle_i64x2(u[3], u[7], 0x44);
    o[7] = _mm512_shuffle_i64x2(u[3], u[7], 0xee);
}

/* a point's coordinate words for the eight lanes: base + off[l] + component + word */
MV_I void MV(gather)(MV(cw) *w, const void *base, __m256i off)
{
    if (MV_TR8) {
        uint32_t o[8];
        _mm256_storeu_si256((__m256i *)(void *)o, off);
        const __mmask8 wm = (__mmask8)((1u << MV_W) - 1);
        for (int i = 0; i < MV_NC; i++) {
            const uint8_t *b = (const uint8_t *)base + sizeof(FB_T) * i;
            __m512i z[8], c[8];
            for (int r = 0; r < 8; r++) z[r] = _mm512_maskz_loadu_epi64(wm, b + o[r]);
            MV(tr8)(c, z);
            for (int k = 0; k < MV_W; k++) w->c[i][k] = c[k];
        }
        return;
    }
    if (MV_TR4) {
        uint32_t o[8];
        _mm256_storeu_si256((__m256i *)(void *)o, off);
        for (int i = 0; i < MV_NC; i++) {
            const uint8_t *b = (const uint8_t *)base + sizeof(FB_T) * i;
            __m512i z[4];
            for (int r = 0; r < 4; r++)
                z[r] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(b + o[r]))),
                                          _mm256_loadu_si256((const __m256i *)(const void *)(b + o[r + 4])), 1);
            zp_tr48_in(w->c[i], z);   /* rows z[r] = lanes r and r + 4 (lib/util/avx512_tr.h) */
        }
        return;
    }
    for (int i = 0; i < MV_NC; i++)
#pragma GCC unroll 16
        for (int k = 0; k < MV_W; k++)
            w->c[i][k] = _mm512_i32gather_epi64(off, (const uint8_t *)base + sizeof(FB_T) * i + 8 * k, 1);
}

MV_I __mmask8 MV(eq_words)(const MV(cw) *a, const MV(cw) *b)
{
    __mmask8 e = 0xff;
    for (int i = 0; i < MV_NC; i++)
#pragma GCC unroll 16
        for (int k = 0; k < MV_W; k++) e &= _mm512_cmpeq_epi64_mask(a->c[i][k], b->c[i][k]);
    return e;
}

MV_I void MV(blend)(MV(c) *r, __mmask8 mk, const MV(c) *a)
{
    for (int i = 0; i < MV_NC; i++)
        for (int l = 0; l < MV_NL; l++) r->c[i].l[l] = _mm512_mask_blend_epi64(mk, r->c[i].l[l], a->c[i].l[l]);
}

/* 1 (Montgomery), or 2^SH times it (s) */
MV_I void MV(cone)(MV(c) *r, bool s)
{
    memset(r, 0, sizeof *r);
    MV(bcast)(&r->c[0], s ? MV(k).ones : MV(k).one);
}

/* One block of eight lanes read: the bucket's (x1, y1) and the point's (x2, y2) words, the
 * denominator d = x2 - x1 + p, or 2 y1 (doubling), or 1 (P + (-P), padding), and its norm
 * N(d) (G1: d; G2: d0^2 + d1^2 below 2p), with 2^SH times each */
typedef struct {
    __m256i ob, op;                  /* byte offsets of the bucket and of the pending point */
    __mmask8 live, dbl, cancel;      /* lanes that add; doubling; P + (-P) */
    MV(cw) x1w, x2w, y1w, y2w;
    MV(c) d, ds;
    MV(e) n, ns;
} MV(blk_t);

MV_I void MV(read)(MV(blk_t) *b, const S(ws_t) *ws, unsigned j0, unsigned m, bool ys, bool norm)
{
    __mmask8 valid = j0 >= m ? 0 : (__mmask8)(m - j0 >= 8 ? 0xff : (1u << (m - j0)) - 1);
    const __m256i sz = _mm256_set1_epi32((int)sizeof(PA_T));
    __m256i ib = _mm256_maskz_loadu_epi32(valid, &ws->bb[j0]);
    __m256i ip = _mm256_maskz_mov_epi32(valid, _mm256_add_epi32(_mm256_set1_epi32((int)j0),
                                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    b->ob = _mm256_mullo_epi32(ib, sz);
    b->op = _mm256_mullo_epi32(ip, sz);
    MV(gather)(&b->x1w, &ws->bk[0].x, b->ob);
    MV(gather)(&b->x2w, &ws->bp[0].x, b->op);
    MV(c) x1, x2;
    MV(cfrom)(&x1, &b->x1w, MV_SH);
    MV(cfrom)(&x2, &b->x2w, MV_SH);
    MV(csubc)(&b->ds, &x2, &x1, MV(k).ps);
    if (MV_NC > 1) {
        MV(cfrom)(&x1, &b->x1w, 0);
        MV(cfrom)(&x2, &b->x2w, 0);
        MV(csubc)(&b->d, &x2, &x1, MV(k).p);
    }
    __mmask8 ex = MV(eq_words)(&b->x1w, &b->x2w) & valid;
    b->dbl = b->cancel = 0;
    if (ys || ex) {
        MV(gather)(&b->y1w, &ws->bk[0].y, b->ob);
        MV(gather)(&b->y2w, &ws->bp[0].y, b->op);
    }
    if (ex) {
        __mmask8 ey = MV(eq_words)(&b->y1w, &b->y2w);
        b->dbl = ex & ey;
        b->cancel = ex & (__mmask8)~ey;
        MV(c) y1, d2;
        MV(cfrom)(&y1, &b->y1w, MV_SH);
        MV(caddc)(&d2, &y1, &y1);
        MV(blend)(&b->ds, b->dbl, &d2);
        if (MV_NC > 1) {
            MV(cfrom)(&y1, &b->y1w, 0);
            MV(caddc)(&d2, &y1, &y1);
            MV(blend)(&b->d, b->dbl, &d2);
        }
    }
    __mmask8 one = (__mmask8)(~valid | b->cancel);
    MV(c) o;
    MV(cone)(&o, true);
    MV(blend)(&b->ds, one, &o);
    if (MV_NC > 1) {
        MV(cone)(&o, false);
        MV(blend)(&b->d, one, &o);
        if (norm) {                          /* N(d) = d0^2 + d1^2 (< 2.6p reduced once), below 2p */
            __m512i t[2 * MV_NL];
            for (int k = 0; k < 2 * MV_NL; k++) t[k] = _mm512_setzero_si512();
            if (MV_NL >= 8) {
                /* BLS12-381: squarings of 2^(SH/2) d_i (2^SH d_i^2, as d_i ds_i): 72 multiply-adds
                 * each instead of 128, G2 MSMs -7%; on BN254 (25 of 50 saved) the extra shifts
                 * and columns cost more than they save (+5%: measured, session 18) */
                __m512i u[2 * MV_NL];
                for (int k = 0; k < 2 * MV_NL; k++) u[k] = _mm512_setzero_si512();
                MV(e) h0, h1;
                MV(shl)(&h0, &b->d.c[0], MV_SH / 2);
                MV(shl)(&h1, &b->d.c[MV_NC - 1], MV_SH / 2);
                MV(sqrw)(t, &h0);
                MV(sqrw)(u, &h1);
                for (int k = 0; k < 2 * MV_NL; k++) t[k] = _mm512_add_epi64(t[k], u[k]);
            } else {
                MV(mulw)(t, &b->d.c[0], &b->ds.c[0]);
                MV(mulw)(t, &b->d.c[MV_NC - 1], &b->ds.c[MV_NC - 1]);
            }
            MV(redc)(&b->n, t);
            MV(csub)(&b->n, &b->n, MV(k).p2);
            MV(shift)(&b->ns, &b->n);
        }
    } else {
        b->ns = b->ds.c[0];                  /* G1: N(d) = d; only its shifted form is used */
    }
    b->live = valid & (__mmask8)~b->cancel;
}

MV_I void MV(scatter)(void *base, __mmask8 mk, __m256i off, const MV(c) *a)
{
    __m512i w[MV_W];
    if (MV_TR4) {
        uint32_t o[8];
        _mm256_storeu_si256((__m256i *)(void *)o, off);
        for (int i = 0; i < MV_NC; i++) {
            uint8_t *b = (uint8_t *)base + sizeof(FB_T) * i;
            __m512i z[4];
            MV(to_words)(w, &a->c[i]);
            zp_tr48_out(z, w);
            for (int r = 0; r < 4; r++) {
                if (mk >> r & 1) _mm256_storeu_si256((__m256i *)(void *)(b + o[r]), _mm512_castsi512_si256(z[r]));
                if (mk >> (r + 4) & 1)
                    _mm256_storeu_si256((__m256i *)(void *)(b + o[r + 4]), _mm512_extracti64x4_epi64(z[r], 1));
            }
        }
        return;
    }
    if (MV_TR8) {
        uint32_t o[8];
        _mm256_storeu_si256((__m256i *)(void *)o, off);
        const __mmask8 wm = (__mmask8)((1u << MV_W) - 1);
        for (int i = 0; i < MV_NC; i++) {
            uint8_t *b = (uint8_t *)base + sizeof(FB_T) * i;
            __m512i c[8], z[8];
            MV(to_words)(c, &a->c[i]);
            for (int k = MV_W; k < 8; k++) c[k] = _mm512_setzero_si512();
            MV(tr8)(z, c);
            for (int r = 0; r < 8; r++)
                if (mk >> r & 1) _mm512_mask_storeu_epi64(b + o[r], wm, z[r]);
        }
        return;
    }
    for (int i = 0; i < MV_NC; i++) {
        MV(to_words)(w, &a->c[i]);
#pragma GCC unroll 16
        for (int k = 0; k < MV_W; k++)
            _mm512_mask_i32scatter_epi64((uint8_t *)base + sizeof(FB_T) * i + 8 * k, mk, off, w[k], 1);
    }
}

/* the nv * 8 lanes of v[0..nv), inverted together in Fq (one inversion, scalar) */
MV_I void MV(invert_scalar)(MV(e) *v, unsigned nv)
{
    FB_T t64[MV_CH * 8], pf[MV_CH * 8];
    __m512i w[MV_W];
    for (unsigned c = 0; c < nv; c++) {
        MV(csub)(&v[c], &v[c], MV(k).p);
        MV(to_words)(w, &v[c]);
        for (int k = 0; k < MV_W; k++) {
            uint64_t lane[8];
            _mm512_storeu_si512(lane, w[k]);
            for (int l = 0; l < 8; l++) t64[c * 8 + l].l[k] = lane[l];
        }
    }
    MSM_CAT3(zp_fq_, MSM_C, _batch_inv_vartime)(t64, nv * 8, pf);
    for (unsigned c = 0; c < nv; c++) {
        for (int k = 0; k < MV_W; k++) {
            uint64_t lane[8];
            for (int l = 0; l < 8; l++) lane[l] = t64[c * 8 + l].l[k];
            w[k] = _mm512_loadu_si512(lane);
        }
        MV(from_words)(&v[c], w, 0);
    }
}

/* the CH * 8 chain products inverted (one inversion). With four chains the products are first
 * multiplied together in the lanes, a0 a1 (a2 a3), the eight lanes' products inverted in Fq,
 * and each chain's inverse taken back out with six more vector products (1/a0 = a1 / (a0 a1),
 * ...): the scalar Montgomery trick runs over 8 values instead of 32 (session 16: ~72 scalar
 * products a flush less, for 9 vector ones) */
MV_I void MV(invert_lanes)(MV(e) *acc)
{
    if (MV_CH != 4) {
        MV(invert_scalar)(acc, MV_CH);
        return;
    }
    MV(e) s1, s3, p01, p23, t, pr, i01, i23;
    MV(shift)(&s1, &acc[1]);
    MV(shift)(&s3, &acc[3]);
    MV(mul)(&p01, &acc[0], &s1);
    MV(mul)(&p23, &acc[2], &s3);
    MV(shift)(&t, &p23);
    MV(mul)(&pr, &p01, &t);
    MV(invert_scalar)(&pr, 1);                 /* 1 / (a0 a1 a2 a3) */
    MV(mul)(&i01, &pr, &t);                    /* 1 / (a0 a1) */
    MV(shift)(&t, &p01);
    MV(mul)(&i23, &pr, &t);                    /* 1 / (a2 a3) */
    MV(shift)(&t, &acc[0]);
    MV(mul)(&acc[0], &i01, &s1);               /* 1 / a0 = a1 / (a0 a1) */
    MV(mul)(&acc[1], &i01, &t);
    MV(shift)(&t, &acc[2]);
    MV(mul)(&acc[2], &i23, &s3);
    MV(mul)(&acc[3], &i23, &t);
}

/* the buckets of the block at j0 into the cache, for the batches of the large windows (their
 * buckets fill the L2: measured -3..-6% at 2^18, where c = 16 and K = 1024; +1..3% at 2^16,
 * K <= 512, where they do not) */
MV_I void MV(prefetch)(const S(ws_t) *ws, unsigned j0, unsigned m)
{
    for (unsigned j = j0; j < j0 + 8 && j < m; j++) {
        const uint8_t *b = (const uint8_t *)&ws->bk[ws->bb[j]];
        for (size_t o = 0; o < sizeof(PA_T); o += 64) __builtin_prefetch(b + o, 1);
    }
}

MV_T static void S(flush_v)(S(ws_t) *ws)
{
    const unsigned m = ws->cnt, Q = (m + 8 * MV_CH - 1) / (8 * MV_CH);
    const bool pf = m > 512;
    /* the prefix products, then (G2) each block's norm: computed going up, read coming down */
    MV(e) *pre = (MV(e) *)(void *)ws->vec, *nst = pre + (size_t)Q * MV_CH, acc[MV_CH];
    for (unsigned c = 0; c < MV_CH; c++) MV(bcast)(&acc[c], MV(k).one);
    /* prefix products of the norms, the chains interleaved (their products are independent) */
    for (unsigned k = 0; k < Q; k++) {
        for (unsigned c = 0; c < MV_CH; c++) {
            MV(blk_t) b;
            if (pf && k + 1 < Q) MV(prefetch)(ws, (c * Q + k + 1) * 8, m);
            MV(read)(&b, ws, (c * Q + k) * 8, m, false, true);
            pre[c * Q + k] = acc[c];
            if (MV_NC > 1) nst[c * Q + k] = b.ns;
            MV(mul)(&acc[c], &acc[c], &b.ns);
        }
    }
    MV(invert_lanes)(acc);
    /* back down the chains: each lane's inverse, then lambda, x3, y3 */
    uint8_t cancel[MSM_K_MAX / 8 + MV_CH];
    for (unsigned k = Q; k-- > 0;) {
        for (unsigned c = 0; c < MV_CH; c++) {
            MV(blk_t) b;
            if (pf && k > 0) MV(prefetch)(ws, (c * Q + k - 1) * 8, m);
            MV(read)(&b, ws, (c * Q + k) * 8, m, true, false);
            if (MV_NC > 1) b.ns = nst[c * Q + k];
            cancel[c * Q + k] = b.cancel;
            MV(e) accs, ni;
            MV(c) inv, x1, x2, y1, y1s, y2s, num, lam, lams, x3, y3;
            MV(shift)(&accs, &acc[c]);
            MV(mul)(&ni, &pre[c * Q + k], &accs);          /* 1 / N(d) */
            MV(mul)(&acc[c], &acc[c], &b.ns);
#if MSM_VEC_NC2
            MV(mul)(&inv.c[0], &ni, &b.ds.c[0]);           /* 1 / d = conj(d) / N(d) */
            MV(mul)(&inv.c[1], &ni, &b.ds.c[1]);
            MV(sub)(&inv.c[1], NULL, &inv.c[1], MV(k).p2); /* -v + 2p */
#else
            inv.c[0] = ni;
#endif
            MV(cfrom)(&x1, &b.x1w, 0);
            MV(cfrom)(&x2, &b.x2w, 0);
            MV(cfrom)(&y1, &b.y1w, 0);
            MV(cfrom)(&y1s, &b.y1w, MV_SH);
            MV(cfrom)(&y2s, &b.y2w, MV_SH);
            MV(csubc)(&num, &y2s, &y1s, MV(k).ps);          /* 2^SH (y2 - y1) */
            if (b.dbl) {                                     /* 2^SH 3 x1^2 */
                MV(c) x1s, x13, sq;
                MV(cfrom)(&x1s, &b.x1w, MV_SH);
                MV(caddc)(&x13, &x1, &x1);
                MV(caddc)(&x13, &x13, &x1);
                MV(cmul)(&sq, &x13, &x1s);
                MV(cshift)(&sq, &sq);
                MV(blend)(&num, b.dbl, &sq);
            }
            MV(cmul)(&lam, &inv, &num);
            MV(cshift)(&lams, &lam);
            MV(csqr)(&x3, &lam, &lams);                      /* lambda^2 */
            MV(csubc)(&x3, &x3, &x1, MV(k).p);
            MV(csubc)(&x3, &x3, &x2, MV(k).p);               /* < 4p */
            MV(creduce)(&x3, &x3);
            MV(csubc)(&y3, &x1, &x3, MV(k).p);
            MV(cmul)(&y3, &y3, &lams);
            MV(csubc)(&y3, &y3, &y1, MV(k).p);               /* < 3p */
            MV(creduce)(&y3, &y3);
            MV(scatter)(&ws->bk[0].x, b.live, b.ob, &x3);
            MV(scatter)(&ws->bk[0].y, b.live, b.ob, &y3);
        }
    }
    for (unsigned j = 0; j < m; j++) {
        uint32_t bi = ws->bb[j];
        ws->st[bi] &= (uint8_t)~MSM_ST_BUSY;
        if (cancel[j / 8] >> (j % 8) & 1) ws->st[bi] &= (uint8_t)~MSM_ST_AFF;
    }
    ws->cnt = 0;
}

#ifndef MSM_IMPL_INTERNAL   /* the public entry point: msm.c and its siblings only */
/* ---- the key load's point check on the vector path (session 17) ----
 * Eight points at a time: every coordinate word vector below p (lexicographic, top word
 * first), and y^2 == x^3 + b in 52-bit limbs (products < 2p, the difference brought below p
 * and compared limb by limb with b), or the point is (0,0) (infinity, as the key stores it).
 * A lane with a non-canonical coordinate computes garbage but is refused by the first test.
 * b is y^2 - x^3 of the generator (scalar field code, at load time). Same answers as
 * ECA(is_inf) / F canonical / ECA(on_curve) (tests/test_msm.c test_check_v). */
static uint64_t MV(b)[MV_NC][MV_NL];

__attribute__((constructor)) static void MV(b_init)(void)
{
    PA_T g;
    FE_T y2, x3;
    EC(generator)(&g);
    F(sqr)(&y2, &g.y);
    F(sqr)(&x3, &g.x);
    F(mul)(&x3, &x3, &g.x);
    F(sub)(&y2, &y2, &x3);   /* b, canonical */
    const FB_T *c = (const FB_T *)(const void *)&y2;
    for (int i = 0; i < MV_NC; i++) MV(limbs_u64)(MV(b)[i], c[i].l, 0);
}

/* lanes whose component words are all below p */
MV_I __mmask8 MV(canon)(const MV(cw) *w)
{
    const uint64_t *p = MSM_CAT3(zp_fq_, MSM_C, _modulus).l;
    __mmask8 ok = 0xff;
    for (int i = 0; i < MV_NC; i++) {
        __mmask8 lt = 0, eq = 0xff;   /* from the top word down: below so far / equal so far */
        for (int k = MV_W - 1; k >= 0; k--) {
            __m512i pk = _mm512_set1_epi64((long long)p[k]);
            lt |= eq & _mm512_cmplt_epu64_mask(w->c[i][k], pk);
            eq &= _mm512_cmpeq_epi64_mask(w->c[i][k], pk);
        }
        ok &= lt;
    }
    return ok;
}

MV_T size_t MSM_CAT5(zp_msm_, MSM_G, _, MSM_C, _check_v)(const PA_T *pts, size_t n, size_t *done)
{
    *done = 0;
    if (!msm_vec_on() || n < 8) return 0;
    const __m256i off = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)sizeof(PA_T)));
    size_t nb = n & ~(size_t)7;
    for (size_t i = 0; i < nb; i += 8) {
        MV(cw) xw, yw;
        const uint8_t *pb = (const uint8_t *)(const void *)pts + i * sizeof(PA_T);   /* any alignment */
        MV(gather)(&xw, pb + offsetof(PA_T, x), off);
        MV(gather)(&yw, pb + offsetof(PA_T, y), off);
        __mmask8 zero = 0xff;
        for (int c = 0; c < MV_NC; c++)
            for (int k = 0; k < MV_W; k++)
                zero &= _mm512_cmpeq_epi64_mask(_mm512_or_si512(xw.c[c][k], yw.c[c][k]), _mm512_setzero_si512());
        __mmask8 canon = MV(canon)(&xw) & MV(canon)(&yw);
        MV(c) x, xs, y, ys, x2, x3, y2, d;
        MV(cfrom)(&x, &xw, 0);
        MV(cfrom)(&xs, &xw, MV_SH);
        MV(cfrom)(&y, &yw, 0);
        MV(cfrom)(&ys, &yw, MV_SH);
        MV(csqr)(&x2, &x, &xs);       /* < 2p (squarings: session 18) */
        MV(cmul)(&x3, &x2, &xs);      /* < 2p */
        MV(csqr)(&y2, &y, &ys);       /* < 2p */
        MV(csubc)(&d, &y2, &x3, MV(k).p2);   /* y^2 - x^3 + 2p < 4p */
        MV(creduce)(&d, &d);                 /* < p */
        __mmask8 on = 0xff;
        for (int c = 0; c < MV_NC; c++)
            for (int l = 0; l < MV_NL; l++)
                on &= _mm512_cmpeq_epi64_mask(d.c[c].l[l], _mm512_set1_epi64((long long)MV(b)[c][l]));
        __mmask8 ok = zero | (canon & on);
        if (ok != 0xff) {
            *done = nb;
            return i + (size_t)__builtin_ctz((unsigned)(uint8_t)~ok);
        }
    }
    *done = nb;
    return nb;
}
#endif
