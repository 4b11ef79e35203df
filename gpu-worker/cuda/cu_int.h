/* cu_int.h - private C boundary between the .cu files of the CUDA backend: the CUDA error
 * checker, the stream-ordered primitives of the device executor (allocation, CUB sort / scan /
 * max) defined once in cu_device.cu, and the per-curve kernels drivers of cu_dev_<curve>.cu.
 * Plain C types; streams are passed as void * (cudaStream_t). Not for use outside
 * gpu-worker/cuda/. */
#ifndef ZP_CU_INT_H
#define ZP_CU_INT_H
#include <stddef.h>
#include <stdint.h>

#include "cu_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the one CUDA checker: 0 for cudaSuccess, else logs "expr: error string (file:line)", sets the
 * zp_err detail and returns ZP_EDEVICE (-ENOMEM for an allocation failure). code is a
 * cudaError_t. */
int zp_cu_check(int code, const char *expr, const char *file, int line);
#define ZP_CU(expr) zp_cu_check((int)(expr), #expr, __FILE__, __LINE__)

/* stream-ordered primitives on stream s (cu_device.cu) */
int zp_cu_x_alloc(void *s, void **p, size_t bytes);
void zp_cu_x_free(void *s, void *p);
int zp_cu_x_memset0(void *s, void *p, size_t bytes);
int zp_cu_x_to_host(void *s, void *dst, const void *src, size_t bytes);    /* synchronizes s */
/* radix sort of m pairs by the low key_bits of the keys; *ko / *vo = the buffers holding the
 * result (k/v or k2/v2) */
int zp_cu_x_sort_pairs(void *s, uint32_t **ko, uint32_t **vo, uint32_t *k, uint32_t *k2, uint32_t *v,
                       uint32_t *v2, size_t m, unsigned key_bits);
int zp_cu_x_scan_excl(void *s, uint32_t *out, const uint32_t *in, size_t n, uint32_t *total);
int zp_cu_x_max_u32(void *s, uint32_t *out, const uint32_t *in, size_t n);
/* the error of the last launch on this thread (cudaGetLastError), through the checker */
int zp_cu_x_launched(const char *what, const char *file, int line);

/* per-curve device drivers (cu_dev_bn254.cu, cu_dev_bls12_381.cu); all device pointers */
#define ZP_CU_DEV_API(C)                                                                         \
    int zp_cu_dev_msm_##C(void *s, zp_cu_msm_out_t *out, const void *points,                   \
                          const uint64_t *scalars, size_t n, const zp_cu_msm_tune_t *tune);     \
    int zp_cu_dev_pow_table_##C(void *s, uint64_t *out, size_t count, const uint64_t *lo,      \
                                const uint64_t *hi, unsigned k1);                               \
    int zp_cu_dev_coset_##C(void *s, uint64_t *x, unsigned log_n, const uint64_t *tw,           \
                            const uint64_t *cs_lo, const uint64_t *cs_hi, unsigned cs_k1,       \
                            int inverse);                                                       \
    int zp_cu_dev_join_##C(void *s, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n); \
    int zp_cu_dev_gather_##C(void *s, uint64_t *out, const uint64_t *w, const uint64_t *dens,    \
                             const uint32_t *pfx, size_t words);                                \
    int zp_cu_dev_probe_##C(void);  /* 0 if this build has kernels for the current device */
ZP_CU_DEV_API(bn254)
ZP_CU_DEV_API(bls12_381)

/* ---- the device runtime: what the executor of cu_exec.c needs from a device ----
 * Two implementations: CUDA (cu_device.cu) and the host emulation (cu_hostemu.cu: plain memory,
 * the kernels as loops, an emulated memory pool with a capacity, fault injection and a checker
 * of stream ordering). Streams and events are small indices (ZP_CU_S_*, ZP_CU_EV_*), created
 * once at open. Every call returns 0, ZP_EDEVICE (a device error: the context is dead),
 * -ENOMEM (device memory exhausted: the caller may retry smaller; cu_exec.c turns it into
 * ZP_EDEVICE at its boundary) or an input error (ZP_ETOOBIG, ZP_ECURVE). */
enum { ZP_CU_S_COMP = 0, ZP_CU_S_COPY = 1, ZP_CU_NSTREAM = 2 };
/* Events: the proof's own (one proof computes at a time), then per staged buffer set (set i:
 * ZP_CU_EV_SET0 + i * ZP_CU_SET_NEV + ZP_CU_SEV_*: recorded on the copy stream by the stage-in,
 * waited for by the compute of that set) and per resident key (its upload). */
enum { ZP_CU_MAX_SETS = 8, ZP_CU_MAX_KEYS = 8 };
enum { ZP_CU_SEV_H2D0, ZP_CU_SEV_A, ZP_CU_SEV_B, ZP_CU_SEV_C, ZP_CU_SEV_W, ZP_CU_SEV_SPARE, ZP_CU_SET_NEV };
enum {
    ZP_CU_EV_BASES, ZP_CU_EV_H2D0, ZP_CU_EV_A, ZP_CU_EV_B, ZP_CU_EV_C, ZP_CU_EV_W, ZP_CU_EV_NTT0,
    ZP_CU_EV_NTT1, ZP_CU_EV_M0, ZP_CU_EV_M1, ZP_CU_EV_M2, ZP_CU_EV_M3, ZP_CU_EV_M4, ZP_CU_EV_D2H0,
    ZP_CU_EV_D2H1, ZP_CU_EV_T0, ZP_CU_EV_T1,
    ZP_CU_EV_SET0,
    ZP_CU_EV_KEY0 = ZP_CU_EV_SET0 + ZP_CU_MAX_SETS * ZP_CU_SET_NEV,
    ZP_CU_NEV = ZP_CU_EV_KEY0 + ZP_CU_MAX_KEYS
};

typedef struct zp_cu_rt_ops {
    const char *name;                                          /* "cuda", "host-emulation" */
    void (*close)(void *rt);                                   /* synchronizes first */
    int (*mem_info)(void *rt, size_t *free_b, size_t *total_b);  /* cudaMemGetInfo */
    int (*pool_usage)(void *rt, size_t *used, size_t *reserved); /* stream-ordered pool */
    int (*pool_trim)(void *rt);            /* device sync, then give the pool's cache back */
    int (*dmalloc)(void *rt, void **p, size_t bytes);          /* cudaMalloc (not the pool) */
    int (*dfree)(void *rt, void *p);                           /* cudaFree (synchronizing) */
    int (*alloc)(void *rt, int s, void **p, size_t bytes);     /* cudaMallocAsync */
    int (*free)(void *rt, int s, void *p);                     /* cudaFreeAsync; p may be NULL */
    int (*h2d)(void *rt, int s, void *d, const void *h, size_t bytes);
    int (*d2h)(void *rt, int s, void *h, const void *d, size_t bytes);
    int (*record)(void *rt, int s, int ev);
    int (*wait)(void *rt, int s, int ev);                      /* stream s waits for ev */
    int (*sync)(void *rt, int s);                              /* host waits for stream s */
    int (*elapsed_ms)(void *rt, int ev0, int ev1, float *ms);
    int (*host_register)(void *rt, void *p, size_t len);       /* one cudaHostRegister */
    int (*host_unregister)(void *rt, void *p);
    size_t (*scratch_bytes)(void *rt, size_t pairs);           /* CUB scratch of an MSM batch */
    /* the per-curve drivers (curve 1 BN254, 2 BLS12-381), on stream s, device pointers */
    int (*msm)(void *rt, int s, int curve, zp_cu_msm_out_t *out, const void *points,
               const uint64_t *scalars, size_t n, const zp_cu_msm_tune_t *tune);
    int (*pow_table)(void *rt, int s, int curve, uint64_t *out, size_t count, const uint64_t *lo,
                     const uint64_t *hi, unsigned k1);
    /* x <- fft(scale(ifft(x))) (to the coset), or with inverse only scale(ifft(x)) (the
     * inverse off a coset); scale: cu_ntt.cuh ntt_inv_scaled */
    int (*coset)(void *rt, int s, int curve, uint64_t *x, unsigned log_n, const uint64_t *tw,
                 const uint64_t *cs_lo, const uint64_t *cs_hi, unsigned cs_k1, int inverse);
    int (*join)(void *rt, int s, int curve, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n);
    /* make the device current on the calling thread (cudaSetDevice: per thread; the executor
     * is called from the worker's main, staging and work threads) */
    int (*bind)(void *rt);
    /* (added) a compacted key's scalars: out[pfx[i] + j] = w[the j-th set wire of word i] (gather_fn) */
    int (*gather)(void *rt, int s, int curve, uint64_t *out, const uint64_t *w, const uint64_t *dens,
                  const uint32_t *pfx, size_t words);
} zp_cu_rt_ops_t;

/* what the executor needs to know of the device */
typedef struct {
    size_t total_mem;
    unsigned sms;                 /* streaming multiprocessors (parallelism of the reduction) */
    unsigned threads_per_sm;
} zp_cu_devinfo_t;

/* open a runtime: *ops, *rt; desc (may be NULL) gets the one-line banner */
int zp_cu_rt_cuda_open(const zp_cu_rt_ops_t **ops, void **rt, zp_cu_devinfo_t *info, const char *spec,
                       char *desc, size_t desc_cap);
int zp_cu_rt_emu_open(const zp_cu_rt_ops_t **ops, void **rt, zp_cu_devinfo_t *info, const zp_cu_emu_cfg_t *cfg,
                      char *desc, size_t desc_cap);
int zp_cu_rt_emu_stats(void *rt, zp_cu_emu_stats_t *st);
int zp_cu_rt_emu_hold(void *rt, int stream);
int zp_cu_rt_emu_wait_held(void *rt);
int zp_cu_rt_emu_release(void *rt);

#ifdef __cplusplus
}
#endif
#endif
