/* backend_test.h - the test and bench verbs of a backend, kept out of the production table.
 *
 * zp_backend_ops_t (groth16.h) is what the stage runtime (stage/backend.c) and the GPU worker
 * call: open/close, host (un)register, load_key, prove_g1. The verbs here exist only so that
 * tests and benches can check or time one piece of stage 2 on its own (the gpu step of
 * DESIGN.md "Proof math": h, then the G1 MSMs). As for the production table, the CPU backend
 * is the reference and the CUDA backend implements the same table.
 * They run on a backend opened through the production table of the same backend
 * (be from zp_backend_cpu.open goes with zp_backend_cpu_test_ops(), one from
 * zp_backend_cuda.open with zp_backend_cuda_test_ops() of gpu-worker/cuda/backend_cuda.h).
 * Production code (stage/, gpu-worker/worker.c, synth/, finalizer/) does not include this header.
 * Tests: tests/test_groth16.c (CPU), tests/test_cuda_exec.c and tests/test_cuda.c (CUDA). */
#ifndef ZP_GROTH16_BACKEND_TEST_H
#define ZP_GROTH16_BACKEND_TEST_H
#include "groth16.h"

typedef struct zp_backend_test_ops {
    const char *name;     /* "cpu", "cuda": the name of the production table it goes with */
    /* a, b, c: domain_size Montgomery values each (clobbered); h out: domain_size STANDARD
     * form (what prove_g1 computes before the H MSM) */
    int (*compute_h)(zp_backend_t *be, const zp_g16_key_t *k, zp_scalar_t *a, zp_scalar_t *b,
                     const zp_scalar_t *c, zp_scalar_t *h, zp_g16_times_t *t);
    /* generic G1 MSM over caller points (tests, benches): scalars standard form */
    int (*msm_g1)(zp_backend_t *be, zp_curve_id_t curve, zp_g1_any_t *out, const void *points,
                  const zp_scalar_t *scalars, size_t n);
    /* prove_g1_batch with its MSM strategy forced (added by batch): mode ZP_G16_BATCH_AUTO =
     * the production choice, _SHARED = every MSM same-base batched (lib/msm/msm_batch.h),
     * _PER_JOB = each job's MSMs on their own, _SHARED_WITNESS = those over the witnesses
     * (A+B1, C) batched and H per job (AUTO's choice on the CPU from 2^16 points). May be NULL. */
    int (*prove_g1_batch_mode)(zp_backend_t *be, const zp_g16_key_t *k, unsigned n, zp_g16_g1_job_t *jobs,
                               zp_g16_times_t *t, int mode);
    /* (added, issue 10 item 1) compute_h out of place: a_in, b_in, c only read, a and b work
     * buffers (clobbered), h out (equal to compute_h on copies, bit for bit). May be NULL. */
    int (*compute_h_from)(zp_backend_t *be, const zp_g16_key_t *k, const zp_scalar_t *a_in, const zp_scalar_t *b_in,
                          const zp_scalar_t *c, zp_scalar_t *a, zp_scalar_t *b, zp_scalar_t *h, zp_g16_times_t *t);
} zp_backend_test_ops_t;
enum { ZP_G16_BATCH_AUTO = 0, ZP_G16_BATCH_SHARED = 1, ZP_G16_BATCH_PER_JOB = 2, ZP_G16_BATCH_SHARED_WITNESS = 3 };

/* the test verbs of zp_backend_cpu (lib/groth16/backend_cpu.c) */
const zp_backend_test_ops_t *zp_backend_cpu_test_ops(void);
#endif
