/* backend_cuda.h - the CUDA backend of the GPU worker: zp_backend_cuda implements the
 * zp_backend_ops_t table of lib/groth16/groth16.h (the CPU backend zp_backend_cpu is its
 * reference). Built only when meson finds nvcc (option cuda); the device code sits behind the
 * C boundary cu_api.h.
 *   open:  ZP_ENODEV with a message when no device is usable (no driver, no GPU, ordinal out of
 *          range after CUDA_VISIBLE_DEVICES, or a GPU this build has no kernels for).
 *          Device: ZP_CUDA_DEVICE (ordinal or UUID) if set, else cfg->device; ordinals in PCI
 *          bus order (as nvidia-smi). Logs one banner line: device, memory, driver, runtime.
 *   any device error, from every op (load_key and out-of-device-memory included): ZP_EDEVICE;
 *          the worker then fails the task as a device failure and exits to be restarted clean.
 *   prove_g1 does not write h (h stays on the device for the H MSM; nothing reads it after);
 *          compute_h (a test verb, zp_backend_cuda_test_ops()) does.
 *   host_register: the worker should pin the arena and the key regions at start, before
 *          HELLO (zp_cuda_host_register_step below lets it do so in chunks while its loop
 *          stays alive); a second host_register of the same range is a no-op.
 * Also exported for the tests: the host-side helpers the backend uses around the device code.
 * Tests: tests/test_cuda.c (suite cuda, exits 77 without a device), tests/test_cuda_host.c. */
#ifndef ZP_BACKEND_CUDA_H
#define ZP_BACKEND_CUDA_H
#include "../../lib/groth16/groth16.h"
#include "cu_api.h"

extern const zp_backend_ops_t zp_backend_cuda;
/* (added) tests only: zp_backend_cuda over the host-emulated device (1 GiB; the worker with
 * ZP_TEST_CUDA_EMULATE=1) */
extern const zp_backend_ops_t zp_backend_cuda_emulated;
/* tests and benches only: compute_h and msm_g1 of this backend (the table is defined in
 * lib/groth16/backend_test.h; the worker does not include it and never calls these) */
struct zp_backend_test_ops;
const struct zp_backend_test_ops *zp_backend_cuda_test_ops(void);

/* The NTT power tables of a domain of 2^log_n (Montgomery Fr, host memory, one malloc in
 * *mem, free() it): tw = w^i for i < n/2 (w = w[log_n]); cs = g^i / n for i < n
 * (g = w[log_n + 1]). ZP_ETOOBIG if log_n + 1 exceeds the curve's two-adicity. */
int zp_cuda_pow_tables(zp_curve_id_t curve, unsigned log_n, zp_cu_pow_table_t *tw, zp_cu_pow_table_t *cs,
                       void **mem);
/* the same for a bellman key (BLS12-381, issue 29 item 4): tw = w^i with bellman's root w,
 * cs = 7^i / n, ics = 7^-i (7^n - 1)^-1 / n (cu_api.h zp_cu_prove_args_t) */
int zp_cuda_pow_tables_bellman(unsigned log_n, zp_cu_pow_table_t *tw, zp_cu_pow_table_t *cs, zp_cu_pow_table_t *ics,
                               void **mem);
/* H2D bandwidth (GB/s) of one bytes-long copy from pageable and from registered memory;
 * be must be a zp_backend_cuda backend */
int zp_cuda_bench_h2d(zp_backend_t *be, size_t bytes, double *gbps_pageable, double *gbps_pinned);
/* the backend over the host-emulated device runtime (cu_hostemu.cu): the whole executor runs
 * on the CPU, for tests and `scripts/gpu-check --dry-run` (emu may be NULL: defaults) */
int zp_cuda_open_emulated(zp_backend_t **be, const zp_backend_cfg_t *cfg, const zp_cu_emu_cfg_t *emu);
/* the executor context of a zp_backend_cuda backend (hooks, statistics, emulation stats) */
zp_cu_t *zp_cuda_cu(zp_backend_t *be);
/* pin [p, p + len) in steps of at most max_bytes (0 = all) from *done on, chunk bytes a
 * cudaHostRegister (0 = 64 GiB); registered as one range once *done == len (unregister p) */
int zp_cuda_host_register_step(zp_backend_t *be, void *p, size_t len, size_t chunk, size_t *done, size_t max_bytes);
/* out = sum_w 2^(c*w) win[w] (lib/ec, on the host) */
int zp_cuda_msm_combine(zp_curve_id_t curve, zp_g1_any_t *out, const zp_cu_msm_out_t *m);
#endif
