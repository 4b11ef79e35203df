/* backend_cuda.h - the CUDA backend of the GPU worker: zp_backend_cuda implements the
 * zp_backend_ops_t table of lib/groth16/groth16.h (the CPU backend zp_backend_cpu is its
 * reference). Built only when meson finds nvcc (option cuda); the device code sits behind the
 * C boundary cu_api.h.
 *   open:  ZP_ENODEV with a message when no device is usable (no driver, no GPU, ordinal out of
 *          range after CUDA_VISIBLE_DEVICES, or a GPU this build has no kernels for).
 *   any device error: ZP_EDEVICE; the worker then exits and is restarted clean.
 * Also exported for the tests: the host-side helpers the backend uses around the device code.
 * Tests: tests/test_cuda.c (suite cuda, exits 77 without a device), tests/test_cuda_host.c. */
#ifndef ZP_BACKEND_CUDA_H
#define ZP_BACKEND_CUDA_H
#include "../../lib/groth16/groth16.h"
#include "cu_api.h"

extern const zp_backend_ops_t zp_backend_cuda;

/* The NTT power tables of a domain of 2^log_n (Montgomery Fr, host memory, one malloc in
 * *mem, free() it): tw = w^i for i < n/2 (w = w[log_n]); cs = g^i / n for i < n
 * (g = w[log_n + 1]). ZP_ETOOBIG if log_n + 1 exceeds the curve's two-adicity. */
int zp_cuda_pow_tables(zp_curve_id_t curve, unsigned log_n, zp_cu_pow_table_t *tw, zp_cu_pow_table_t *cs,
                       void **mem);
/* H2D bandwidth (GB/s) of one bytes-long copy from pageable and from registered memory;
 * be must be a zp_backend_cuda backend */
int zp_cuda_bench_h2d(zp_backend_t *be, size_t bytes, double *gbps_pageable, double *gbps_pinned);
/* out = sum_w 2^(c*w) win[w] (lib/ec, on the host) */
int zp_cuda_msm_combine(zp_curve_id_t curve, zp_g1_any_t *out, const zp_cu_msm_out_t *m);
#endif
