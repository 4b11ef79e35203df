/* cu_curve.cuh - G1 of BN254 and BLS12-381 (y^2 = x^3 + b, a = 0) for the CUDA backend,
 * written once over a curve-traits class and instantiated per curve.
 *
 * Forms:
 *   affine  {x, y} Montgomery coordinates, byte-identical to the zkey point layout and to
 *           lib/ec's zp_g1a_<C>_t; the all-zero point (0,0) is infinity (snarkjs convention).
 *   xyzz    {X, Y, ZZ, ZZZ} with x = X/ZZ, y = Y/ZZZ and ZZ^3 = ZZZ^2; ZZ == 0 is infinity.
 *           Formulas of the EFD "xyzz" family (add-2008-s, madd-2008-s, dbl-2008-s-1,
 *           mdbl-2008-s-1), with the equal / opposite cases handled (complete use).
 *   jacobian {X, Y, Z} = lib/ec's zp_g1_<C>_t (x = X/Z^2, y = Y/Z^3, Z == 0 infinity);
 *           from xyzz without inversion: (X*ZZ^2, Y*ZZZ^2, ZZZ).
 * All __host__ __device__: tests/test_cuda_host.c checks them against lib/ec on the CPU. */
#ifndef ZP_CU_CURVE_CUH
#define ZP_CU_CURVE_CUH
#include "cu_field.cuh"

namespace zpcu {

struct bn254 {
    typedef fr_bn254 fr;
    typedef fq_bn254 fq;
    static constexpr int ID = 1;          /* ZP_CURVE_BN254 */
    static constexpr int R_BITS = 254;    /* scalars < r < 2^254 */
};
struct bls12_381 {
    typedef fr_bls12_381 fr;
    typedef fq_bls12_381 fq;
    static constexpr int ID = 2;          /* ZP_CURVE_BLS12_381 */
    static constexpr int R_BITS = 255;
};

template <class C> struct g1_affine { typename C::fq x, y; };
template <class C> struct g1_jac { typename C::fq x, y, z; };
template <class C> struct g1_xyzz {
    typename C::fq x, y, zz, zzz;
    ZP_HD bool is_inf() const { return zz.is_zero(); }
    ZP_HD void set_inf()
    {
        x = C::fq::one();
        y = C::fq::one();
        zz = C::fq::zero();
        zzz = C::fq::zero();
    }
};

template <class C> ZP_HD bool aff_is_inf(const g1_affine<C> &p) { return p.x.is_zero() && p.y.is_zero(); }

template <class C> ZP_HD void xyzz_from_affine(g1_xyzz<C> &r, const g1_affine<C> &a)
{
    if (aff_is_inf<C>(a)) {
        r.set_inf();
        return;
    }
    r.x = a.x;
    r.y = a.y;
    r.zz = C::fq::one();
    r.zzz = C::fq::one();
}

/* mdbl-2008-s-1: r = 2a for affine a (not infinity) */
template <class C> ZP_HD void xyzz_dbl_affine(g1_xyzz<C> &r, const g1_affine<C> &a)
{
    typedef typename C::fq F;
    F u, v, w, s, m, t;
    fp_dbl(u, a.y);                  /* U = 2Y */
    fp_sqr(v, u);                    /* V = U^2 */
    fp_mul(w, u, v);                 /* W = U*V */
    fp_mul(s, a.x, v);               /* S = X*V */
    fp_sqr(m, a.x);
    fp_dbl(t, m);
    fp_add(m, m, t);                 /* M = 3X^2 */
    fp_sqr(t, m);
    fp_sub(t, t, s);
    fp_sub(r.x, t, s);               /* X3 = M^2 - 2S */
    fp_sub(t, s, r.x);
    fp_mul(t, m, t);
    fp_mul(u, w, a.y);
    fp_sub(r.y, t, u);               /* Y3 = M(S - X3) - W*Y */
    r.zz = v;
    r.zzz = w;
}

/* dbl-2008-s-1: r = 2a (r may alias a) */
template <class C> ZP_HD void xyzz_dbl(g1_xyzz<C> &r, const g1_xyzz<C> &a)
{
    typedef typename C::fq F;
    if (a.is_inf()) {
        r.set_inf();
        return;
    }
    F u, v, w, s, m, t;
    fp_dbl(u, a.y);
    fp_sqr(v, u);
    fp_mul(w, u, v);
    fp_mul(s, a.x, v);
    fp_sqr(m, a.x);
    fp_dbl(t, m);
    fp_add(m, m, t);
    fp_mul(r.zz, v, a.zz);           /* ZZ3 = V*ZZ1 */
    fp_mul(r.zzz, w, a.zzz);         /* ZZZ3 = W*ZZZ1 */
    fp_mul(u, w, a.y);               /* W*Y1 (before r.y is written) */
    fp_sqr(t, m);
    fp_sub(t, t, s);
    fp_sub(r.x, t, s);
    fp_sub(t, s, r.x);
    fp_mul(t, m, t);
    fp_sub(r.y, t, u);
}

/* madd-2008-s: r += a (affine); infinity, equal and opposite points handled */
template <class C> ZP_HD void xyzz_add_affine(g1_xyzz<C> &r, const g1_affine<C> &a)
{
    typedef typename C::fq F;
    if (aff_is_inf<C>(a)) return;
    if (r.is_inf()) {
        xyzz_from_affine<C>(r, a);
        return;
    }
    F u2, s2, p, q, pp, ppp, t;
    fp_mul(u2, a.x, r.zz);
    fp_mul(s2, a.y, r.zzz);
    fp_sub(p, u2, r.x);              /* P = U2 - X1 */
    fp_sub(q, s2, r.y);              /* R = S2 - Y1 */
    if (p.is_zero()) {
        if (q.is_zero())
            xyzz_dbl_affine<C>(r, a);
        else
            r.set_inf();
        return;
    }
    fp_sqr(pp, p);
    fp_mul(ppp, p, pp);
    fp_mul(t, r.x, pp);              /* Q = X1*PP */
    fp_mul(r.zz, r.zz, pp);
    fp_mul(r.zzz, r.zzz, ppp);
    fp_sqr(u2, q);
    fp_sub(u2, u2, ppp);
    fp_sub(u2, u2, t);
    fp_sub(u2, u2, t);               /* X3 = R^2 - PPP - 2Q */
    fp_sub(t, t, u2);
    fp_mul(t, q, t);
    fp_mul(s2, r.y, ppp);
    fp_sub(r.y, t, s2);              /* Y3 = R(Q - X3) - Y1*PPP */
    r.x = u2;
}

/* r += a with a's y negated when neg (the signed-digit bucket add) */
template <class C> ZP_HD void xyzz_add_affine_signed(g1_xyzz<C> &r, const g1_affine<C> &a, bool neg)
{
    if (!neg) {
        xyzz_add_affine<C>(r, a);
        return;
    }
    g1_affine<C> b;
    b.x = a.x;
    fp_neg(b.y, a.y);                /* (0,0) stays (0,0): neg(0) = 0 */
    xyzz_add_affine<C>(r, b);
}

/* add-2008-s: r += a (both xyzz) */
template <class C> ZP_HD void xyzz_add(g1_xyzz<C> &r, const g1_xyzz<C> &a)
{
    typedef typename C::fq F;
    if (a.is_inf()) return;
    if (r.is_inf()) {
        r = a;
        return;
    }
    F u1, u2, s1, s2, p, q, pp, ppp, t;
    fp_mul(u1, r.x, a.zz);
    fp_mul(u2, a.x, r.zz);
    fp_mul(s1, r.y, a.zzz);
    fp_mul(s2, a.y, r.zzz);
    fp_sub(p, u2, u1);
    fp_sub(q, s2, s1);
    if (p.is_zero()) {
        if (q.is_zero())
            xyzz_dbl<C>(r, a);
        else
            r.set_inf();
        return;
    }
    fp_sqr(pp, p);
    fp_mul(ppp, p, pp);
    fp_mul(t, u1, pp);               /* Q = U1*PP */
    fp_mul(r.zz, r.zz, a.zz);
    fp_mul(r.zz, r.zz, pp);          /* ZZ3 = ZZ1*ZZ2*PP */
    fp_mul(r.zzz, r.zzz, a.zzz);
    fp_mul(r.zzz, r.zzz, ppp);       /* ZZZ3 = ZZZ1*ZZZ2*PPP */
    fp_sqr(u2, q);
    fp_sub(u2, u2, ppp);
    fp_sub(u2, u2, t);
    fp_sub(u2, u2, t);               /* X3 = R^2 - PPP - 2Q */
    fp_sub(t, t, u2);
    fp_mul(t, q, t);
    fp_mul(s2, s1, ppp);
    fp_sub(r.y, t, s2);              /* Y3 = R(Q - X3) - S1*PPP */
    r.x = u2;
}

/* r = k*a for a small k (double-and-add from the top bit); r must not alias a */
template <class C> ZP_HD void xyzz_mul_small(g1_xyzz<C> &r, const g1_xyzz<C> &a, uint32_t k)
{
    r.set_inf();
    for (int bit = 31; bit >= 0; bit--) {
        xyzz_dbl<C>(r, r);
        if ((k >> bit) & 1) xyzz_add<C>(r, a);
    }
}

template <class C> ZP_HD void xyzz_to_jac(g1_jac<C> &r, const g1_xyzz<C> &a)
{
    typedef typename C::fq F;
    if (a.is_inf()) {
        r.x = F::one();
        r.y = F::one();
        r.z = F::zero();
        return;
    }
    F t;
    fp_sqr(t, a.zz);
    fp_mul(r.x, a.x, t);
    fp_sqr(t, a.zzz);
    fp_mul(r.y, a.y, t);
    r.z = a.zzz;
}

} /* namespace zpcu */
#endif
