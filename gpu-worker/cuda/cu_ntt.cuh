/* cu_ntt.cuh - the Fr polynomial work of the Groth16 prover (snarkjs's ifft / coset / fft /
 * joinABC), written once over an executor E (device or host emulation) and a curve C.
 *
 * Conventions are snarkjs's (lib/ntt/ntt.h): natural order in and out, w = w[log_n] =
 * 5^((r-1)/2^log_n), inverse includes 1/n, coset generator g = w[log_n+1]. Everything in
 * Montgomery form until h, which leaves in standard form.
 *   fwd(X)  = bit-reverse permutation, then log_n radix-2 Cooley-Tukey stages, twiddles
 *             tw[i] = w^i (i < n/2) from a table built on the executor from two small tables;
 *             Y_k = sum_j X_j w^(jk), no scaling.
 *   inverse + coset in one pass:  x'_k = Y_((n-k) mod n) * g^k / n   (since the inverse
 *             transform is (1/n) Y_(-k)), with g^k/n from two small tables (lo, hi).
 *   h_j = a_j*b_j - c_j, then out of Montgomery form.
 * Power tables: value(i) = hi[i >> k1] * lo[i & (2^k1 - 1)]; lo/hi are computed on the host
 * with lib/ff (backend_cuda.c zp_cuda_pow_tables) and copied in. */
#ifndef ZP_CU_NTT_CUH
#define ZP_CU_NTT_CUH
#include <stddef.h>
#include <stdint.h>

#include "cu_curve.cuh"

namespace zpcu {

ZP_HD uint64_t bitrev64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __brevll(x);
#else
    x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
    x = ((x >> 8) & 0x00ff00ff00ff00ffULL) | ((x & 0x00ff00ff00ff00ffULL) << 8);
    x = ((x >> 16) & 0x0000ffff0000ffffULL) | ((x & 0x0000ffff0000ffffULL) << 16);
    return (x >> 32) | (x << 32);
#endif
}

/* table[i] = hi[i >> k1] * lo[i & mask] for i < count */
template <class F> struct pow_table_fn {
    F *out;
    const F *lo, *hi;
    unsigned k1;
    ZP_HD void operator()(size_t i) const
    {
        fp_mul(out[i], hi[i >> k1], lo[i & (((size_t)1 << k1) - 1)]);
    }
};

template <class F> struct bitrev_fn {
    F *x;
    unsigned log_n;
    ZP_HD void operator()(size_t i) const
    {
        size_t r = log_n ? (size_t)(bitrev64(i) >> (64 - log_n)) : 0;
        if (i < r) {
            F t = x[i];
            x[i] = x[r];
            x[r] = t;
        }
    }
};

/* stage st (half = 2^st): thread t does one butterfly */
template <class F> struct butterfly_fn {
    F *x;
    const F *tw;                  /* n/2 forward twiddles */
    unsigned st, log_n;
    ZP_HD void operator()(size_t t) const
    {
        size_t half = (size_t)1 << st;
        size_t j = t & (half - 1);
        size_t i0 = ((t >> st) << (st + 1)) + j, i1 = i0 + half;
        F v, u = x[i0];
        fp_mul(v, x[i1], tw[j << (log_n - 1 - st)]);
        fp_add(x[i0], u, v);
        fp_sub(x[i1], u, v);
    }
};

/* x'_k = Y_((n-k) mod n) * f(k), f(k) = hi[k >> k1] * lo[k & mask] = g^k / n.
 * Thread k in [0, n/2] handles the pair (k, n-k) in place. */
template <class F> struct revscale_fn {
    F *x;
    const F *lo, *hi;
    unsigned k1, log_n;
    ZP_HD void f(F &r, size_t k) const { fp_mul(r, hi[k >> k1], lo[k & (((size_t)1 << k1) - 1)]); }
    ZP_HD void operator()(size_t k) const
    {
        size_t n = (size_t)1 << log_n, k2 = (n - k) & (n - 1);
        F a = x[k], b = x[k2], fa, fb;
        f(fa, k);
        if (k2 == k) {
            fp_mul(x[k], a, fa);
            return;
        }
        f(fb, k2);
        fp_mul(x[k], b, fa);
        fp_mul(x[k2], a, fb);
    }
};

/* a compacted key's MSM scalars (bellman's A / B): out[pfx[i] + j] = w[64 i + the j-th set
 * bit of dens[i]], one index per 64-wire word; scalars are 4 limbs on both curves */
struct gather_fn {
    uint64_t *out;
    const uint64_t *w, *dens;
    const uint32_t *pfx;
    ZP_HD void operator()(size_t i) const
    {
        uint64_t v = dens[i];
        uint64_t *o = out + 4 * (size_t)pfx[i];
        while (v) {
#ifdef __CUDA_ARCH__
            unsigned b = (unsigned)__ffsll((long long)v) - 1;
#else
            unsigned b = (unsigned)__builtin_ctzll(v);
#endif
            const uint64_t *x = w + 4 * (64 * i + b);
            o[0] = x[0];
            o[1] = x[1];
            o[2] = x[2];
            o[3] = x[3];
            o += 4;
            v &= v - 1;
        }
    }
};

template <class F> struct join_fn {   /* h = from_mont(a*b - c), written into a */
    F *a;
    const F *b, *c;
    ZP_HD void operator()(size_t i) const
    {
        F t;
        fp_mul(t, a[i], b[i]);
        fp_sub(t, t, c[i]);
        fp_from_mont(a[i], t);
    }
};

/* forward transform, natural order in and out, unscaled */
template <class C, class E>
int ntt_fwd(E &ex, typename C::fr *x, unsigned log_n, const typename C::fr *tw)
{
    typedef typename C::fr F;
    int rc;
    size_t n = (size_t)1 << log_n;
    bitrev_fn<F> br = {x, log_n};
    if ((rc = ex.for_n(n, br))) return rc;
    for (unsigned st = 0; st < log_n; st++) {
        butterfly_fn<F> bf = {x, tw, st, log_n};
        if ((rc = ex.for_n(n / 2, bf))) return rc;
    }
    return 0;
}

/* x <- scale(ifft(x)): x'_k = (ifft x)_k * n * f(k), f(k) = cs_hi[k >> k1] * cs_lo[k & mask];
 * with f(k) = s^k / n the coset shift of the coefficients, with f(k) = s^-k * z / n
 * (bellman's H, cu_exec.c) the inverse transform off the coset s*<w>, times z */
template <class C, class E>
int ntt_inv_scaled(E &ex, typename C::fr *x, unsigned log_n, const typename C::fr *tw,
                   const typename C::fr *cs_lo, const typename C::fr *cs_hi, unsigned cs_k1)
{
    typedef typename C::fr F;
    int rc;
    if ((rc = ntt_fwd<C>(ex, x, log_n, tw))) return rc;
    revscale_fn<F> rs = {x, cs_lo, cs_hi, cs_k1, log_n};
    return ex.for_n(((size_t)1 << log_n) / 2 + 1 - (log_n == 0), rs);
}

/* x <- fft(coset(ifft(x))): the "odd" evaluations of snarkjs's groth16 prover (f(k) = g^k / n),
 * or the evaluations on bellman's coset 7*<w> (f(k) = 7^k / n, w bellman's root) */
template <class C, class E>
int ntt_to_coset(E &ex, typename C::fr *x, unsigned log_n, const typename C::fr *tw,
                 const typename C::fr *cs_lo, const typename C::fr *cs_hi, unsigned cs_k1)
{
    int rc;
    if ((rc = ntt_inv_scaled<C>(ex, x, log_n, tw, cs_lo, cs_hi, cs_k1))) return rc;
    return ntt_fwd<C>(ex, x, log_n, tw);
}

} /* namespace zpcu */
#endif
