/* cu_dev.cuh - the device executor and the per-curve device drivers, written once and
 * instantiated by cu_dev_bn254.cu and cu_dev_bls12_381.cu (ZP_CU_DEV_CURVE names the curve).
 *
 * exec_dev runs the functors of cu_msm.cuh / cu_ntt.cuh as kernels (k_for: one thread per
 * index) on one stream. Block sizes come from the occupancy API, once per kernel (the 6-limb
 * point code needs many registers: a fixed block size that does not fit is a launch failure,
 * which is a device error); every kernel carries __launch_bounds__(K_MAX_THREADS) so the
 * compiler never builds one that cannot launch at the sizes the occupancy API may pick. It
 * takes its allocation, sort, scan and max from cu_device.cu (cu_int.h), so CUB is compiled
 * once. Every launch is checked (cudaGetLastError); execution errors surface at the next
 * synchronizing call (to_host / scan / max), which goes through the same checker. */
#ifndef ZP_CU_DEV_CUH
#define ZP_CU_DEV_CUH
#include <cuda_runtime.h>

#include "cu_int.h"
#include "cu_msm.cuh"
extern "C" {
#include "lib/util/util.h"
}
#include "cu_ntt.cuh"

namespace zpcu {

enum { K_MAX_THREADS = 256 };

template <class F> __global__ void __launch_bounds__(K_MAX_THREADS) k_for(size_t n, F f)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) f(i);
}

/* the block size of k_for<F> on the current device: the occupancy API's choice, cached per
 * kernel (one device per process); 0 with the error set when the query fails */
template <class F> int block_size(unsigned *bs)
{
    static int cached = 0;
    if (cached > 0) {
        *bs = (unsigned)cached;
        return 0;
    }
    int min_grid = 0, b = 0;
    int rc = ZP_CU(cudaOccupancyMaxPotentialBlockSize(&min_grid, &b, k_for<F>, 0, K_MAX_THREADS));
    if (rc) return rc;
    if (b <= 0) return zp_err_set(ZP_EDEVICE, "occupancy API: no block size for %s", __PRETTY_FUNCTION__);
    cached = b;
    *bs = (unsigned)b;
    return 0;
}

struct exec_dev {
    cudaStream_t s;
    template <class F> int for_n(size_t n, const F &f)
    {
        if (n == 0) return 0;
        unsigned bs = 0;
        int rc = block_size<F>(&bs);
        if (rc) return rc;
        size_t blocks = (n + bs - 1) / bs;
        if (blocks > 0x7fffffffu) return zp_err_set(ZP_ETOOBIG, "kernel launch: %zu blocks", blocks);
        k_for<F><<<(unsigned)blocks, bs, 0, s>>>(n, f);
        return zp_cu_x_launched(__PRETTY_FUNCTION__, __FILE__, __LINE__);
    }
    int alloc(void **p, size_t bytes) { return zp_cu_x_alloc(s, p, bytes); }
    void free(void *p) { zp_cu_x_free(s, p); }
    int memset0(void *p, size_t bytes) { return zp_cu_x_memset0(s, p, bytes); }
    int to_host(void *dst, const void *src, size_t bytes) { return zp_cu_x_to_host(s, dst, src, bytes); }
    int sort_pairs(uint32_t **ko, uint32_t **vo, uint32_t *k, uint32_t *k2, uint32_t *v, uint32_t *v2,
                   size_t m, unsigned key_bits)
    {
        return zp_cu_x_sort_pairs(s, ko, vo, k, k2, v, v2, m, key_bits);
    }
    int scan_excl(uint32_t *out, const uint32_t *in, size_t n, uint32_t *total)
    {
        return zp_cu_x_scan_excl(s, out, in, n, total);
    }
    int max_u32(uint32_t *out, const uint32_t *in, size_t n) { return zp_cu_x_max_u32(s, out, in, n); }
};

template <class C>
int dev_msm(void *s, zp_cu_msm_out_t *out, const void *points, const uint64_t *scalars, size_t n,
            const zp_cu_msm_tune_t *tune)
{
    exec_dev ex = {(cudaStream_t)s};
    msm_tune t = {0, 0, 0, 0, 0};
    if (tune) {
        t.c = tune->c;
        t.task = tune->task;
        t.groups = tune->groups;
        t.max_pairs = tune->max_pairs;
        t.par = tune->par;
    }
    static_assert(sizeof(g1_jac<C>) <= sizeof out->win[0], "window slot too small");
    g1_jac<C> win[ZP_CU_MAX_WIN];
    out->max_pairs = msm_make_plan(n, C::R_BITS, sizeof(g1_xyzz<C>), sizeof(g1_jac<C>), t).max_pairs;
    int rc = msm_run<C>(ex, win, &out->c, &out->batches, (const g1_affine<C> *)points, scalars, n, t);
    if (rc == 0) {
        out->nwin = msm_windows(C::R_BITS, out->c);
        for (unsigned w = 0; w < out->nwin; w++) memcpy(out->win[w], &win[w], sizeof win[w]);
    }
    return rc;
}

template <class C>
int dev_pow_table(void *s, uint64_t *out, size_t count, const uint64_t *lo, const uint64_t *hi, unsigned k1)
{
    typedef typename C::fr F;
    exec_dev ex = {(cudaStream_t)s};
    pow_table_fn<F> f = {(F *)out, (const F *)lo, (const F *)hi, k1};
    return ex.for_n(count, f);
}

template <class C>
int dev_coset(void *s, uint64_t *x, unsigned log_n, const uint64_t *tw, const uint64_t *cs_lo,
              const uint64_t *cs_hi, unsigned cs_k1, int inverse)
{
    typedef typename C::fr F;
    exec_dev ex = {(cudaStream_t)s};
    if (inverse) return ntt_inv_scaled<C>(ex, (F *)x, log_n, (const F *)tw, (const F *)cs_lo, (const F *)cs_hi, cs_k1);
    return ntt_to_coset<C>(ex, (F *)x, log_n, (const F *)tw, (const F *)cs_lo, (const F *)cs_hi, cs_k1);
}

template <class C> int dev_join(void *s, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n)
{
    typedef typename C::fr F;
    exec_dev ex = {(cudaStream_t)s};
    join_fn<F> f = {(F *)a, (const F *)b, (const F *)c};
    return ex.for_n(n, f);
}

template <class C>
int dev_gather(void *s, uint64_t *out, const uint64_t *w, const uint64_t *dens, const uint32_t *pfx, size_t words)
{
    exec_dev ex = {(cudaStream_t)s};
    gather_fn f = {out, w, dens, pfx};
    return ex.for_n(words, f);
}

/* 0 when the kernels of this build can run on the current device */
template <class C> int dev_probe(void)
{
    cudaFuncAttributes attr;
    return ZP_CU(cudaFuncGetAttributes(&attr, k_for<msm_acc0_fn<C> >));
}

} /* namespace zpcu */

#define ZP_CU_DEV_DEFINE(C)                                                                       \
    extern "C" int zp_cu_dev_msm_##C(void *s, zp_cu_msm_out_t *out, const void *points,          \
                                     const uint64_t *scalars, size_t n, const zp_cu_msm_tune_t *tune) \
    {                                                                                             \
        return zpcu::dev_msm<zpcu::C>(s, out, points, scalars, n, tune);                          \
    }                                                                                             \
    extern "C" int zp_cu_dev_pow_table_##C(void *s, uint64_t *out, size_t count, const uint64_t *lo, \
                                           const uint64_t *hi, unsigned k1)                       \
    {                                                                                             \
        return zpcu::dev_pow_table<zpcu::C>(s, out, count, lo, hi, k1);                           \
    }                                                                                             \
    extern "C" int zp_cu_dev_coset_##C(void *s, uint64_t *x, unsigned log_n, const uint64_t *tw,  \
                                       const uint64_t *cs_lo, const uint64_t *cs_hi, unsigned cs_k1, \
                                       int inverse)                                               \
    {                                                                                             \
        return zpcu::dev_coset<zpcu::C>(s, x, log_n, tw, cs_lo, cs_hi, cs_k1, inverse);           \
    }                                                                                             \
    extern "C" int zp_cu_dev_join_##C(void *s, uint64_t *a, const uint64_t *b, const uint64_t *c, \
                                      size_t n)                                                   \
    {                                                                                             \
        return zpcu::dev_join<zpcu::C>(s, a, b, c, n);                                            \
    }                                                                                             \
    extern "C" int zp_cu_dev_gather_##C(void *s, uint64_t *out, const uint64_t *w, const uint64_t *dens, \
                                        const uint32_t *pfx, size_t words)                       \
    {                                                                                             \
        return zpcu::dev_gather<zpcu::C>(s, out, w, dens, pfx, words);                            \
    }                                                                                             \
    extern "C" int zp_cu_dev_probe_##C(void) { return zpcu::dev_probe<zpcu::C>(); }
#endif
