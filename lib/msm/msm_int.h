/* msm_int.h - private to lib/msm: one set of static inline coordinate-field operations with
 * uniform names, so that msm_impl.h can be written once for G1 (Fq) and G2 (Fq2):
 *   mf_<F>_{add,sub,dbl,neg,mul,sqr,is_zero,eq,inv,one,mulb,norm,inv_norm}  for F in fq_C, fq2_C
 *   (mulb: times an Fq element, for the GLV endomorphism's beta; norm: into Fq, and
 *   inv_norm: the inverse from the norm's, so that batched inversions run in Fq).
 * Fq maps onto ff_inline.h; Fq2 = Fq[u]/(u^2+1) is built here from the inline Fq ops
 * (Karatsuba mul with lazy reduction, complex squaring) so that nothing in the MSM inner loop is a call.
 * Invariants: Montgomery form, fully reduced, outputs may alias inputs. */
#ifndef ZP_MSM_INT_H
#define ZP_MSM_INT_H
#include "lib/ff/ff_inline.h"

#define MF_FQ(C)                                                                               \
    static inline void mf_fq_##C##_add(zp_fq_##C##_t *r, const zp_fq_##C##_t *a, const zp_fq_##C##_t *b) \
    { zp_fq_##C##_add_inl(r, a, b); }                                                          \
    static inline void mf_fq_##C##_sub(zp_fq_##C##_t *r, const zp_fq_##C##_t *a, const zp_fq_##C##_t *b) \
    { zp_fq_##C##_sub_inl(r, a, b); }                                                          \
    static inline void mf_fq_##C##_dbl(zp_fq_##C##_t *r, const zp_fq_##C##_t *a)               \
    { zp_fq_##C##_dbl_inl(r, a); }                                                             \
    static inline void mf_fq_##C##_neg(zp_fq_##C##_t *r, const zp_fq_##C##_t *a)               \
    { zp_fq_##C##_neg_inl(r, a); }                                                             \
    static inline void mf_fq_##C##_mul(zp_fq_##C##_t *r, const zp_fq_##C##_t *a, const zp_fq_##C##_t *b) \
    { zp_fq_##C##_mul_inl(r, a, b); }                                                          \
    static inline void mf_fq_##C##_sqr(zp_fq_##C##_t *r, const zp_fq_##C##_t *a)               \
    { zp_fq_##C##_sqr_inl(r, a); }                                                             \
    static inline bool mf_fq_##C##_is_zero(const zp_fq_##C##_t *a) { return zp_fq_##C##_is_zero_inl(a); } \
    static inline bool mf_fq_##C##_eq(const zp_fq_##C##_t *a, const zp_fq_##C##_t *b)         \
    { return zp_fq_##C##_eq_inl(a, b); }                                                       \
    /* variable time (safegcd): the MSM's inputs are public */                                 \
    static inline void mf_fq_##C##_inv(zp_fq_##C##_t *r, const zp_fq_##C##_t *a)               \
    { zp_fq_##C##_inv_vartime(r, a); }                                                         \
    static inline void mf_fq_##C##_one(zp_fq_##C##_t *r) { *r = zp_fq_##C##_one; }             \
    /* times an element of the base field Fq */                                                \
    static inline void mf_fq_##C##_mulb(zp_fq_##C##_t *r, const zp_fq_##C##_t *a, const zp_fq_##C##_t *b) \
    { zp_fq_##C##_mul_inl(r, a, b); }                                                          \
    static inline void mf_fq2_##C##_mulb(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq_##C##_t *b) \
    {                                                                                          \
        zp_fq_##C##_mul_inl(&r->c0, &a->c0, b);                                                \
        zp_fq_##C##_mul_inl(&r->c1, &a->c1, b);                                                \
    }                                                                                          \
                                                                                               \
    static inline void mf_fq2_##C##_add(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b) \
    {                                                                                          \
        zp_fq_##C##_add_inl(&r->c0, &a->c0, &b->c0);                                           \
        zp_fq_##C##_add_inl(&r->c1, &a->c1, &b->c1);                                           \
    }                                                                                          \
    static inline void mf_fq2_##C##_sub(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b) \
    {                                                                                          \
        zp_fq_##C##_sub_inl(&r->c0, &a->c0, &b->c0);                                           \
        zp_fq_##C##_sub_inl(&r->c1, &a->c1, &b->c1);                                           \
    }                                                                                          \
    static inline void mf_fq2_##C##_dbl(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a)            \
    {                                                                                          \
        zp_fq_##C##_dbl_inl(&r->c0, &a->c0);                                                   \
        zp_fq_##C##_dbl_inl(&r->c1, &a->c1);                                                   \
    }                                                                                          \
    static inline void mf_fq2_##C##_neg(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a)            \
    {                                                                                          \
        zp_fq_##C##_neg_inl(&r->c0, &a->c0);                                                   \
        zp_fq_##C##_neg_inl(&r->c1, &a->c1);                                                   \
    }                                                                                          \
    /* Karatsuba with lazy reduction (as zp_fq2_mul, ff_tower_impl.h): three double-width   \
     * products, two Montgomery reductions */                                                  \
    static inline void mf_fq2_##C##_mul(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b) \
    {                                                                                          \
        uint64_t t0[2 * ZP_fq_##C##_LIMBS], t1[2 * ZP_fq_##C##_LIMBS], t2[2 * ZP_fq_##C##_LIMBS]; \
        zp_fq_##C##_t s0, s1;                                                                  \
        zp_fq_##C##_add_nr_inl(&s0, &a->c0, &a->c1);                                           \
        zp_fq_##C##_add_nr_inl(&s1, &b->c0, &b->c1);                                           \
        zp_fq_##C##_mul_wide_inl(t0, &a->c0, &b->c0);                                          \
        zp_fq_##C##_mul_wide_inl(t1, &a->c1, &b->c1);                                          \
        zp_fq_##C##_mul_wide_inl(t2, &s0, &s1);                                                \
        zp_fq_##C##_wsub_inl(t2, t2, t0);                                                      \
        zp_fq_##C##_wsub_inl(t2, t2, t1);                                                      \
        zp_fq_##C##_wsubp_inl(t0, t0, t1);                                                     \
        zp_fq_##C##_redc_inl(&r->c0, t0);                                                      \
        zp_fq_##C##_redc_inl(&r->c1, t2);                                                      \
    }                                                                                          \
    static inline void mf_fq2_##C##_sqr(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a)            \
    {                                                                                          \
        zp_fq_##C##_t s, d, m;                                                                 \
        zp_fq_##C##_add_inl(&s, &a->c0, &a->c1);                                               \
        zp_fq_##C##_sub_inl(&d, &a->c0, &a->c1);                                               \
        zp_fq_##C##_mul_inl(&m, &a->c0, &a->c1);                                               \
        zp_fq_##C##_mul_inl(&r->c0, &s, &d);                                                   \
        zp_fq_##C##_dbl_inl(&r->c1, &m);                                                       \
    }                                                                                          \
    /* norm into the base field (for batched inversions in Fq: a^-1 = conj(a) / N(a)): Fq: a; \
     * Fq2: c0^2 + c1^2 with one reduction (the sum of the two wide squares < 2p^2 < pR) */  \
    static inline void mf_fq_##C##_norm(zp_fq_##C##_t *n, const zp_fq_##C##_t *a) { *n = *a; } \
    static inline void mf_fq2_##C##_norm(zp_fq_##C##_t *n, const zp_fq2_##C##_t *a)           \
    {                                                                                          \
        uint64_t t0[2 * ZP_fq_##C##_LIMBS], t1[2 * ZP_fq_##C##_LIMBS];                         \
        zp_fq_##C##_mul_wide_inl(t0, &a->c0, &a->c0);                                          \
        zp_fq_##C##_mul_wide_inl(t1, &a->c1, &a->c1);                                          \
        zp_u128 cy = 0;                                                                        \
        for (unsigned i = 0; i < 2 * ZP_fq_##C##_LIMBS; i++) {                                 \
            cy += (zp_u128)t0[i] + t1[i];                                                      \
            t0[i] = (uint64_t)cy;                                                              \
            cy >>= 64;                                                                         \
        }                                                                                      \
        zp_fq_##C##_redc_inl(n, t0);                                                           \
    }                                                                                          \
    /* r = a^-1 from ninv = N(a)^-1 (a != 0): Fq: ninv; Fq2: conj(a) ninv */                  \
    static inline void mf_fq_##C##_inv_norm(zp_fq_##C##_t *r, const zp_fq_##C##_t *a,         \
                                            const zp_fq_##C##_t *ninv)                         \
    {                                                                                          \
        (void)a;                                                                               \
        *r = *ninv;                                                                            \
    }                                                                                          \
    static inline void mf_fq2_##C##_inv_norm(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a,       \
                                             const zp_fq_##C##_t *ninv)                        \
    {                                                                                          \
        zp_fq_##C##_t t;                                                                       \
        zp_fq_##C##_mul_inl(&t, &a->c1, ninv);                                                 \
        zp_fq_##C##_mul_inl(&r->c0, &a->c0, ninv);                                             \
        zp_fq_##C##_neg_inl(&r->c1, &t);                                                       \
    }                                                                                          \
    static inline bool mf_fq2_##C##_is_zero(const zp_fq2_##C##_t *a)                           \
    { return zp_fq_##C##_is_zero_inl(&a->c0) && zp_fq_##C##_is_zero_inl(&a->c1); }             \
    static inline bool mf_fq2_##C##_eq(const zp_fq2_##C##_t *a, const zp_fq2_##C##_t *b)       \
    { return zp_fq_##C##_eq_inl(&a->c0, &b->c0) && zp_fq_##C##_eq_inl(&a->c1, &b->c1); }       \
    static inline void mf_fq2_##C##_inv(zp_fq2_##C##_t *r, const zp_fq2_##C##_t *a)            \
    { zp_fq2_##C##_inv(r, a); }                                                                \
    static inline void mf_fq2_##C##_one(zp_fq2_##C##_t *r)                                     \
    {                                                                                          \
        r->c0 = zp_fq_##C##_one;                                                               \
        for (size_t i = 0; i < sizeof r->c1.l / sizeof r->c1.l[0]; i++) r->c1.l[i] = 0;        \
    }

MF_FQ(bn254)
MF_FQ(bls12_381)

#endif
