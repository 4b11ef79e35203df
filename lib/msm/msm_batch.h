/* msm_batch.h - same-base batched MSMs (same-circuit batching, issue 10 item 5): one set of
 * bases (a proving key's point arrays), m scalar vectors (m partitions' witnesses or h):
 *     out[j * nbases + b] = sum_i scalars[j][i] * points[b][i]   for j < m, b < nbases.
 * Job j's nbases results are contiguous, in the order of zp_msm_<G>_<C>_multi's out.
 * The point reads are shared across the m: a task (base b, window w, point range) reads each
 * point once and adds it into m bucket sets (job j's digit of window w picks the bucket),
 * with the single MSM's machinery otherwise unchanged (lib/msm/msm_impl.h): batched-affine
 * buckets with XYZZ overflow, Booth signed digits, the GLV endomorphism (each job's scalars
 * split into 128-bit halves and signs; beta x computed once per point for all m jobs).
 * Every job's result equals zp_msm_<G>_<C>_multi_ex on its own scalars (same opts).
 * Rules as msm.h: points affine ((0,0) = infinity), scalars standard form (read as 256-bit
 * integers), caller-owned 64-byte aligned scratch of
 * zp_msm_<G>_<C>_batch_scratch_size(n, nbases, m, nthreads, opts) bytes with nthreads ==
 * zp_pool_size(pool); opts may be NULL (defaults of msm.h; opts->c forces the window). Never
 * allocates, never fails. m = 1, n <= 8 and n > 2^30 run the plain multi-MSM per job.
 * Scalar classes: zeros cost one digit test per window; there is no per-job index (the
 * point order is shared), so ones and short scalars are handled as digits (a 1 is bucket 1
 * of window 0, short scalars reach only their low windows).
 * Scratch (for m > 1): [m * 2n halves of 16 bytes | m * 2n signs | nbases * n beta x]
 * (endomorphism only) [m * nbases * W * P Jacobian partial sums] [per thread: m bucket
 * working sets of msm_layout's per-thread part].
 * Tests: tests/test_msm_batch.c. Bench: zkpipe bench arith --batch M (cli/bench_batch.c). */
#ifndef ZP_MSM_BATCH_H
#define ZP_MSM_BATCH_H
#include "lib/msm/msm.h"

enum { ZP_MSM_BATCH_MAX = 8 };   /* jobs sharing one pass; larger m runs in groups of 8 */

#define ZP_MSM_BATCH_API(G, C)                                                                 \
    size_t zp_msm_##G##_##C##_batch_scratch_size(size_t n, unsigned nbases, unsigned m,        \
                                                 unsigned nthreads, const zp_msm_opts_t *opts); \
    void zp_msm_##G##_##C##_batch(zp_##G##_##C##_t *out, const zp_##G##a_##C##_t *const *points, \
                                  unsigned nbases, const zp_scalar_t *const *scalars, unsigned m, \
                                  size_t n, void *scratch, zp_pool_t *pool,                   \
                                  const zp_msm_opts_t *opts);

ZP_MSM_BATCH_API(g1, bn254)
ZP_MSM_BATCH_API(g1, bls12_381)
#endif
