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
                            const uint64_t *cs_lo, const uint64_t *cs_hi, unsigned cs_k1);      \
    int zp_cu_dev_join_##C(void *s, uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n); \
    int zp_cu_dev_probe_##C(void);  /* 0 if this build has kernels for the current device */
ZP_CU_DEV_API(bn254)
ZP_CU_DEV_API(bls12_381)

#ifdef __cplusplus
}
#endif
#endif
