/* ff_arith.h - TEMPLATE (no include guard): the hot field operations of one prime field as
 * static inline functions. Included by ff_inline.h once per field with
 *   FF    the field name (fr_bn254, ...)   FF_N  the limb count (4 or 6)
 * Defines zp_<F>_{add,sub,neg,dbl,mul,sqr,eq,is_zero}_inl and the portable reference
 * zp_<F>_{add,sub,mul,sqr}_ref. Invariants: Montgomery form, little-endian limbs, inputs and outputs
 * fully reduced (< p); output may alias inputs. Every modulus here has its top bit clear
 * (p < 2^(64N-1)), so a+b never carries out of N limbs and the "no-carry" CIOS variant is
 * valid (top limb of p < 2^63 - 1).
 * The _inl add/sub/mul/sqr use the x86-64 mulx/adcx/adox code of ff_asm.h when ZP_FF_ASM is set
 * (BMI2 + ADX available), otherwise the _ref C code. Tests: tests/test_ff.c */

#define FT FF_XCAT3(zp_, FF, _t)
#define FN(x) FF_XCAT3(zp_, FF, _##x)
#define FC(x) FF_XCAT3(FFC_, FF, _##x)
#define FP FF_XCAT3(zp_ffp_, FF, _)

static const uint64_t FP[FF_N] = FC(P);

/* r = t - p if t >= p else t (t < 2p, t fits in N limbs) */
static inline void FN(reduce_once_)(FT *r, const uint64_t *t)
{
    uint64_t d[FF_N];
    uint64_t borrow = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)t[j] - FP[j] - borrow;
        d[j] = (uint64_t)x;
        borrow = (uint64_t)(x >> 64) & 1;
    }
    uint64_t keep = 0 - borrow; /* all ones: t < p, keep t */
    for (int j = 0; j < FF_N; j++)
        r->l[j] = (t[j] & keep) | (d[j] & ~keep);
}

static inline void FN(add_ref)(FT *r, const FT *a, const FT *b)
{
    uint64_t t[FF_N];
    uint64_t c = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)a->l[j] + b->l[j] + c;
        t[j] = (uint64_t)x;
        c = (uint64_t)(x >> 64);
    }
    FN(reduce_once_)(r, t);
}

static inline void FN(sub_ref)(FT *r, const FT *a, const FT *b)
{
    uint64_t t[FF_N];
    uint64_t borrow = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)a->l[j] - b->l[j] - borrow;
        t[j] = (uint64_t)x;
        borrow = (uint64_t)(x >> 64) & 1;
    }
    uint64_t mask = 0 - borrow; /* add p back if a < b */
    uint64_t c = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)t[j] + (FP[j] & mask) + c;
        r->l[j] = (uint64_t)x;
        c = (uint64_t)(x >> 64);
    }
}

static inline bool FN(is_zero_inl)(const FT *a)
{
    uint64_t o = 0;
    for (int j = 0; j < FF_N; j++)
        o |= a->l[j];
    return o == 0;
}

static inline bool FN(eq_inl)(const FT *a, const FT *b)
{
    uint64_t o = 0;
    for (int j = 0; j < FF_N; j++)
        o |= a->l[j] ^ b->l[j];
    return o == 0;
}

static inline void FN(neg_ref)(FT *r, const FT *a)
{
    uint64_t nz = 0;
    for (int j = 0; j < FF_N; j++)
        nz |= a->l[j];
    uint64_t mask = 0 - (uint64_t)(nz != 0);
    uint64_t borrow = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)FP[j] - a->l[j] - borrow;
        r->l[j] = (uint64_t)x & mask;
        borrow = (uint64_t)(x >> 64) & 1;
    }
}

/* Montgomery product, CIOS with the no-carry optimisation: r = a*b/R mod p. */
static inline void FN(mul_ref)(FT *r, const FT *a, const FT *b)
{
    uint64_t t[FF_N];
    for (int j = 0; j < FF_N; j++)
        t[j] = 0;
    for (int i = 0; i < FF_N; i++) {
        uint64_t bi = b->l[i];
        zp_u128 x = (zp_u128)a->l[0] * bi + t[0];
        uint64_t A = (uint64_t)(x >> 64);
        uint64_t m = (uint64_t)x * FC(INV);
        zp_u128 y = (zp_u128)m * FP[0] + (uint64_t)x;
        uint64_t C = (uint64_t)(y >> 64);
        for (int j = 1; j < FF_N; j++) {
            x = (zp_u128)a->l[j] * bi + t[j] + A;
            A = (uint64_t)(x >> 64);
            y = (zp_u128)m * FP[j] + (uint64_t)x + C;
            C = (uint64_t)(y >> 64);
            t[j - 1] = (uint64_t)y;
        }
        t[FF_N - 1] = C + A;
    }
    FN(reduce_once_)(r, t);
}

static inline void FN(sqr_ref)(FT *r, const FT *a)
{
    FN(mul_ref)(r, a, a);
}

/* Double-width helpers for lazy reduction (sums of products reduced once), used by the
 * Fq2 product. Wide values are 2N little-endian limbs. Requires 2p < 2^(64N) (true here). */
/* r[0..2N) = a*b, plain integers a, b < 2^(64N) */
static inline void FN(mul_wide_ref)(uint64_t *r, const FT *a, const FT *b)
{
    for (int j = 0; j < 2 * FF_N; j++)
        r[j] = 0;
    for (int i = 0; i < FF_N; i++) {
        uint64_t c = 0;
        for (int j = 0; j < FF_N; j++) {
            zp_u128 x = (zp_u128)a->l[j] * b->l[i] + r[i + j] + c;
            r[i + j] = (uint64_t)x;
            c = (uint64_t)(x >> 64);
        }
        r[i + FF_N] = c;
    }
}

/* r = u / R mod p for u < p*R (R = 2^(64N)), fully reduced */
static inline void FN(redc_ref)(FT *r, const uint64_t *u)
{
    uint64_t t[2 * FF_N + 1];
    for (int j = 0; j < 2 * FF_N; j++)
        t[j] = u[j];
    t[2 * FF_N] = 0;
    for (int i = 0; i < FF_N; i++) {
        uint64_t m = t[i] * FC(INV);
        uint64_t c = 0;
        for (int j = 0; j < FF_N; j++) {
            zp_u128 x = (zp_u128)m * FP[j] + t[i + j] + c;
            t[i + j] = (uint64_t)x;
            c = (uint64_t)(x >> 64);
        }
        for (int j = i + FF_N; j <= 2 * FF_N && c; j++) {
            zp_u128 x = (zp_u128)t[j] + c;
            t[j] = (uint64_t)x;
            c = (uint64_t)(x >> 64);
        }
    }
    FN(reduce_once_)(r, t + FF_N); /* t[2N] is 0: the value is < 2p < 2^(64N) */
}

/* r = a - b over 2N limbs (caller guarantees a >= b) */
static inline void FN(wsub_ref)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    uint64_t borrow = 0;
    for (int j = 0; j < 2 * FF_N; j++) {
        zp_u128 x = (zp_u128)a[j] - b[j] - borrow;
        r[j] = (uint64_t)x;
        borrow = (uint64_t)(x >> 64) & 1;
    }
}

/* r = a - b over 2N limbs, plus p*2^(64N) if a < b */
static inline void FN(wsubp_ref)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    uint64_t borrow = 0;
    for (int j = 0; j < 2 * FF_N; j++) {
        zp_u128 x = (zp_u128)a[j] - b[j] - borrow;
        r[j] = (uint64_t)x;
        borrow = (uint64_t)(x >> 64) & 1;
    }
    uint64_t mask = 0 - borrow, c = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)r[FF_N + j] + (FP[j] & mask) + c;
        r[FF_N + j] = (uint64_t)x;
        c = (uint64_t)(x >> 64);
    }
}

/* r = a + b without reduction (a + b < 2^(64N); e.g. a, b < p gives r < 2p) */
static inline void FN(add_nr_ref)(FT *r, const FT *a, const FT *b)
{
    uint64_t c = 0;
    for (int j = 0; j < FF_N; j++) {
        zp_u128 x = (zp_u128)a->l[j] + b->l[j] + c;
        r->l[j] = (uint64_t)x;
        c = (uint64_t)(x >> 64);
    }
}

#if defined(ZP_FF_ASM)
#include "lib/ff/ff_asm.h"
#else
static inline void FN(mul_inl)(FT *r, const FT *a, const FT *b)
{
    FN(mul_ref)(r, a, b);
}
static inline void FN(sqr_inl)(FT *r, const FT *a)
{
    FN(sqr_ref)(r, a);
}
static inline void FN(add_inl)(FT *r, const FT *a, const FT *b)
{
    FN(add_ref)(r, a, b);
}
static inline void FN(sub_inl)(FT *r, const FT *a, const FT *b)
{
    FN(sub_ref)(r, a, b);
}
static inline void FN(mul_wide_inl)(uint64_t *r, const FT *a, const FT *b)
{
    FN(mul_wide_ref)(r, a, b);
}
static inline void FN(redc_inl)(FT *r, const uint64_t *u)
{
    FN(redc_ref)(r, u);
}
static inline void FN(wsub_inl)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    FN(wsub_ref)(r, a, b);
}
static inline void FN(wsubp_inl)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    FN(wsubp_ref)(r, a, b);
}
static inline void FN(add_nr_inl)(FT *r, const FT *a, const FT *b)
{
    FN(add_nr_ref)(r, a, b);
}
#endif

static inline void FN(dbl_inl)(FT *r, const FT *a)
{
    FN(add_inl)(r, a, a);
}

/* -a: with the assembly, 0 - a by its subtraction (p - a, or 0 for 0): GCC spilled the C
 * form's 128-bit borrow chain through the stack, and negating y was ~a third of an MSM
 * window task's time (the sign of every Booth digit) */
static inline void FN(neg_inl)(FT *r, const FT *a)
{
#if defined(ZP_FF_ASM)
    static const FT zero;
    FN(sub_inl)(r, &zero, a);
#else
    FN(neg_ref)(r, a);
#endif
}

#undef FT
#undef FN
#undef FC
#undef FP
