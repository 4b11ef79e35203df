/* cu_device.cu - the CUDA device runtime (cu_int.h zp_cu_rt_ops_t) under the executor of
 * cu_exec.c: device selection (ordinal or UUID, PCI bus order) and the start-up banner, the
 * one CUDA error checker, streams and events, the stream-ordered memory pool, pinned host
 * memory, and the stream-ordered primitives of the device executor (CUB radix sort / scan /
 * max, compiled once here).
 *
 * Ownership: the runtime owns its two non-blocking streams and its events. Device scratch
 * comes from the device's stream-ordered pool (cudaMallocAsync), kept cached between proofs
 * (release threshold = max; cu_exec.c trims it before residency decisions and non-pool
 * allocations), so a proof allocates nothing from the driver after the first one.
 * Errors: every CUDA call goes through ZP_CU; a device error returns ZP_EDEVICE (an allocation
 * failure -ENOMEM, its last-error slot cleared so the next launch check does not see it).
 * Tests: tests/test_cuda.c (exits 77 without a device); the same executor on the host
 * emulation: tests/test_cuda_exec.c. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include "cu_api.h"
#include "cu_int.h"

extern "C" {
#include "lib/util/util.h"
}

#ifndef ZP_CUDA_ARCHS
#define ZP_CUDA_ARCHS "(arch list unknown)"
#endif

/* ---------------------------------------------------------------- checker */

extern "C" int zp_cu_check(int code, const char *expr, const char *file, int line)
{
    cudaError_t e = (cudaError_t)code;
    if (e == cudaSuccess) return 0;
    int rc = e == cudaErrorMemoryAllocation ? -ENOMEM : ZP_EDEVICE;
    if (e == cudaErrorMemoryAllocation) (void)cudaGetLastError();
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
    cudaError_t e = cudaMallocAsync(p, bytes ? bytes : 1, (cudaStream_t)s);
    if (e == cudaErrorMemoryAllocation) (void)cudaGetLastError();   /* not sticky: clear it */
    return ZP_CU(e);
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

/* ---------------------------------------------------------------- device selection */

extern "C" int zp_cu_parse_device(const char *spec, int *ordinal, unsigned char uuid[16])
{
    *ordinal = -1;
    memset(uuid, 0, 16);
    if (!spec || !*spec) return zp_err_set(ZP_EFORMAT, "CUDA device: empty spec");
    if (strspn(spec, "0123456789") == strlen(spec)) {
        char *end;
        long v = strtol(spec, &end, 10);
        if (*end || v < 0 || v > 4096) return zp_err_set(ZP_EFORMAT, "CUDA device \"%s\": not an ordinal", spec);
        *ordinal = (int)v;
        return 0;
    }
    const char *p = spec;
    if (!strncasecmp(p, "GPU-", 4)) p += 4;
    unsigned nib = 0;
    for (; *p; p++) {
        int v;
        if (*p == '-') continue;
        if (*p >= '0' && *p <= '9') v = *p - '0';
        else if (*p >= 'a' && *p <= 'f') v = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F') v = *p - 'A' + 10;
        else return zp_err_set(ZP_EFORMAT, "CUDA device \"%s\": '%c' is neither a digit of an ordinal nor of a UUID", spec, *p);
        if (nib == 32) return zp_err_set(ZP_EFORMAT, "CUDA device \"%s\": UUID longer than 32 hex digits", spec);
        uuid[nib / 2] |= (unsigned char)(nib % 2 ? v : v << 4);
        nib++;
    }
    if (nib != 32) return zp_err_set(ZP_EFORMAT, "CUDA device \"%s\": a UUID has 32 hex digits, this has %u", spec, nib);
    return 0;
}

/* ---------------------------------------------------------------- the runtime */

struct cu_rt {
    int dev;
    cudaDeviceProp prop;
    cudaMemPool_t pool;
    cudaStream_t st[ZP_CU_NSTREAM];
    cudaEvent_t ev[ZP_CU_NEV];
};

static int set_dev(cu_rt *r) { return ZP_CU(cudaSetDevice(r->dev)); }

static void rt_close(void *rp)
{
    cu_rt *r = (cu_rt *)rp;
    if (!r) return;
    (void)cudaSetDevice(r->dev);
    for (int i = 0; i < ZP_CU_NSTREAM; i++)
        if (r->st[i]) (void)ZP_CU(cudaStreamSynchronize(r->st[i]));
    for (int i = 0; i < ZP_CU_NEV; i++)
        if (r->ev[i]) (void)ZP_CU(cudaEventDestroy(r->ev[i]));
    for (int i = 0; i < ZP_CU_NSTREAM; i++)
        if (r->st[i]) (void)ZP_CU(cudaStreamDestroy(r->st[i]));
    free(r);
}

static int rt_mem_info(void *rp, size_t *fr, size_t *tot) { (void)rp; return ZP_CU(cudaMemGetInfo(fr, tot)); }

static int rt_pool_usage(void *rp, size_t *used, size_t *reserved)
{
    cu_rt *r = (cu_rt *)rp;
    uint64_t u = 0, v = 0;
    int rc;
    if ((rc = ZP_CU(cudaMemPoolGetAttribute(r->pool, cudaMemPoolAttrUsedMemCurrent, &u))) ||
        (rc = ZP_CU(cudaMemPoolGetAttribute(r->pool, cudaMemPoolAttrReservedMemCurrent, &v))))
        return rc;
    *used = (size_t)u;
    *reserved = (size_t)v;
    return 0;
}

static int rt_pool_trim(void *rp)
{
    cu_rt *r = (cu_rt *)rp;
    int rc;
    /* frees still queued in stream order are not "unused" yet: let them land first */
    if ((rc = ZP_CU(cudaDeviceSynchronize()))) return rc;
    return ZP_CU(cudaMemPoolTrimTo(r->pool, 0));
}

static int rt_dmalloc(void *rp, void **p, size_t bytes)
{
    (void)rp;
    *p = NULL;
    return ZP_CU(cudaMalloc(p, bytes ? bytes : 1));
}

static int rt_dfree(void *rp, void *p) { (void)rp; return p ? ZP_CU(cudaFree(p)) : 0; }
static int rt_alloc(void *rp, int s, void **p, size_t bytes) { return zp_cu_x_alloc(((cu_rt *)rp)->st[s], p, bytes); }
static int rt_free(void *rp, int s, void *p) { return p ? ZP_CU(cudaFreeAsync(p, ((cu_rt *)rp)->st[s])) : 0; }

static int rt_h2d(void *rp, int s, void *d, const void *h, size_t bytes)
{
    return ZP_CU(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, ((cu_rt *)rp)->st[s]));
}

static int rt_d2h(void *rp, int s, void *h, const void *d, size_t bytes)
{
    return ZP_CU(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, ((cu_rt *)rp)->st[s]));
}

static int rt_record(void *rp, int s, int ev) { cu_rt *r = (cu_rt *)rp; return ZP_CU(cudaEventRecord(r->ev[ev], r->st[s])); }
static int rt_wait(void *rp, int s, int ev) { cu_rt *r = (cu_rt *)rp; return ZP_CU(cudaStreamWaitEvent(r->st[s], r->ev[ev], 0)); }
static int rt_sync(void *rp, int s) { return ZP_CU(cudaStreamSynchronize(((cu_rt *)rp)->st[s])); }

static int rt_elapsed(void *rp, int e0, int e1, float *ms)
{
    cu_rt *r = (cu_rt *)rp;
    *ms = 0;
    return ZP_CU(cudaEventElapsedTime(ms, r->ev[e0], r->ev[e1]));
}

static int rt_host_register(void *rp, void *p, size_t len)
{
    cu_rt *r = (cu_rt *)rp;
    int ok = 0, rc;
    if ((rc = ZP_CU(cudaDeviceGetAttribute(&ok, cudaDevAttrHostRegisterSupported, r->dev)))) return rc;
    if (!ok) return zp_err_set(ZP_ENODEV, "CUDA device %d does not support cudaHostRegister", r->dev);
    /* a read-only mapping (the proving key in the shm key store is mapped PROT_READ) is refused
     * without cudaHostRegisterReadOnly: retry with it (the failed first call leaves no sticky
     * error; clear the last-error slot before the checked retry) */
    cudaError_t e0 = cudaHostRegister(p, len, cudaHostRegisterPortable);
    if (e0 == cudaSuccess) return 0;
    (void)cudaGetLastError();
    rc = ZP_CU(cudaHostRegister(p, len, cudaHostRegisterPortable | cudaHostRegisterReadOnly));
    if (rc == 0) zp_log(ZP_LOG_INFO, "cuda: %p (%zu bytes) registered read-only (%s)", p, len, cudaGetErrorString(e0));
    return rc;
}

static int rt_host_unregister(void *rp, void *p) { (void)rp; return ZP_CU(cudaHostUnregister(p)); }

static size_t rt_scratch(void *rp, size_t pairs)
{
    (void)rp;
    size_t sort = 0, scan = 0;
    int m = pairs > (size_t)INT_MAX ? INT_MAX : (int)pairs;
    cub::DoubleBuffer<uint32_t> dk(NULL, NULL), dv(NULL, NULL);
    if (cub::DeviceRadixSort::SortPairs(NULL, sort, dk, dv, m, 0, 32, (cudaStream_t)0) != cudaSuccess) {
        (void)cudaGetLastError();
        sort = pairs / 4 + ((size_t)64 << 20);   /* the query failed: a generous guess */
    }
    if (cub::DeviceScan::ExclusiveSum(NULL, scan, (const uint32_t *)NULL, (uint32_t *)NULL, m, (cudaStream_t)0) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        scan = (size_t)16 << 20;
    }
    return sort + 2 * scan + ((size_t)4 << 20);
}

#define BY_CURVE(call_bn, call_bls)                                                   \
    (curve == 1 ? (call_bn) : curve == 2 ? (call_bls) : zp_err_set(ZP_ECURVE, "cuda: curve %d", curve))

static int rt_msm(void *rp, int s, int curve, zp_cu_msm_out_t *out, const void *pts, const uint64_t *sc, size_t n,
                  const zp_cu_msm_tune_t *tune)
{
    cudaStream_t st = ((cu_rt *)rp)->st[s];
    return BY_CURVE(zp_cu_dev_msm_bn254(st, out, pts, sc, n, tune), zp_cu_dev_msm_bls12_381(st, out, pts, sc, n, tune));
}

static int rt_pow_table(void *rp, int s, int curve, uint64_t *out, size_t count, const uint64_t *lo, const uint64_t *hi,
                        unsigned k1)
{
    cudaStream_t st = ((cu_rt *)rp)->st[s];
    return BY_CURVE(zp_cu_dev_pow_table_bn254(st, out, count, lo, hi, k1),
                    zp_cu_dev_pow_table_bls12_381(st, out, count, lo, hi, k1));
}

static int rt_coset(void *rp, int s, int curve, uint64_t *x, unsigned log_n, const uint64_t *tw, const uint64_t *lo,
                    const uint64_t *hi, unsigned k1, int inverse)
{
    cudaStream_t st = ((cu_rt *)rp)->st[s];
    return BY_CURVE(zp_cu_dev_coset_bn254(st, x, log_n, tw, lo, hi, k1, inverse),
                    zp_cu_dev_coset_bls12_381(st, x, log_n, tw, lo, hi, k1, inverse));
}

static int rt_join(void *rp, int s, int curve, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n)
{
    cudaStream_t st = ((cu_rt *)rp)->st[s];
    return BY_CURVE(zp_cu_dev_join_bn254(st, a, b, c, n), zp_cu_dev_join_bls12_381(st, a, b, c, n));
}

static int rt_gather(void *rp, int s, int curve, uint64_t *out, const uint64_t *w, const uint64_t *dens,
                     const uint32_t *pfx, size_t words)
{
    cudaStream_t st = ((cu_rt *)rp)->st[s];
    return BY_CURVE(zp_cu_dev_gather_bn254(st, out, w, dens, pfx, words),
                    zp_cu_dev_gather_bls12_381(st, out, w, dens, pfx, words));
}

/* the current device is per thread: every thread that calls the executor binds it first */
static int rt_bind(void *rp) { return set_dev((cu_rt *)rp); }

static const zp_cu_rt_ops_t cuda_ops = {
    "cuda", rt_close, rt_mem_info, rt_pool_usage, rt_pool_trim, rt_dmalloc, rt_dfree, rt_alloc, rt_free,
    rt_h2d, rt_d2h, rt_record, rt_wait, rt_sync, rt_elapsed, rt_host_register, rt_host_unregister, rt_scratch,
    rt_msm, rt_pow_table, rt_coset, rt_join, rt_bind, rt_gather,
};

/* "580.95.05" from the kernel module, "" when not readable */
static void kernel_driver(char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[256];
    if (fgets(line, sizeof line, f)) {
        const char *k = strstr(line, "Kernel Module");
        if (k) {
            k += strlen("Kernel Module");
            while (*k == ' ' || *k == '\t') k++;
            size_t i = 0;
            while (k[i] && k[i] != ' ' && k[i] != '\n' && i + 1 < cap) {
                buf[i] = k[i];
                i++;
            }
            buf[i] = 0;
        }
    }
    fclose(f);
}

static void uuid_str(char *out, const unsigned char *u)
{
    sprintf(out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
            u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* spec (ordinal or UUID, NULL = "0") to a CUDA ordinal */
static int resolve(const char *spec, int count, int *dev)
{
    int ord;
    unsigned char want[16];
    int rc = zp_cu_parse_device(spec ? spec : "0", &ord, want);
    if (rc) return rc;
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (ord >= 0) {
        if (ord >= count)
            return zp_err_set(ZP_ENODEV, "CUDA device %d requested, %d visible (CUDA_VISIBLE_DEVICES=%s)", ord, count,
                              vis ? vis : "unset");
        *dev = ord;
        return 0;
    }
    for (int i = 0; i < count; i++) {
        cudaDeviceProp p;
        if ((rc = ZP_CU(cudaGetDeviceProperties(&p, i)))) return rc;
        if (!memcmp(p.uuid.bytes, want, 16)) {
            *dev = i;
            return 0;
        }
    }
    return zp_err_set(ZP_ENODEV, "CUDA device %s: no visible device has this UUID (%d visible, CUDA_VISIBLE_DEVICES=%s)",
                      spec, count, vis ? vis : "unset");
}

extern "C" int zp_cu_rt_cuda_open(const zp_cu_rt_ops_t **ops, void **rtp, zp_cu_devinfo_t *info, const char *spec,
                                  char *desc, size_t desc_cap)
{
    int count = 0, rc, dev = 0;
    *rtp = NULL;
    if (desc && desc_cap) desc[0] = 0;
    /* ordinals as nvidia-smi numbers them; must be set before the first CUDA call */
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError();   /* clear the (non-sticky) error */
        return zp_err_set(ZP_ENODEV, "no CUDA device: %s",
                          e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
    }
    if ((rc = resolve(spec, count, &dev))) return rc;
    cu_rt *r = (cu_rt *)calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    r->dev = dev;
    if ((rc = set_dev(r)) || (rc = ZP_CU(cudaGetDeviceProperties(&r->prop, dev)))) goto fail;
    /* the kernels of this build must exist for this device (SASS or PTX the driver can JIT) */
    if (zp_cu_dev_probe_bn254() || zp_cu_dev_probe_bls12_381()) {
        (void)cudaGetLastError();
        rc = zp_err_set(ZP_ENODEV, "CUDA device %d (%s) is compute capability %d.%d; this build has no kernels for it "
                        "(built for %s)", dev, r->prop.name, r->prop.major, r->prop.minor, ZP_CUDA_ARCHS);
        goto fail;
    }
    for (int i = 0; i < ZP_CU_NSTREAM; i++)
        if ((rc = ZP_CU(cudaStreamCreateWithFlags(&r->st[i], cudaStreamNonBlocking)))) goto fail;
    for (int i = 0; i < ZP_CU_NEV; i++)
        if ((rc = ZP_CU(cudaEventCreate(&r->ev[i])))) goto fail;
    {
        uint64_t keep = UINT64_MAX;
        if ((rc = ZP_CU(cudaDeviceGetDefaultMemPool(&r->pool, dev))) ||
            (rc = ZP_CU(cudaMemPoolSetAttribute(r->pool, cudaMemPoolAttrReleaseThreshold, &keep))))
            goto fail;
    }
    {
        int drv = 0, run = 0;
        size_t fr = 0, tot = 0;
        char kdrv[64], uu[48];
        (void)cudaDriverGetVersion(&drv);
        (void)cudaRuntimeGetVersion(&run);
        (void)cudaMemGetInfo(&fr, &tot);
        kernel_driver(kdrv, sizeof kdrv);
        uuid_str(uu, (const unsigned char *)r->prop.uuid.bytes);
        const char *order = getenv("CUDA_DEVICE_ORDER");
        if (desc && desc_cap)
            snprintf(desc, desc_cap,
                     "CUDA device %d (%s, PCI %04x:%02x:%02x.0, order %s): %s, sm_%d%d, %d SMs, %.1f GiB (%.1f free), "
                     "driver %s (CUDA %d.%d), runtime %d.%d, kernels %s",
                     dev, uu, r->prop.pciDomainID, r->prop.pciBusID, r->prop.pciDeviceID, order ? order : "default",
                     r->prop.name, r->prop.major, r->prop.minor, r->prop.multiProcessorCount,
                     (double)tot / (1 << 30), (double)fr / (1 << 30), kdrv[0] ? kdrv : "?", drv / 1000, drv % 1000 / 10,
                     run / 1000, run % 1000 / 10, ZP_CUDA_ARCHS);
    }
    info->total_mem = r->prop.totalGlobalMem;
    info->sms = (unsigned)r->prop.multiProcessorCount;
    info->threads_per_sm = (unsigned)r->prop.maxThreadsPerMultiProcessor;
    *ops = &cuda_ops;
    *rtp = r;
    return 0;
fail:
    rt_close(r);
    return rc;
}
