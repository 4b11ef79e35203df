/* cu_field.cuh - prime-field arithmetic for the CUDA backend, written once as a template and
 * instantiated per field (fr/fq of BN254 and BLS12-381).
 *
 * Invariants (identical to lib/ff, see ff.h): little-endian 64-bit limbs, Montgomery form
 * a*R mod p with R = 2^(64N), every value fully reduced (< p) after every operation, so a
 * device value is byte-identical to the lib/ff value and to the zkey/wtns encoding.
 * Multiplication is CIOS with 64-bit limbs; the only device/host difference is the high half
 * of a 64x64 product (__umul64hi on the device, unsigned __int128 on the host), so the host
 * tests (tests/test_cuda_host.c through cu_hostemu.cu) run this very code on the CPU.
 * Everything is __host__ __device__ and allocation-free; aliasing of output and inputs is
 * allowed. */
#ifndef ZP_CU_FIELD_CUH
#define ZP_CU_FIELD_CUH
#include <stdint.h>

#include "cu_consts.h"

#ifdef __CUDACC__
#define ZP_HD __host__ __device__ __forceinline__
#else
#define ZP_HD inline
#endif
/* full unrolling of the limb loops in the device pass (the host pass leaves it to -O2) */
#if defined(__CUDA_ARCH__)
#define ZP_UNROLL _Pragma("unroll")
#else
#define ZP_UNROLL
#endif

namespace zpcu {

/* Field parameter classes: N limbs, limb i of p / R mod p / R^2 mod p, and -p^-1 mod 2^64.
 * The limb tables are local constexpr arrays so that, with the loops unrolled, every limb is
 * an immediate operand in device code (no constant-memory loads). */
#define ZP_CU_FIELD_PARAMS(NAME, PFX)                                                         \
    struct NAME {                                                                             \
        static constexpr int N = PFX##_LIMBS;                                                 \
        static constexpr int BITS = PFX##_BITS;                                               \
        static constexpr uint64_t INV = PFX##_INV;                                            \
        static ZP_HD constexpr uint64_t p(int i) { constexpr uint64_t v[N] = PFX##_P; return v[i]; } \
        static ZP_HD constexpr uint64_t one(int i) { constexpr uint64_t v[N] = PFX##_ONE; return v[i]; } \
        static ZP_HD constexpr uint64_t r2(int i) { constexpr uint64_t v[N] = PFX##_R2; return v[i]; } \
    };                                                                                        \
    static_assert(NAME::p(0) * NAME::INV == ~(uint64_t)0, #NAME ": INV is not -1/p mod 2^64"); \
    static_assert(NAME::p(NAME::N - 1) != 0 && (NAME::p(0) & 1) == 1, #NAME ": bad modulus")

ZP_CU_FIELD_PARAMS(fr_bn254_params, ZP_CU_FR_BN254);
ZP_CU_FIELD_PARAMS(fq_bn254_params, ZP_CU_FQ_BN254);
ZP_CU_FIELD_PARAMS(fr_bls12_381_params, ZP_CU_FR_BLS12_381);
ZP_CU_FIELD_PARAMS(fq_bls12_381_params, ZP_CU_FQ_BLS12_381);

ZP_HD uint64_t mulhi64(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* (hi, lo) = x + y*z + c; cannot overflow 128 bits */
ZP_HD uint64_t mac(uint64_t *hi, uint64_t x, uint64_t y, uint64_t z, uint64_t c)
{
    uint64_t lo = y * z, h = mulhi64(y, z);
    lo += x;
    h += lo < x;
    lo += c;
    h += lo < c;
    *hi = h;
    return lo;
}

template <class P> struct fp {
    static constexpr int N = P::N;
    uint64_t l[N];

    ZP_HD static fp zero()
    {
        fp r;
ZP_UNROLL
        for (int i = 0; i < N; i++) r.l[i] = 0;
        return r;
    }
    ZP_HD static fp one()
    {
        fp r;
ZP_UNROLL
        for (int i = 0; i < N; i++) r.l[i] = P::one(i);
        return r;
    }
    ZP_HD bool is_zero() const
    {
        uint64_t acc = 0;
ZP_UNROLL
        for (int i = 0; i < N; i++) acc |= l[i];
        return acc == 0;
    }
    ZP_HD bool eq(const fp &b) const
    {
        uint64_t acc = 0;
ZP_UNROLL
        for (int i = 0; i < N; i++) acc |= l[i] ^ b.l[i];
        return acc == 0;
    }
};

/* r = t - p if t >= p (t < 2p, plus an optional carry bit above the top limb) */
template <class P> ZP_HD void fp_reduce_once(fp<P> &r, const uint64_t *t, uint64_t carry)
{
    uint64_t s[P::N], borrow = 0;
ZP_UNROLL
    for (int i = 0; i < P::N; i++) {
        uint64_t pi = P::p(i), d = t[i] - pi;
        uint64_t b1 = t[i] < pi;
        uint64_t d2 = d - borrow;
        uint64_t b2 = d < borrow;
        s[i] = d2;
        borrow = b1 | b2;
    }
    /* keep t when t < p, i.e. a borrow came out and no carry went in */
    bool keep = borrow > carry;
ZP_UNROLL
    for (int i = 0; i < P::N; i++) r.l[i] = keep ? t[i] : s[i];
}

template <class P> ZP_HD void fp_add(fp<P> &r, const fp<P> &a, const fp<P> &b)
{
    uint64_t t[P::N], carry = 0;
ZP_UNROLL
    for (int i = 0; i < P::N; i++) {
        uint64_t s = a.l[i] + carry;
        uint64_t c1 = s < carry;
        s += b.l[i];
        c1 += s < b.l[i];
        t[i] = s;
        carry = c1;
    }
    fp_reduce_once<P>(r, t, carry);
}

template <class P> ZP_HD void fp_dbl(fp<P> &r, const fp<P> &a) { fp_add<P>(r, a, a); }

template <class P> ZP_HD void fp_sub(fp<P> &r, const fp<P> &a, const fp<P> &b)
{
    uint64_t t[P::N], borrow = 0;
ZP_UNROLL
    for (int i = 0; i < P::N; i++) {
        uint64_t d = a.l[i] - b.l[i];
        uint64_t b1 = a.l[i] < b.l[i];
        uint64_t d2 = d - borrow;
        b1 |= d < borrow;
        t[i] = d2;
        borrow = b1;
    }
    /* add p back when it borrowed (mask instead of a branch) */
    uint64_t mask = (uint64_t)0 - borrow, carry = 0;
ZP_UNROLL
    for (int i = 0; i < P::N; i++) {
        uint64_t pi = P::p(i) & mask;
        uint64_t s = t[i] + carry;
        uint64_t c1 = s < carry;
        s += pi;
        c1 += s < pi;
        r.l[i] = s;
        carry = c1;
    }
}

template <class P> ZP_HD void fp_neg(fp<P> &r, const fp<P> &a)
{
    fp<P> z = fp<P>::zero();
    fp_sub<P>(r, z, a);
}

/* Montgomery product a*b/R mod p (CIOS). Requires p < 2^(64N-1), true for all four fields. */
template <class P> ZP_HD void fp_mul(fp<P> &r, const fp<P> &a, const fp<P> &b)
{
    constexpr int N = P::N;
    uint64_t t[N + 2];
ZP_UNROLL
    for (int i = 0; i < N + 2; i++) t[i] = 0;
ZP_UNROLL
    for (int i = 0; i < N; i++) {
        uint64_t c = 0, bi = b.l[i];
ZP_UNROLL
        for (int j = 0; j < N; j++) t[j] = mac(&c, t[j], a.l[j], bi, c);
        uint64_t s = t[N] + c;
        t[N + 1] = s < c;
        t[N] = s;
        uint64_t m = t[0] * P::INV;
        (void)mac(&c, t[0], m, P::p(0), 0);
ZP_UNROLL
        for (int j = 1; j < N; j++) t[j - 1] = mac(&c, t[j], m, P::p(j), c);
        s = t[N] + c;
        t[N - 1] = s;
        t[N] = t[N + 1] + (s < c);
    }
    fp_reduce_once<P>(r, t, t[N]);
}

template <class P> ZP_HD void fp_sqr(fp<P> &r, const fp<P> &a) { fp_mul<P>(r, a, a); }

template <class P> ZP_HD void fp_to_mont(fp<P> &r, const fp<P> &a)
{
    fp<P> r2;
ZP_UNROLL
    for (int i = 0; i < P::N; i++) r2.l[i] = P::r2(i);
    fp_mul<P>(r, a, r2);
}

template <class P> ZP_HD void fp_from_mont(fp<P> &r, const fp<P> &a)
{
    fp<P> one = fp<P>::zero();
    one.l[0] = 1;
    fp_mul<P>(r, a, one);
}

typedef fp<fr_bn254_params> fr_bn254;
typedef fp<fq_bn254_params> fq_bn254;
typedef fp<fr_bls12_381_params> fr_bls12_381;
typedef fp<fq_bls12_381_params> fq_bls12_381;

} /* namespace zpcu */
#endif
