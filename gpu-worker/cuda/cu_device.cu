/* cu_device.cu - the CUDA context of the backend: device selection, the one CUDA error checker,
 * pinned host memory, resident proving-key bases, the stream-ordered primitives of the device
 * executor (CUB radix sort / scan / max, compiled once here) and the orchestration of a
 * proof's G1 part (H2D on a copy stream overlapped with the NTT and MSM kernels on a compute
 * stream, cudaEvent timing of each phase).
 *
 * Ownership: zp_cu_t owns its streams, events, the device copies of the bases, the cached
 * twiddle table and the registered-range list. Device scratch comes from the device's
 * stream-ordered memory pool (cudaMallocAsync), kept cached between proofs (release threshold
 * = max), so a proof allocates nothing from the driver after the first one.
 * Errors: every CUDA call goes through ZP_CU (cu_int.h); a device error returns ZP_EDEVICE and
 * the worker is expected to exit and be restarted clean (sticky errors poison the context).
 * Exported functions: cu_api.h. Tests: tests/test_cuda.c (exits 77 without a device). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include "cu_api.h"
#include "cu_int.h"

extern "C" {
#include "lib/util/util.h"
}

/* ---------------------------------------------------------------- checker */

extern "C" int zp_cu_check(int code, const char *expr, const char *file, int line)
{
    cudaError_t e = (cudaError_t)code;
    if (e == cudaSuccess) return 0;
    int rc = e == cudaErrorMemoryAllocation ? -ENOMEM : ZP_EDEVICE;
    zp_log(ZP_LOG_ERROR, "cuda: %s: %s (%s) at %s:%d", expr, cudaGetErrorString(e), cudaGetErrorName(e), file, line);
    zp_err_set(rc, "%s: %s (%s:%d)", expr, cudaGetErrorString(e), file, line);
    return rc;
}

extern "C" int zp_cu_x_launched(const char *what, const char *file, int line)
{
    return zp_cu_check((int)cudaGetLastError(), what, file, line);
}

/* ---------------------------------------------------------------- executor primitives */

extern "C" int zp_cu_x_alloc(void *s, void **p, size_t bytes)
{
    *p = NULL;
    return ZP_CU(cudaMallocAsync(p, bytes ? bytes : 1, (cudaStream_t)s));
}

extern "C" void zp_cu_x_free(void *s, void *p)
{
    if (p) (void)ZP_CU(cudaFreeAsync(p, (cudaStream_t)s));
}

extern "C" int zp_cu_x_memset0(void *s, void *p, size_t bytes)
{
    return ZP_CU(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)s));
}

extern "C" int zp_cu_x_to_host(void *s, void *dst, const void *src, size_t bytes)
{
    int rc = ZP_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)s));
    if (rc == 0) rc = ZP_CU(cudaStreamSynchronize((cudaStream_t)s));
    return rc;
}

extern "C" int zp_cu_x_sort_pairs(void *s, uint32_t **ko, uint32_t **vo, uint32_t *k, uint32_t *k2,
                                  uint32_t *v, uint32_t *v2, size_t m, unsigned key_bits)
{
    cudaStream_t st = (cudaStream_t)s;
    if (m > (size_t)INT_MAX) return zp_err_set(ZP_ETOOBIG, "msm sort: %zu pairs", m);
    cub::DoubleBuffer<uint32_t> dk(k, k2), dv(v, v2);
    size_t tmp_bytes = 0;
    void *tmp = NULL;
    int rc = ZP_CU(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, dk, dv, (int)m, 0, (int)key_bits, st));
    if (rc) return rc;
    if ((rc = zp_cu_x_alloc(s, &tmp, tmp_bytes))) return rc;
    rc = ZP_CU(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, dk, dv, (int)m, 0, (int)key_bits, st));
    zp_cu_x_free(s, tmp);
    *ko = dk.Current();
    *vo = dv.Current();
    return rc;
}

extern "C" int zp_cu_x_scan_excl(void *s, uint32_t *out, const uint32_t *in, size_t n, uint32_t *total)
{
    cudaStream_t st = (cudaStream_t)s;
    if (n > (size_t)INT_MAX) return zp_err_set(ZP_ETOOBIG, "scan: %zu items", n);
    size_t tmp_bytes = 0;
    void *tmp = NULL;
    int rc = ZP_CU(cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, in, out, (int)n, st));
    if (rc) return rc;
    if ((rc = zp_cu_x_alloc(s, &tmp, tmp_bytes))) return rc;
    rc = ZP_CU(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, in, out, (int)n, st));
    zp_cu_x_free(s, tmp);
    if (rc) return rc;
    /* in[n-1] is 0 by construction (the caller's sentinel), so the total is out[n-1] */
    return zp_cu_x_to_host(s, total, out + n - 1, sizeof *total);
}

extern "C" int zp_cu_x_max_u32(void *s, uint32_t *out, const uint32_t *in, size_t n)
{
    cudaStream_t st = (cudaStream_t)s;
    if (n > (size_t)INT_MAX) return zp_err_set(ZP_ETOOBIG, "max: %zu items", n);
    size_t tmp_bytes = 0;
    void *tmp = NULL;
    uint32_t *dmax = NULL;
    int rc = ZP_CU(cub::DeviceReduce::Max(NULL, tmp_bytes, in, dmax, (int)n, st));
    if (rc) return rc;
    if ((rc = zp_cu_x_alloc(s, &tmp, tmp_bytes + 16))) return rc;
    dmax = (uint32_t *)tmp;
    rc = ZP_CU(cub::DeviceReduce::Max((char *)tmp + 16, tmp_bytes, in, dmax, (int)n, st));
    if (rc == 0) rc = zp_cu_x_to_host(s, out, dmax, sizeof *out);
    zp_cu_x_free(s, tmp);
    return rc;
}

/* ---------------------------------------------------------------- context */

enum { MAX_REG = 64 };
static const size_t REG_CHUNK = (size_t)64 << 30;     /* cudaHostRegister at most 64 GiB a call */

struct zp_cu {
    int dev;
    cudaDeviceProp prop;
    cudaStream_t s_comp, s_copy;
    struct { void *p; size_t len; } reg[MAX_REG];
    unsigned nreg;
    /* bases of the current key */
    int curve;
    uintptr_t key_id;
    int resident;
    void *d_bases[4];
    const void *h_bases[4];
    size_t counts[4];
    /* twiddles w^i (i < n/2) of the last (curve, log_n) */
    int tw_curve;
    unsigned tw_log_n;
    uint64_t *d_tw;
};

static size_t g1a_bytes(int curve) { return curve == 2 ? 96 : 64; }
static size_t fr_bytes(void) { return 32; }

static int set_dev(zp_cu_t *cu) { return ZP_CU(cudaSetDevice(cu->dev)); }

extern "C" int zp_cu_open(zp_cu_t **cup, int device, char *desc, size_t desc_cap)
{
    int count = 0, rc;
    *cup = NULL;
    if (desc && desc_cap) desc[0] = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError();   /* clear the (non-sticky) error */
        return zp_err_set(ZP_ENODEV, "no CUDA device: %s",
                          e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
    }
    if (device < 0 || device >= count)
        return zp_err_set(ZP_ENODEV, "CUDA device %d requested, %d visible (CUDA_VISIBLE_DEVICES=%s)", device,
                          count, getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    zp_cu_t *cu = (zp_cu_t *)calloc(1, sizeof *cu);
    if (!cu) return -ENOMEM;
    cu->dev = device;
    if ((rc = set_dev(cu)) || (rc = ZP_CU(cudaGetDeviceProperties(&cu->prop, device)))) goto fail;
    /* the kernels of this build must exist for this device (sm_90 code + compute_90 PTX) */
    if (zp_cu_dev_probe_bn254() || zp_cu_dev_probe_bls12_381()) {
        (void)cudaGetLastError();
        rc = zp_err_set(ZP_ENODEV, "CUDA device %d (%s) is compute capability %d.%d; this build has no kernels for it "
                        "(built for sm_90)", device, cu->prop.name, cu->prop.major, cu->prop.minor);
        goto fail;
    }
    if ((rc = ZP_CU(cudaStreamCreateWithFlags(&cu->s_comp, cudaStreamNonBlocking))) ||
        (rc = ZP_CU(cudaStreamCreateWithFlags(&cu->s_copy, cudaStreamNonBlocking))))
        goto fail;
    {
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        if ((rc = ZP_CU(cudaDeviceGetDefaultMemPool(&pool, device))) ||
            (rc = ZP_CU(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep))))
            goto fail;
    }
    if (desc && desc_cap)
        snprintf(desc, desc_cap, "CUDA device %d: %s, %.1f GiB, compute capability %d.%d, %d SMs", device,
                 cu->prop.name, (double)cu->prop.totalGlobalMem / (1 << 30), cu->prop.major, cu->prop.minor,
                 cu->prop.multiProcessorCount);
    *cup = cu;
    return 0;
fail:
    zp_cu_close(&cu);
    return rc;
}

static void free_bases(zp_cu_t *cu)
{
    for (int i = 0; i < 4; i++) {
        if (cu->d_bases[i]) (void)ZP_CU(cudaFree(cu->d_bases[i]));
        cu->d_bases[i] = NULL;
        cu->h_bases[i] = NULL;
        cu->counts[i] = 0;
    }
    cu->key_id = 0;
    cu->curve = 0;
    cu->resident = 0;
}

extern "C" void zp_cu_close(zp_cu_t **cup)
{
    zp_cu_t *cu = *cup;
    if (!cu) return;
    (void)cudaSetDevice(cu->dev);
    if (cu->s_comp) (void)ZP_CU(cudaStreamSynchronize(cu->s_comp));
    if (cu->s_copy) (void)ZP_CU(cudaStreamSynchronize(cu->s_copy));
    while (cu->nreg) zp_cu_host_unregister(cu, cu->reg[cu->nreg - 1].p);
    free_bases(cu);
    if (cu->d_tw) (void)ZP_CU(cudaFree(cu->d_tw));
    if (cu->s_comp) (void)ZP_CU(cudaStreamDestroy(cu->s_comp));
    if (cu->s_copy) (void)ZP_CU(cudaStreamDestroy(cu->s_copy));
    free(cu);
    *cup = NULL;
}

/* ---------------------------------------------------------------- pinned memory */

static void prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, len, MADV_POPULATE_WRITE) == 0) return;
#endif
    /* read one byte a page: maps the pages without changing what other processes write */
    long pg = sysconf(_SC_PAGESIZE);
    volatile const char *c = (volatile const char *)p;
    for (size_t off = 0; off < len; off += (size_t)(pg > 0 ? pg : 4096)) (void)c[off];
}

static int unregister_chunks(void *p, size_t len)
{
    int rc = 0;
    for (size_t off = 0; off < len; off += REG_CHUNK) {
        int r = ZP_CU(cudaHostUnregister((char *)p + off));
        if (r && !rc) rc = r;
    }
    return rc;
}

extern "C" int zp_cu_host_register(zp_cu_t *cu, void *p, size_t len)
{
    int rc, ok = 0;
    if ((rc = set_dev(cu))) return rc;
    if (!p || !len) return zp_err_set(-EINVAL, "host_register: empty range");
    if (cu->nreg == MAX_REG) return zp_err_set(ZP_ETOOBIG, "host_register: more than %d ranges", MAX_REG);
    if ((rc = ZP_CU(cudaDeviceGetAttribute(&ok, cudaDevAttrHostRegisterSupported, cu->dev)))) return rc;
    if (!ok) return zp_err_set(ZP_ENODEV, "CUDA device %d does not support cudaHostRegister", cu->dev);
    uint64_t t0 = zp_now_ns();
    prefault(p, len);
    uint64_t t1 = zp_now_ns();
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < REG_CHUNK ? len - done : REG_CHUNK;
        /* a read-only mapping (the proving key in the shm key store is mapped PROT_READ) is
         * refused without cudaHostRegisterReadOnly: retry with it (the failed first call
         * leaves no sticky error; clear the last-error slot before the checked retry) */
        cudaError_t e0 = cudaHostRegister((char *)p + done, n, cudaHostRegisterPortable);
        if (e0 != cudaSuccess) {
            (void)cudaGetLastError();
            rc = ZP_CU(cudaHostRegister((char *)p + done, n, cudaHostRegisterPortable | cudaHostRegisterReadOnly));
        } else {
            rc = 0;
        }
        if (rc) {
            if (done) unregister_chunks(p, done);
            return rc;
        }
        done += n;
    }
    cu->reg[cu->nreg].p = p;
    cu->reg[cu->nreg].len = len;
    cu->nreg++;
    zp_log(ZP_LOG_INFO, "cuda: registered %.2f GiB at %p (prefault %.1f ms, register %.1f ms)",
           (double)len / (1 << 30), p, (t1 - t0) / 1e6, (zp_now_ns() - t1) / 1e6);
    return 0;
}

extern "C" int zp_cu_host_unregister(zp_cu_t *cu, void *p)
{
    int rc;
    for (unsigned i = 0; i < cu->nreg; i++) {
        if (cu->reg[i].p != p) continue;
        size_t len = cu->reg[i].len;
        cu->reg[i] = cu->reg[--cu->nreg];
        if ((rc = set_dev(cu))) return rc;
        return unregister_chunks(p, len);
    }
    return zp_err_set(-EINVAL, "host_unregister: %p was not registered", p);
}

/* ---------------------------------------------------------------- bases */

/* device memory a proof of 2^log_n needs besides the bases (NTT vectors, twiddles, the MSM
 * sort and accumulation buffers at their default budget of 2^30 pairs) */
static size_t work_bytes(int curve, unsigned log_n, size_t max_points)
{
    size_t n = (size_t)1 << log_n;
    size_t pairs = max_points * 17;
    if (pairs > ((size_t)1 << 30)) pairs = (size_t)1 << 30;
    size_t xyzz = 4 * (g1a_bytes(curve) / 2);
    return 3 * n * fr_bytes() + n / 2 * fr_bytes() + max_points * 32 + pairs * 16 + 2 * (pairs / 16 + (17u << 16)) * xyzz +
           ((size_t)1 << 30);
}

extern "C" int zp_cu_load_bases(zp_cu_t *cu, int curve, uintptr_t key_id, unsigned log_n,
                                const void *const bases[4], const size_t counts[4], int *resident)
{
    int rc;
    if ((rc = set_dev(cu))) return rc;
    if (cu->key_id == key_id && cu->curve == curve && key_id != 0) {
        *resident = cu->resident;
        return 0;
    }
    free_bases(cu);
    size_t total = 0, maxn = 0;
    for (int i = 0; i < 4; i++) {
        total += counts[i] * g1a_bytes(curve);
        maxn = counts[i] > maxn ? counts[i] : maxn;
    }
    size_t freeb = 0, totalb = 0;
    if ((rc = ZP_CU(cudaMemGetInfo(&freeb, &totalb)))) return rc;
    size_t need = total + work_bytes(curve, log_n, maxn);
    cu->curve = curve;
    cu->key_id = key_id;
    for (int i = 0; i < 4; i++) {
        cu->h_bases[i] = bases[i];
        cu->counts[i] = counts[i];
    }
    if (need > freeb) {
        zp_log(ZP_LOG_WARN, "cuda: key bases %.2f GiB + work %.2f GiB > %.2f GiB free: bases are copied per proof",
               (double)total / (1 << 30), (double)(need - total) / (1 << 30), (double)freeb / (1 << 30));
        *resident = 0;
        return 0;
    }
    uint64_t t0 = zp_now_ns();
    for (int i = 0; i < 4; i++) {
        size_t b = counts[i] * g1a_bytes(curve);
        if ((rc = ZP_CU(cudaMalloc(&cu->d_bases[i], b ? b : 1)))) goto fail;
        if (b && (rc = ZP_CU(cudaMemcpy(cu->d_bases[i], bases[i], b, cudaMemcpyHostToDevice)))) goto fail;
    }
    cu->resident = 1;
    *resident = 1;
    zp_log(ZP_LOG_INFO, "cuda: key bases resident, %.2f GiB in %.1f ms", (double)total / (1 << 30),
           (zp_now_ns() - t0) / 1e6);
    return 0;
fail:
    free_bases(cu);
    return rc;
}

/* ---------------------------------------------------------------- MSM, NTT, proof */

static int dev_msm(int curve, void *s, zp_cu_msm_out_t *out, const void *pts, const uint64_t *sc, size_t n,
                   const zp_cu_msm_tune_t *tune)
{
    if (n >= 0x80000000u) return zp_err_set(ZP_ETOOBIG, "msm: %zu points, at most 2^31 - 1", n);
    if (curve == 1) return zp_cu_dev_msm_bn254(s, out, pts, sc, n, tune);
    if (curve == 2) return zp_cu_dev_msm_bls12_381(s, out, pts, sc, n, tune);
    return zp_err_set(ZP_ECURVE, "cuda msm: curve %d", curve);
}

extern "C" int zp_cu_msm_g1(zp_cu_t *cu, int curve, zp_cu_msm_out_t *out, const void *points,
                            const uint64_t *scalars, size_t n, const zp_cu_msm_tune_t *tune)
{
    int rc, rc2;
    void *dp = NULL, *ds = NULL;
    cudaStream_t s = cu->s_comp;
    if ((rc = set_dev(cu))) return rc;
    if ((rc = zp_cu_x_alloc(s, &dp, n * g1a_bytes(curve))) || (rc = zp_cu_x_alloc(s, &ds, n * 32))) goto out;
    if (n && ((rc = ZP_CU(cudaMemcpyAsync(dp, points, n * g1a_bytes(curve), cudaMemcpyHostToDevice, s))) ||
              (rc = ZP_CU(cudaMemcpyAsync(ds, scalars, n * 32, cudaMemcpyHostToDevice, s)))))
        goto out;
    rc = dev_msm(curve, s, out, dp, (const uint64_t *)ds, n, tune);
out:
    zp_cu_x_free(s, ds);
    zp_cu_x_free(s, dp);
    rc2 = ZP_CU(cudaStreamSynchronize(s));
    return rc ? rc : rc2;
}

static float ev_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (ZP_CU(cudaEventElapsedTime(&ms, a, b))) return 0;
    return ms;
}

/* the twiddle table w^i (i < n/2) for (curve, log_n), built on the device from tw's two tables */
static int ensure_twiddles(zp_cu_t *cu, int curve, unsigned log_n, const zp_cu_pow_table_t *tw)
{
    int rc;
    if (cu->d_tw && cu->tw_curve == curve && cu->tw_log_n == log_n) return 0;
    if (cu->d_tw) (void)ZP_CU(cudaFree(cu->d_tw));
    cu->d_tw = NULL;
    size_t half = ((size_t)1 << log_n) / 2, nlo = (size_t)1 << tw->k1;
    void *dlo = NULL, *dhi = NULL;
    cudaStream_t s = cu->s_comp;
    if ((rc = ZP_CU(cudaMalloc((void **)&cu->d_tw, (half ? half : 1) * 32)))) return rc;
    if ((rc = zp_cu_x_alloc(s, &dlo, nlo * 32)) || (rc = zp_cu_x_alloc(s, &dhi, tw->nhi * 32)) ||
        (rc = ZP_CU(cudaMemcpyAsync(dlo, tw->lo, nlo * 32, cudaMemcpyHostToDevice, s))) ||
        (rc = ZP_CU(cudaMemcpyAsync(dhi, tw->hi, tw->nhi * 32, cudaMemcpyHostToDevice, s))))
        goto out;
    rc = curve == 1 ? zp_cu_dev_pow_table_bn254(s, cu->d_tw, half, (uint64_t *)dlo, (uint64_t *)dhi, tw->k1)
                    : zp_cu_dev_pow_table_bls12_381(s, cu->d_tw, half, (uint64_t *)dlo, (uint64_t *)dhi, tw->k1);
out:
    zp_cu_x_free(s, dhi);
    zp_cu_x_free(s, dlo);
    if (rc == 0) rc = ZP_CU(cudaStreamSynchronize(s));
    if (rc) {
        (void)cudaFree(cu->d_tw);
        cu->d_tw = NULL;
        return rc;
    }
    cu->tw_curve = curve;
    cu->tw_log_n = log_n;
    return 0;
}

enum { EV_H2D0, EV_A, EV_B, EV_C, EV_W, EV_NTT0, EV_NTT1, EV_M0, EV_M1, EV_M2, EV_M3, EV_M4, EV_D2H0, EV_D2H1, EV_N };

extern "C" int zp_cu_prove(zp_cu_t *cu, const zp_cu_prove_args_t *a, zp_cu_msm_out_t out[4], zp_cu_times_t *t)
{
    int rc, curve = a->curve;
    uint64_t t0 = zp_now_ns();
    size_t n = (size_t)1 << a->log_n, vb = n * 32;
    cudaStream_t sc = cu->s_comp, sx = cu->s_copy;
    cudaEvent_t ev[EV_N] = {0};
    void *d_a = NULL, *d_b = NULL, *d_c = NULL, *d_w = NULL, *d_cs = NULL, *d_base = NULL;
    uint64_t *d_cs_lo, *d_cs_hi;
    size_t ncs_lo = (size_t)1 << a->cs.k1;
    int with_msm = a->w != NULL;
    memset(t, 0, sizeof *t);
    if ((rc = set_dev(cu))) return rc;
    if (with_msm && (cu->curve != curve || !cu->key_id))
        return zp_err_set(ZP_ESTATE, "cuda prove: no key loaded for curve %d", curve);
    if (curve != 1 && curve != 2) return zp_err_set(ZP_ECURVE, "cuda prove: curve %d", curve);
    for (int i = 0; i < EV_N; i++)
        if ((rc = ZP_CU(cudaEventCreate(&ev[i])))) goto out;
    if ((rc = ensure_twiddles(cu, curve, a->log_n, &a->tw))) goto out;

    /* buffers (stream-ordered on the compute stream, then the copy stream waits for them) */
    if ((rc = zp_cu_x_alloc(sc, &d_a, vb)) || (rc = zp_cu_x_alloc(sc, &d_b, vb)) ||
        (rc = zp_cu_x_alloc(sc, &d_c, vb)) || (rc = zp_cu_x_alloc(sc, &d_cs, (ncs_lo + a->cs.nhi) * 32)) ||
        (with_msm && (rc = zp_cu_x_alloc(sc, &d_w, (size_t)a->n_vars * 32))))
        goto out;
    d_cs_lo = (uint64_t *)d_cs;
    d_cs_hi = d_cs_lo + 4 * ncs_lo;
    if ((rc = ZP_CU(cudaEventRecord(ev[EV_H2D0], sc))) || (rc = ZP_CU(cudaStreamWaitEvent(sx, ev[EV_H2D0], 0))))
        goto out;

    /* H2D on the copy stream, one event per vector */
    if ((rc = ZP_CU(cudaMemcpyAsync(d_cs_lo, a->cs.lo, ncs_lo * 32, cudaMemcpyHostToDevice, sx))) ||
        (rc = ZP_CU(cudaMemcpyAsync(d_cs_hi, a->cs.hi, a->cs.nhi * 32, cudaMemcpyHostToDevice, sx))) ||
        (rc = ZP_CU(cudaMemcpyAsync(d_a, a->a, vb, cudaMemcpyHostToDevice, sx))) ||
        (rc = ZP_CU(cudaEventRecord(ev[EV_A], sx))) ||
        (rc = ZP_CU(cudaMemcpyAsync(d_b, a->b, vb, cudaMemcpyHostToDevice, sx))) ||
        (rc = ZP_CU(cudaEventRecord(ev[EV_B], sx))) ||
        (rc = ZP_CU(cudaMemcpyAsync(d_c, a->c, vb, cudaMemcpyHostToDevice, sx))) ||
        (rc = ZP_CU(cudaEventRecord(ev[EV_C], sx))))
        goto out;
    if (with_msm && ((rc = ZP_CU(cudaMemcpyAsync(d_w, a->w, (size_t)a->n_vars * 32, cudaMemcpyHostToDevice, sx)))))
        goto out;
    if ((rc = ZP_CU(cudaEventRecord(ev[EV_W], sx)))) goto out;

    /* NTTs on the compute stream as each vector arrives */
    {
        void *vec[3] = {d_a, d_b, d_c};
        for (int v = 0; v < 3; v++) {
            if ((rc = ZP_CU(cudaStreamWaitEvent(sc, ev[EV_A + v], 0)))) goto out;
            if (v == 0 && (rc = ZP_CU(cudaEventRecord(ev[EV_NTT0], sc)))) goto out;
            rc = curve == 1 ? zp_cu_dev_coset_bn254(sc, (uint64_t *)vec[v], a->log_n, cu->d_tw, d_cs_lo, d_cs_hi, a->cs.k1)
                            : zp_cu_dev_coset_bls12_381(sc, (uint64_t *)vec[v], a->log_n, cu->d_tw, d_cs_lo, d_cs_hi,
                                                        a->cs.k1);
            if (rc) goto out;
        }
        rc = curve == 1 ? zp_cu_dev_join_bn254(sc, (uint64_t *)d_a, (uint64_t *)d_b, (uint64_t *)d_c, n)
                        : zp_cu_dev_join_bls12_381(sc, (uint64_t *)d_a, (uint64_t *)d_b, (uint64_t *)d_c, n);
        if (rc || (rc = ZP_CU(cudaEventRecord(ev[EV_NTT1], sc)))) goto out;
    }
    /* h (in d_a) back to the host on the copy stream, overlapped with the MSMs */
    if ((rc = ZP_CU(cudaStreamWaitEvent(sx, ev[EV_NTT1], 0))) || (rc = ZP_CU(cudaEventRecord(ev[EV_D2H0], sx))) ||
        (rc = ZP_CU(cudaMemcpyAsync(a->h, d_a, vb, cudaMemcpyDeviceToHost, sx))) ||
        (rc = ZP_CU(cudaEventRecord(ev[EV_D2H1], sx))))
        goto out;

    if (with_msm) {
        const uint64_t *sc_of[4] = {(const uint64_t *)d_w, (const uint64_t *)d_w,
                                    (const uint64_t *)d_w + 4 * ((size_t)a->n_public + 1), (const uint64_t *)d_a};
        size_t n_of[4] = {a->n_vars, a->n_vars, (size_t)a->n_vars - a->n_public - 1, n};
        if ((rc = ZP_CU(cudaStreamWaitEvent(sc, ev[EV_W], 0))) || (rc = ZP_CU(cudaEventRecord(ev[EV_M0], sc))))
            goto out;
        for (int m = 0; m < 4; m++) {
            if (n_of[m] > cu->counts[m]) {
                rc = zp_err_set(ZP_EMISMATCH, "cuda prove: MSM %d over %zu scalars, key has %zu bases", m, n_of[m],
                                cu->counts[m]);
                goto out;
            }
            const void *bases = cu->d_bases[m];
            if (!cu->resident) {    /* streaming fallback: this MSM's bases now, one buffer reused */
                size_t bb = n_of[m] * g1a_bytes(curve);
                if (!d_base && (rc = zp_cu_x_alloc(sc, &d_base, (cu->counts[0] > cu->counts[3] ? cu->counts[0] : cu->counts[3]) *
                                                                    g1a_bytes(curve))))
                    goto out;
                if (bb && (rc = ZP_CU(cudaMemcpyAsync(d_base, cu->h_bases[m], bb, cudaMemcpyHostToDevice, sc)))) goto out;
                bases = d_base;
            }
            if ((rc = dev_msm(curve, sc, &out[m], bases, sc_of[m], n_of[m], NULL))) goto out;
            if ((rc = ZP_CU(cudaEventRecord(ev[EV_M1 + m], sc)))) goto out;
        }
    }
    if ((rc = ZP_CU(cudaStreamSynchronize(sx))) || (rc = ZP_CU(cudaStreamSynchronize(sc)))) goto out;
    t->h2d_ns = (uint64_t)(ev_ms(ev[EV_H2D0], ev[EV_W]) * 1e6);
    t->ntt_ns = (uint64_t)(ev_ms(ev[EV_NTT0], ev[EV_NTT1]) * 1e6);
    t->d2h_ns = (uint64_t)(ev_ms(ev[EV_D2H0], ev[EV_D2H1]) * 1e6);
    if (with_msm)
        for (int m = 0; m < 4; m++) t->msm_ns[m] = (uint64_t)(ev_ms(ev[EV_M0 + m], ev[EV_M1 + m]) * 1e6);
out:
    zp_cu_x_free(sc, d_base);
    zp_cu_x_free(sc, d_w);
    zp_cu_x_free(sc, d_cs);
    zp_cu_x_free(sc, d_c);
    zp_cu_x_free(sc, d_b);
    zp_cu_x_free(sc, d_a);
    if (rc) {   /* let queued work finish (or fail) before the host buffers go away */
        (void)cudaStreamSynchronize(sx);
        (void)cudaStreamSynchronize(sc);
    }
    for (int i = 0; i < EV_N; i++)
        if (ev[i]) (void)ZP_CU(cudaEventDestroy(ev[i]));
    t->total_ns = zp_now_ns() - t0;
    return rc;
}

/* ---------------------------------------------------------------- H2D benchmark */

static int time_h2d(zp_cu_t *cu, void *dst, const void *src, size_t bytes, double *gbps)
{
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc;
    if ((rc = ZP_CU(cudaEventCreate(&e0))) || (rc = ZP_CU(cudaEventCreate(&e1)))) goto out;
    /* one warm-up copy, then the timed one */
    if ((rc = ZP_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cu->s_copy))) ||
        (rc = ZP_CU(cudaEventRecord(e0, cu->s_copy))) ||
        (rc = ZP_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cu->s_copy))) ||
        (rc = ZP_CU(cudaEventRecord(e1, cu->s_copy))) || (rc = ZP_CU(cudaEventSynchronize(e1))))
        goto out;
    *gbps = (double)bytes / (ev_ms(e0, e1) * 1e6);
out:
    if (e0) (void)cudaEventDestroy(e0);
    if (e1) (void)cudaEventDestroy(e1);
    return rc;
}

extern "C" int zp_cu_bench_h2d(zp_cu_t *cu, size_t bytes, double *gbps_pageable, double *gbps_pinned)
{
    int rc;
    void *d = NULL;
    char *h = (char *)malloc(bytes);
    if (!h) return -ENOMEM;
    memset(h, 1, bytes);
    *gbps_pageable = *gbps_pinned = 0;
    if ((rc = set_dev(cu)) || (rc = ZP_CU(cudaMalloc(&d, bytes)))) goto out;
    if ((rc = time_h2d(cu, d, h, bytes, gbps_pageable))) goto out;
    if ((rc = zp_cu_host_register(cu, h, bytes))) goto out;
    rc = time_h2d(cu, d, h, bytes, gbps_pinned);
    {
        int rc2 = zp_cu_host_unregister(cu, h);
        if (!rc) rc = rc2;
    }
out:
    if (d) (void)ZP_CU(cudaFree(d));
    free(h);
    return rc;
}
