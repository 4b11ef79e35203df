/* cu_hostemu.cu - host emulation of the CUDA backend's arithmetic and algorithms: the very
 * templates of cu_field.cuh, cu_curve.cuh, cu_msm.cuh and cu_ntt.cuh, run on the CPU by an
 * executor whose "kernel launch" is a loop over the thread index, whose sort is a stable
 * counting sort and whose scans are serial. It holds no kernels, so it runs on any machine
 * nvcc can build for; tests/test_cuda_host.c compares its results with lib/ff, lib/ec,
 * lib/msm and lib/ntt. The only code it does not cover is the device executor (launch
 * geometry, CUB, streams) in cu_device.cu. */
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"
#include "cu_msm.cuh"
#include "cu_ntt.cuh"

extern "C" {
#include "lib/util/util.h"
}

namespace {

struct exec_host {
    template <class F> int for_n(size_t n, const F &f)
    {
        for (size_t i = 0; i < n; i++) f(i);
        return 0;
    }
    int alloc(void **p, size_t bytes)
    {
        *p = malloc(bytes ? bytes : 1);
        if (!*p) return zp_err_set(-12, "host emulation: malloc(%zu) failed", bytes);
        /* poison, so that reads of never-written memory show up as wrong results */
        memset(*p, 0xa5, bytes);
        return 0;
    }
    void free(void *p) { ::free(p); }
    int memset0(void *p, size_t bytes)
    {
        memset(p, 0, bytes);
        return 0;
    }
    int to_host(void *dst, const void *src, size_t bytes)
    {
        memcpy(dst, src, bytes);
        return 0;
    }
    /* stable sort of (key, val) by the low key_bits of key; result in either buffer pair */
    int sort_pairs(uint32_t **ko, uint32_t **vo, uint32_t *k, uint32_t *k2, uint32_t *v, uint32_t *v2,
                   size_t m, unsigned key_bits)
    {
        size_t nk = (size_t)1 << key_bits;
        size_t *cnt = (size_t *)calloc(nk + 1, sizeof(size_t));
        if (!cnt) return zp_err_set(-12, "host emulation: calloc failed");
        for (size_t i = 0; i < m; i++) cnt[(k[i] & (nk - 1)) + 1]++;
        for (size_t i = 1; i <= nk; i++) cnt[i] += cnt[i - 1];
        for (size_t i = 0; i < m; i++) {
            size_t at = cnt[k[i] & (nk - 1)]++;
            k2[at] = k[i];
            v2[at] = v[i];
        }
        ::free(cnt);
        *ko = k2;
        *vo = v2;
        return 0;
    }
    int scan_excl(uint32_t *out, const uint32_t *in, size_t n, uint32_t *total)
    {
        uint32_t s = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t x = in[i];
            out[i] = s;
            s += x;
        }
        *total = n ? out[n - 1] : 0;
        return 0;
    }
    int max_u32(uint32_t *out, const uint32_t *in, size_t n)
    {
        uint32_t m = 0;
        for (size_t i = 0; i < n; i++) m = in[i] > m ? in[i] : m;
        *out = m;
        return 0;
    }
};

template <class P> void fp_op(int op, uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    zpcu::fp<P> x, y, z;
    memcpy(x.l, a, sizeof x.l);
    if (b)
        memcpy(y.l, b, sizeof y.l);
    else
        y = zpcu::fp<P>::zero();
    switch (op) {
    case ZP_CU_OP_ADD: zpcu::fp_add(z, x, y); break;
    case ZP_CU_OP_SUB: zpcu::fp_sub(z, x, y); break;
    case ZP_CU_OP_NEG: zpcu::fp_neg(z, x); break;
    case ZP_CU_OP_DBL: zpcu::fp_dbl(z, x); break;
    case ZP_CU_OP_MUL: zpcu::fp_mul(z, x, y); break;
    case ZP_CU_OP_SQR: zpcu::fp_sqr(z, x); break;
    case ZP_CU_OP_TO_MONT: zpcu::fp_to_mont(z, x); break;
    case ZP_CU_OP_FROM_MONT: zpcu::fp_from_mont(z, x); break;
    default: z = zpcu::fp<P>::zero(); break;
    }
    memcpy(r, z.l, sizeof z.l);
}

template <class C> void g1_op(int op, uint64_t *r_jac, const void *p_aff, size_t k, uint32_t k32)
{
    typedef zpcu::g1_affine<C> A;
    typedef zpcu::g1_xyzz<C> X;
    const A *p = (const A *)p_aff;
    X acc, acc2, t;
    acc.set_inf();
    acc2.set_inf();
    switch (op) {
    case ZP_CU_G1_SUM_FULL:
        for (size_t i = 0; i < k / 2; i++) zpcu::xyzz_add_affine<C>(acc, p[i]);
        for (size_t i = k / 2; i < k; i++) zpcu::xyzz_add_affine<C>(acc2, p[i]);
        zpcu::xyzz_add<C>(acc, acc2);
        break;
    case ZP_CU_G1_SUM_SIGNED:
        for (size_t i = 0; i < k; i++) zpcu::xyzz_add_affine_signed<C>(acc, p[i], (i & 1) != 0);
        break;
    default:
        for (size_t i = 0; i < k; i++) zpcu::xyzz_add_affine<C>(acc, p[i]);
        if (op == ZP_CU_G1_DBL) zpcu::xyzz_dbl<C>(acc, acc);
        if (op == ZP_CU_G1_MUL_SMALL) {
            zpcu::xyzz_mul_small<C>(t, acc, k32);
            acc = t;
        }
        break;
    }
    zpcu::g1_jac<C> j;
    zpcu::xyzz_to_jac<C>(j, acc);
    memcpy(r_jac, &j, sizeof j);
}

template <class C>
int host_msm(zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars, size_t n,
             const zp_cu_msm_tune_t *tune)
{
    exec_host ex;
    zpcu::msm_tune t = {0, 0, 0, 0};
    if (tune) {
        t.c = tune->c;
        t.task = tune->task;
        t.groups = tune->groups;
        t.max_pairs = tune->max_pairs;
    }
    static_assert(sizeof(zpcu::g1_jac<C>) <= sizeof out->win[0], "window slot too small");
    zpcu::g1_jac<C> *win = (zpcu::g1_jac<C> *)calloc(ZP_CU_MAX_WIN, sizeof *win);
    if (!win) return zp_err_set(-12, "host emulation: calloc failed");
    int rc = zpcu::msm_run<C>(ex, win, &out->c, (const zpcu::g1_affine<C> *)points, scalars, n, t);
    if (rc == 0) {
        out->nwin = zpcu::msm_windows(C::R_BITS, out->c);
        for (unsigned w = 0; w < out->nwin; w++) memcpy(out->win[w], &win[w], sizeof win[w]);
    }
    free(win);
    return rc;
}

template <class C>
int host_compute_h(unsigned log_n, const zp_cu_pow_table_t *tw, const zp_cu_pow_table_t *cs,
                   uint64_t *a, uint64_t *b, const uint64_t *c, uint64_t *h)
{
    typedef typename C::fr F;
    exec_host ex;
    size_t n = (size_t)1 << log_n;
    F *twt = (F *)malloc((n / 2 + 1) * sizeof(F));
    F *cc = (F *)malloc(n * sizeof(F));
    if (!twt || !cc) {
        free(twt);
        free(cc);
        return zp_err_set(-12, "host emulation: malloc failed");
    }
    memcpy(cc, c, n * sizeof(F));
    zpcu::pow_table_fn<F> pt = {twt, (const F *)tw->lo, (const F *)tw->hi, tw->k1};
    ex.for_n(n / 2, pt);
    F *vec[3] = {(F *)a, (F *)b, cc};
    for (int v = 0; v < 3; v++)
        zpcu::ntt_to_coset<C>(ex, vec[v], log_n, twt, (const F *)cs->lo, (const F *)cs->hi, cs->k1);
    zpcu::join_fn<F> jf = {(F *)a, (const F *)b, cc};
    ex.for_n(n, jf);
    memcpy(h, a, n * sizeof(F));
    free(twt);
    free(cc);
    return 0;
}

} /* namespace */

extern "C" void zp_cu_host_fp(int field, int op, uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    switch (field) {
    case ZP_CU_FR_BN254: fp_op<zpcu::fr_bn254_params>(op, r, a, b); break;
    case ZP_CU_FQ_BN254: fp_op<zpcu::fq_bn254_params>(op, r, a, b); break;
    case ZP_CU_FR_BLS12_381: fp_op<zpcu::fr_bls12_381_params>(op, r, a, b); break;
    case ZP_CU_FQ_BLS12_381: fp_op<zpcu::fq_bls12_381_params>(op, r, a, b); break;
    default: break;
    }
}

extern "C" void zp_cu_host_g1(int curve, int op, uint64_t *r_jac, const void *p_aff, size_t k, uint32_t k32)
{
    if (curve == zpcu::bn254::ID)
        g1_op<zpcu::bn254>(op, r_jac, p_aff, k, k32);
    else if (curve == zpcu::bls12_381::ID)
        g1_op<zpcu::bls12_381>(op, r_jac, p_aff, k, k32);
}

extern "C" int zp_cu_host_msm(int curve, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars,
                              size_t n, const zp_cu_msm_tune_t *tune)
{
    if (n >= 0x80000000u) return zp_err_set(ZP_ETOOBIG, "msm: %zu points, at most 2^31 - 1", n);
    if (curve == zpcu::bn254::ID) return host_msm<zpcu::bn254>(out, points, scalars, n, tune);
    if (curve == zpcu::bls12_381::ID) return host_msm<zpcu::bls12_381>(out, points, scalars, n, tune);
    return zp_err_set(ZP_ECURVE, "msm: curve %d", curve);
}

extern "C" int zp_cu_host_compute_h(int curve, unsigned log_n, const zp_cu_pow_table_t *tw,
                                    const zp_cu_pow_table_t *cs, uint64_t *a, uint64_t *b,
                                    const uint64_t *c, uint64_t *h)
{
    if (curve == zpcu::bn254::ID) return host_compute_h<zpcu::bn254>(log_n, tw, cs, a, b, c, h);
    if (curve == zpcu::bls12_381::ID) return host_compute_h<zpcu::bls12_381>(log_n, tw, cs, a, b, c, h);
    return zp_err_set(ZP_ECURVE, "compute_h: curve %d", curve);
}
